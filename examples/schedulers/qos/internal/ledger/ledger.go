package ledger

import (
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Phase is where a pod stands in its life.
type Phase int

// The phases, in the order a pod goes through them.
const (
	Pending Phase = iota // created, waiting in the scheduler's queue
	Binding              // the scheduler is binding it, or it is bound and not started yet
	Running              // started
	Ended                // finished, failed or deleted
)

func (p Phase) String() string {
	switch p {
	case Pending:
		return "Pending"
	case Binding:
		return "Binding"
	case Running:
		return "Running"
	case Ended:
		return "Ended"
	}
	return "Phase(?)"
}

// Times are the time pods spent waiting, binding and running.
type Times struct {
	Waiting, Binding, Running time.Duration
}

// Total is the time the pods have existed.
func (t Times) Total() time.Duration { return t.Waiting + t.Binding + t.Running }

// QoS is the fraction of Total spent running; false when no time elapsed.
func QoS(t Times) (float64, bool) {
	total := t.Total()
	if total <= 0 {
		return 0, false
	}
	return t.Running.Seconds() / total.Seconds(), true
}

// TTV is the time to violation in seconds: the waiting time that can still
// accumulate before QoS falls below slo (negative once it has).
func TTV(t Times, slo float64) float64 {
	return t.Running.Seconds()/slo - t.Total().Seconds()
}

// Identity says which controller a pod belongs to.
type Identity struct {
	// Controller names the controller, unique in the cluster.
	Controller string
	// SLO is the controller's objective, in (0, 1]; the latest pod
	// admitted sets it.
	SLO float64
	// Ephemeral marks a controller that stands for its single pod (no
	// controller was found): it is forgotten once the pod has ended.
	Ephemeral bool
}

// Account is a controller's account at an instant.
type Account struct {
	Controller string
	SLO        float64
	At         time.Time
	Times
	// Pods counts its pods in each phase (Pending, Binding, Running) at At.
	Pods [Ended]int
}

// QoS is the account's running fraction; false when no time elapsed.
func (a Account) QoS() (float64, bool) { return QoS(a.Times) }

// TTV is the account's time to violation in seconds.
func (a Account) TTV() float64 { return TTV(a.Times, a.SLO) }

// Urgency is what orders pods: their controller's TTV and SLO.
type Urgency struct {
	TTV, SLO float64
}

// Ledger holds the accounts. The zero value is not usable: call New.
type Ledger struct {
	mu          sync.Mutex
	pods        map[types.UID]*pod
	controllers map[string]*controller
}

type pod struct {
	ctrl  *controller
	phase Phase
	since time.Time // start of the current phase
}

type controller struct {
	key       string
	slo       float64
	ephemeral bool
	closed    Times // of the phases that have ended
	open      map[*pod]struct{}
	gen       uint64 // bumped at every change of the controller
	// cache is the account at cache.At for generation cacheGen.
	cache    Account
	cacheGen uint64
	cached   bool
}

// New returns an empty ledger.
func New() *Ledger {
	return &Ledger{pods: map[types.UID]*pod{}, controllers: map[string]*controller{}}
}

// Admit registers a pod, pending since created, under its controller, and
// reports whether it was new. For a known pod it only updates the SLO of
// its controller: a pod never changes controller.
func (l *Ledger) Admit(uid types.UID, id Identity, created time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.pods[uid]; ok {
		if p.ctrl.slo != id.SLO {
			p.ctrl.slo = id.SLO
			p.ctrl.gen++
		}
		return false
	}
	c := l.controllers[id.Controller]
	if c == nil {
		c = &controller{key: id.Controller, ephemeral: id.Ephemeral, open: map[*pod]struct{}{}}
		l.controllers[id.Controller] = c
	}
	c.slo = id.SLO
	p := &pod{ctrl: c, phase: Pending, since: created}
	c.open[p] = struct{}{}
	c.gen++
	l.pods[uid] = p
	return true
}

// Move moves a known pod into phase to at instant at, closing the time of
// its current phase, and reports whether it did. Moves go forward
// (Pending, Binding, Running, Ended, skipping any) except Binding back to
// Pending (a binding that failed); any other move, and a move of an
// unknown pod, is ignored. An instant before the current phase began
// counts as its beginning.
func (l *Ledger) Move(uid types.UID, to Phase, at time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.pods[uid]
	if !ok || !(to > p.phase || (p.phase == Binding && to == Pending)) {
		return false
	}
	c := p.ctrl
	if d := at.Sub(p.since); d > 0 {
		switch p.phase {
		case Pending:
			c.closed.Waiting += d
		case Binding:
			c.closed.Binding += d
		case Running:
			c.closed.Running += d
		}
		p.since = at
	}
	p.phase = to
	c.gen++
	if to == Ended {
		delete(c.open, p)
		delete(l.pods, uid)
		if c.ephemeral && len(c.open) == 0 {
			delete(l.controllers, c.key)
		}
	}
	return true
}

// PhaseOf returns the phase of a known pod.
func (l *Ledger) PhaseOf(uid types.UID) (Phase, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.pods[uid]
	if !ok {
		return 0, false
	}
	return p.phase, true
}

// Open returns the pods known and not ended.
func (l *Ledger) Open() []types.UID {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]types.UID, 0, len(l.pods))
	for uid := range l.pods {
		out = append(out, uid)
	}
	return out
}

// Urgencies returns the urgency at now of the controllers of two pods,
// each with whether the pod is known, under one lock.
func (l *Ledger) Urgencies(a, b types.UID, now time.Time) (ua, ub Urgency, okA, okB bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ua, okA = l.urgencyLocked(a, now)
	ub, okB = l.urgencyLocked(b, now)
	return ua, ub, okA, okB
}

func (l *Ledger) urgencyLocked(uid types.UID, now time.Time) (Urgency, bool) {
	p, ok := l.pods[uid]
	if !ok {
		return Urgency{}, false
	}
	a := p.ctrl.accountLocked(now)
	return Urgency{TTV: a.TTV(), SLO: a.SLO}, true
}

// Accounts returns the account at now of every controller, by name.
func (l *Ledger) Accounts(now time.Time) []Account {
	l.mu.Lock()
	out := make([]Account, 0, len(l.controllers))
	for _, c := range l.controllers {
		out = append(out, c.accountLocked(now))
	}
	l.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Controller < out[j].Controller })
	return out
}

// accountLocked computes the controller's account at now, or returns the
// cached one if neither now nor the controller changed since.
func (c *controller) accountLocked(now time.Time) Account {
	if c.cached && c.cacheGen == c.gen && c.cache.At.Equal(now) {
		return c.cache
	}
	a := Account{Controller: c.key, SLO: c.slo, At: now, Times: c.closed}
	for p := range c.open {
		d := max(now.Sub(p.since), 0)
		switch p.phase {
		case Pending:
			a.Waiting += d
		case Binding:
			a.Binding += d
		case Running:
			a.Running += d
		}
		a.Pods[p.phase]++
	}
	c.cache, c.cacheGen, c.cached = a, c.gen, true
	return a
}
