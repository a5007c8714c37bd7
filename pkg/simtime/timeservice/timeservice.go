package timeservice

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/batkube/batkube/pkg/simtime/simclock"
)

// Path is where the clock is served.
const Path = "/batkube/v1/clock"

// UntilHeader carries, in a wait's response headers, the instant the wait
// waits for (RFC 3339 with nanoseconds); it is sent before the wait ends.
const UntilHeader = "Batkube-Clock-Until"

// Query parameters of a wait.
const (
	ParamUntil = "until"
	ParamAfter = "after"
	// ParamKind is the kind of a wait's timer (simclock.Kind: "wake", the
	// default, "work", "passive" or "pause").
	ParamKind = "kind"
)

// Reading is a reading of the simulated clock.
type Reading struct {
	// Seconds is the simulated time since the start of the simulation, in
	// seconds, as Batsim counts it.
	Seconds float64 `json:"seconds"`
	// Nanoseconds is the same, exact.
	Nanoseconds int64 `json:"nanoseconds"`
	// Time is the simulated instant on the clock's epoch (RFC 3339 with
	// nanoseconds on the wire): what object timestamps use.
	Time time.Time `json:"time"`
	// Until is, for a wait, the instant it waited for.
	Until *time.Time `json:"until,omitempty"`
	// Released says that the wait, a pause, ended before its instant: the
	// broker released it (simclock.Clock.ReleasePauses).
	Released bool `json:"released,omitempty"`
}

// Error is the body of an error response.
type Error struct {
	Error string `json:"error"`
}

// Handler serves a simclock.Clock under Path. It implements
// apiserver.NonResourceHandler.
type Handler struct {
	clock *simclock.Clock
	park  Parker
	// ended is closed by End.
	ended     chan struct{}
	endedOnce sync.Once
}

// Parker tells the server that a request waits, parked: park takes it out
// of the requests in progress, unpark puts it back (each at most once, in
// that order; unpark without park does nothing). A wait parks once its
// timer is registered, and its timer unparks it as it fires, so that a
// request is always either counted in progress or waiting on a pending
// timer that the broker knows of (package settle/controllers).
type Parker func(r *http.Request) (park, unpark func())

// NewHandler returns a handler serving c; park, if not nil, parks its
// waits.
func NewHandler(c *simclock.Clock, park Parker) *Handler {
	return &Handler{clock: c, park: park, ended: make(chan struct{})}
}

// End ends the waits in progress with an empty body, and answers those to
// come 503 Service Unavailable: the simulation is over and its time will
// not move any more, so that no wait holds the server's shutdown.
func (h *Handler) End() { h.endedOnce.Do(func() { close(h.ended) }) }

// errEnded is the error of the waits after End.
var errEnded = errors.New("the simulation has ended: simulated time will not move any more")

// Handles reports whether path is Path.
func (h *Handler) Handles(path string) bool { return path == Path }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed, only GET", r.Method))
		return
	}
	at, kind, wait, err := h.parseWait(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if !wait {
		writeJSON(w, http.StatusOK, h.reading(h.clock.Now(), nil))
		return
	}
	select {
	case <-h.ended:
		writeError(w, http.StatusServiceUnavailable, errEnded)
		return
	default:
	}
	park, unpark := func() {}, func() {}
	if h.park != nil {
		park, unpark = h.park(r)
	}
	park()
	t := h.clock.NewTimerOf(kind, at, unpark)
	w.Header().Set(UntilHeader, at.Format(time.RFC3339Nano))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	select {
	case now := <-t.C: // already reached
		_ = json.NewEncoder(w).Encode(h.reading(now, &at))
		return
	default:
	}
	// Acknowledge the registration before waiting: the client then knows
	// the instant even if the connection breaks.
	_ = http.NewResponseController(w).Flush() // a writer that cannot flush only delays the headers
	var now time.Time
	select {
	case now = <-t.C:
	case <-h.ended:
		if t.Stop() {
			unpark()
			return // the headers are out: an empty body, which no client takes for a reading
		}
		now = <-t.C // it fired meanwhile
	case <-r.Context().Done():
		if t.Stop() {
			unpark()
			return // the client went away: no timer is left behind
		}
		now = <-t.C // it fired meanwhile
	}
	_ = json.NewEncoder(w).Encode(h.reading(now, &at))
}

// parseWait reads the query: no parameter is a plain reading, until or after
// a wait for the instant returned, of the kind given (Wake by default).
func (h *Handler) parseWait(q url.Values) (at time.Time, kind simclock.Kind, wait bool, err error) {
	for k, vs := range q {
		if k != ParamUntil && k != ParamAfter && k != ParamKind {
			return time.Time{}, 0, false, fmt.Errorf("unknown parameter %q (want %q or %q, and %q)", k, ParamUntil, ParamAfter, ParamKind)
		}
		if len(vs) != 1 {
			return time.Time{}, 0, false, fmt.Errorf("parameter %q given %d times", k, len(vs))
		}
	}
	_, until := q[ParamUntil]
	_, after := q[ParamAfter]
	if until && after {
		return time.Time{}, 0, false, fmt.Errorf("give %q or %q, not both", ParamUntil, ParamAfter)
	}
	if v, ok := q[ParamKind]; ok {
		if !until && !after {
			return time.Time{}, 0, false, fmt.Errorf("parameter %q without %q or %q", ParamKind, ParamUntil, ParamAfter)
		}
		if kind, err = simclock.ParseKind(v[0]); err != nil {
			return time.Time{}, 0, false, fmt.Errorf("parameter %q: %w", ParamKind, err)
		}
	}
	if v, ok := q[ParamUntil]; ok {
		at, err := parseInstant(v[0], h.clock.Epoch())
		if err != nil {
			return time.Time{}, 0, false, fmt.Errorf("parameter %q: %w", ParamUntil, err)
		}
		return at, kind, true, nil
	}
	if v, ok := q[ParamAfter]; ok {
		d, err := parseDuration(v[0])
		if err != nil {
			return time.Time{}, 0, false, fmt.Errorf("parameter %q: %w", ParamAfter, err)
		}
		return h.clock.Now().Add(d), kind, true, nil
	}
	return time.Time{}, 0, false, nil
}

func (h *Handler) reading(now time.Time, until *time.Time) Reading {
	d := now.Sub(h.clock.Epoch())
	return Reading{Seconds: d.Seconds(), Nanoseconds: int64(d), Time: now, Until: until, Released: until != nil && now.Before(*until)}
}

// parseInstant reads an RFC 3339 time or protocol seconds since the epoch.
func parseInstant(v string, epoch time.Time) (time.Time, error) {
	if strings.ContainsAny(v, "T:") {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("not an RFC 3339 time: %w", err)
		}
		return t, nil
	}
	s, err := parseSeconds(v)
	if err != nil {
		return time.Time{}, err
	}
	return epoch.Add(simclock.FromSeconds(s)), nil
}

// parseDuration reads a Go duration or a number of seconds.
func parseDuration(v string) (time.Duration, error) {
	if d, err := time.ParseDuration(v); err == nil {
		return d, nil
	}
	s, err := parseSeconds(v)
	if err != nil {
		return 0, errors.New("neither a duration (\"1.5s\") nor a number of seconds")
	}
	if s < 0 {
		return -simclock.FromSeconds(-s), nil
	}
	return simclock.FromSeconds(s), nil
}

func parseSeconds(v string) (float64, error) {
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(s) || math.IsInf(s, 0) {
		return 0, fmt.Errorf("%q is not a finite number of seconds", v)
	}
	return s, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, Error{Error: "timeservice: " + err.Error()})
}
