package settle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/store"
)

// IdlePath is where a scheduler signals that it is idle.
const IdlePath = "/batkube/v1/idle"

// IdleRequest is the body of a POST to IdlePath.
type IdleRequest struct {
	// Scheduler names the scheduler: any stable string. Once a scheduler
	// has signalled, every step waits for its signal.
	Scheduler string `json:"scheduler"`
	// ResourceVersion says that the scheduler has seen every change of
	// pods and nodes up to this resourceVersion and has nothing left to do
	// with them. A scheduler that lists pods and nodes gives the smaller of
	// the two lists' resourceVersions; one that acts on watch events gives
	// the resourceVersion of the last pod or node event it has handled.
	ResourceVersion string `json:"resourceVersion"`
	// Wait makes the answer wait until pods or nodes have changed after
	// ResourceVersion and the broker waits for the schedulers, having
	// applied every event of the current instant (or the simulation ends),
	// so that a scheduler can loop on: list, bind, signal and wait, and
	// always decide on the whole state of an instant.
	Wait bool `json:"wait,omitempty"`
}

// IdleResponse answers a POST to IdlePath.
type IdleResponse struct {
	// ResourceVersion is the latest change of pods or nodes the broker has
	// seen.
	ResourceVersion string `json:"resourceVersion"`
	// Latest is the latest change of each resource the broker follows,
	// by resource ("pods", "nodes", "podgroups.scheduling.k8s.io"; none
	// for a resource not changed yet): a scheduler that follows each with
	// an informer (one watch each, no selector) has seen everything up to
	// ResourceVersion once every informer has delivered its resource's.
	// One informer's progress says nothing of another's: the pods'
	// informer may deliver a pod created after the nodes before the
	// nodes' informer delivers them.
	Latest map[string]string `json:"latest,omitempty"`
	// Ended: the simulation is over.
	Ended bool `json:"ended,omitempty"`
}

// Signals collects the idle signals of the schedulers that send them, and
// is the Policy that waits for them: a step ends once every scheduler that
// has signalled has said it is idle having seen the step's latest change of
// pods and nodes. It also serves IdlePath (it is an
// apiserver.NonResourceHandler).
type Signals struct {
	mu sync.Mutex
	// idleAt is, per scheduler, the resourceVersion of its latest signal.
	idleAt map[string]uint64
	// latest is the latest pod or node change observed; changed is closed
	// and replaced when it moves, ended when the simulation is over.
	latest  uint64
	changed chan struct{}
	// latestOf is the latest change of each resource (IdleResponse.Latest).
	latestOf map[schema.GroupResource]uint64
	ended    bool
	// waiting counts the schedulers waiting on the signal (long polls
	// open); lastSignal is when the latest signal came or wait ended.
	waiting    int
	lastSignal time.Time
	// open: the broker waits for the schedulers (see Gate); waits end
	// only then.
	open bool
	// wake has a token when a signal arrived since the broker last looked.
	wake chan struct{}
	// deciding holds the schedulers whose wait was answered and who have
	// not signalled since: they are reading the cluster.
	deciding map[string]bool
	// answered is, per scheduler, the resourceVersion of its latest
	// answer; warned, those told that they signal older ones.
	answered map[string]uint64
	warned   map[string]bool

	// Logger, if set (before serving), gets a warning for a scheduler
	// that signals a resourceVersion older than its latest answer.
	Logger *slog.Logger
}

// NewSignals returns an empty Signals.
func NewSignals() *Signals {
	return &Signals{idleAt: map[string]uint64{}, latestOf: map[schema.GroupResource]uint64{}, deciding: map[string]bool{}, answered: map[string]uint64{}, warned: map[string]bool{},
		changed: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// Name implements Policy.
func (s *Signals) Name() string { return "signal" }

// Active reports whether any scheduler has signalled.
func (s *Signals) Active() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.idleAt) > 0
}

// Observe implements Policy.
func (s *Signals) Observe(c store.Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.RV > s.latestOf[c.GR] {
		s.latestOf[c.GR] = c.RV
	}
	if c.RV > s.latest {
		s.latest = c.RV
		s.wakeLocked()
	}
}

// Abilities implements Policy: the schedulers' signals wake a step's
// wait, which they make only on whole steps (Gate), and tell whether a
// scheduler is alive; End answers their waits.
func (s *Signals) Abilities() Abilities {
	return Abilities{Wake: s.wake, Gate: s, End: s.End, Listening: s.Listening}
}

// Open implements Gate: the step's events are applied and the broker waits
// for the schedulers; their waits may end.
func (s *Signals) Open() {
	s.raise(&s.open)
}

// Shut implements Gate: the step is over.
func (s *Signals) Shut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = false
}

// Deciding implements Gate: the first (by name) of the schedulers whose
// wait was answered and who have not signalled since.
func (s *Signals) Deciding() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first string
	for name := range s.deciding {
		if first == "" || name < first {
			first = name
		}
	}
	return first
}

// End wakes the waiting schedulers: the simulation is over.
func (s *Signals) End() {
	s.raise(&s.ended)
}

// Check implements Policy.
func (s *Signals) Check(_ context.Context, st State) (Verdict, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.idleAt) == 0 {
		return Verdict{Waiting: "no scheduler has signalled"}, nil
	}
	var late []string
	for name, rv := range s.idleAt {
		if rv < st.RV {
			late = append(late, fmt.Sprintf("%s (idle at %d)", name, rv))
		}
	}
	if len(late) > 0 {
		slices.Sort(late)
		return Verdict{Waiting: fmt.Sprintf("no idle signal since resourceVersion %d from %s", st.RV, strings.Join(late, ", "))}, nil
	}
	return Verdict{Done: true, Exact: true}, nil
}

// Signal records that scheduler is idle having seen rv.
func (s *Signals) Signal(scheduler string, rv uint64) {
	s.mu.Lock()
	s.signalLocked(scheduler, rv)
	s.mu.Unlock()
	s.wakeBroker()
}

// signalLocked records a signal; s.mu is held.
func (s *Signals) signalLocked(scheduler string, rv uint64) {
	if cur, ok := s.idleAt[scheduler]; !ok || rv > cur {
		s.idleAt[scheduler] = rv
	}
	delete(s.deciding, scheduler)
	s.lastSignal = time.Now()
}

// wakeBroker tells the step's wait that a signal came.
func (s *Signals) wakeBroker() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Listening reports whether a scheduler waits on the idle signal or sent
// one within the last d: alive, whether or not it watches pods (a script
// that lists pods and signals does not).
func (s *Signals) Listening(d time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting > 0 || (!s.lastSignal.IsZero() && time.Since(s.lastSignal) < d)
}

// Handles implements apiserver.NonResourceHandler.
func (s *Signals) Handles(path string) bool { return path == IdlePath }

func (s *Signals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed, only POST", r.Method))
		return
	}
	var req IdleRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("reading the idle signal: %w", err))
		return
	}
	if req.Scheduler == "" {
		writeError(w, http.StatusBadRequest, errors.New(`the idle signal needs a "scheduler" name`))
		return
	}
	rv, err := strconv.ParseUint(req.ResourceVersion, 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf(`"resourceVersion" %q: want the resourceVersion of the latest change seen`, req.ResourceVersion))
		return
	}
	s.warnIfBehind(req.Scheduler, rv)
	if req.Wait {
		defer func() {
			s.mu.Lock()
			s.waiting--
			s.lastSignal = time.Now()
			s.mu.Unlock()
		}()
	}
	// The signal and the first look at the answer under one lock: a
	// signal answered at once goes from deciding to deciding, never seen
	// done by the step in between (it would end, and the scheduler read
	// the next instant's writes half-way).
	s.mu.Lock()
	s.signalLocked(req.Scheduler, rv)
	if req.Wait {
		s.waiting++
	}
	woke := false
	for { // s.mu is held here
		latest, ended, open, changed := s.latest, s.ended, s.open, s.changed
		answer := !req.Wait || (latest > rv && open) || ended
		var resp IdleResponse
		if answer {
			resp = IdleResponse{ResourceVersion: strconv.FormatUint(latest, 10), Ended: ended, Latest: s.latestByResourceLocked()}
			if req.Wait && !ended {
				// Let through: the step waits for its next signal
				// before it may end (Deciding), so that no write of
				// the next instant lands while it reads this one.
				s.deciding[req.Scheduler] = true
				s.answered[req.Scheduler] = latest
			}
		}
		s.mu.Unlock()
		if !woke {
			s.wakeBroker() // the signal, seen with the deciding mark if answered
			woke = true
		}
		if answer {
			writeJSON(w, http.StatusOK, resp)
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
		s.mu.Lock()
	}
}

// latestByResourceLocked is IdleResponse.Latest; s.mu is held.
func (s *Signals) latestByResourceLocked() map[string]string {
	out := make(map[string]string, len(s.latestOf))
	for gr, rv := range s.latestOf {
		out[gr.String()] = strconv.FormatUint(rv, 10)
	}
	return out
}

// warnIfBehind warns, once per scheduler, of a signal older than the
// scheduler's latest answer: such a wait is answered at once, so the
// scheduler loops without end and every step waits for it until
// --settle-max (a script that read no resourceVersion from its lists did).
func (s *Signals) warnIfBehind(scheduler string, rv uint64) {
	s.mu.Lock()
	last, ok := s.answered[scheduler]
	warn := ok && rv < last && !s.warned[scheduler] && s.Logger != nil
	if warn {
		s.warned[scheduler] = true
	}
	s.mu.Unlock()
	if warn {
		s.Logger.Warn("a scheduler signals idle at a resourceVersion older than the server's latest answer to it: it is answered at once, loops, and every step waits for it until --settle-max; signal the resourceVersion of what it has seen (at least the answer's)",
			"scheduler", scheduler, "resourceVersion", rv, "answered", last)
	}
}

// errorBody is the body of an error answer.
type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, errorBody{Error: err.Error()})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// raise sets flag, a field of s, and wakes the waiters if it was not set.
func (s *Signals) raise(flag *bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !*flag {
		*flag = true
		s.wakeLocked()
	}
}

// wakeLocked wakes every wait on s.changed; s.mu is held.
func (s *Signals) wakeLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}
