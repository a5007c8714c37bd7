package settle

import (
	"context"
	"fmt"
	"time"

	"github.com/batkube/batkube/pkg/store"
)

// Policy decides when a step may end. The broker calls Observe with every
// change of pods, nodes and pod groups (scheduling.k8s.io podgroups), in
// resourceVersion order, and Check whenever it
// has taken in the changes so far; a policy is used by one goroutine (the
// broker's) but may serve other goroutines on its own (Signals does).
type Policy interface {
	// Name names the policy in logs and summaries.
	Name() string
	// Observe takes in one change of a pod, a node or a pod group.
	Observe(c store.Change)
	// Check reports whether the scheduler is done at this instant.
	Check(ctx context.Context, st State) (Verdict, error)
	// Abilities says what else the policy does; read once per run.
	Abilities() Abilities
}

// Abilities is what a policy does beside Check, each field nil when it
// does not (the zero value: nothing more).
type Abilities struct {
	// Wake has a token when the verdict may have changed without any
	// change of the cluster (a scheduler's idle signal): a step's wait
	// also waits on it.
	Wake <-chan struct{}
	// Gate serves schedulers who should act only on a whole step: it is
	// opened once a step's events are all applied and the step waits for
	// the scheduler, and shut when the step ends. (A scheduler that read
	// the cluster half-way through a step would decide on a state that
	// never existed at any instant: runs would not be reproducible.)
	Gate Gate
	// Hold: the policy decides when the gangs' pod groups are attempted.
	// The broker then creates each gang's PodGroup held (a gang policy
	// whose minCount is one more than its pods, which the scheduler keeps
	// gated), tells the policy (Hold), and acts on the verdicts'
	// GroupActions.
	Hold func(GroupRef)
	// Probes counts the policy's looks at the scheduler so far (for
	// kube-scheduler, its metrics scrapes).
	Probes func() int
	// End tells the scheduler the simulation has ended (its idle signal
	// answers so).
	End func()
	// Listening reports whether the scheduler was heard from (its idle
	// signal) within d, which tells the broker it is alive.
	Listening func(d time.Duration) bool
}

// Gate is a policy's door for the schedulers it serves (Abilities.Gate).
type Gate interface {
	Open()
	Shut()
	// Deciding names a scheduler that was let through and has not said
	// it is done since ("" if none): a step must not end, even with
	// nothing pending, while one decides, or it would read the next
	// instant's writes half-way.
	Deciding() string
}

// State is what the broker knows when it asks.
type State struct {
	// RV is the resourceVersion of the latest pod or node change observed
	// (pod groups' changes aside).
	RV uint64
	// LastActivity is the wall-clock instant of the latest write to the
	// store of any resource (the scheduler's events and leases included)
	// that the broker has noticed.
	LastActivity time.Time
	// Since is when the step started waiting for the scheduler.
	Since time.Time
	// SchedulerPresent: a scheduler has shown itself (acted on a pod) and
	// still watches pods. Silence means nothing before that: a scheduler
	// that is starting, or waiting to win its leader election, is not done.
	SchedulerPresent bool
}

// Verdict is a policy's answer.
type Verdict struct {
	// Done: the step may end.
	Done bool
	// Exact: Done because the scheduler is known to have nothing left to
	// do at this instant, not because it was silent.
	Exact bool
	// Unproven, with Done and not Exact, says why the policy ends the step
	// without a proof that the scheduler is done (a scheduler whose state
	// cannot be read completely): the step is reported as not exact.
	Unproven string
	// Groups, when not Done, are the pod groups the broker must release
	// (Abilities.Hold) before asking again, so that the scheduler attempts
	// them at this instant (see package kubescheduler).
	Groups []GroupAction
	// RetryAfter, when not Done, is when to ask again if nothing changes
	// meanwhile (0: at the next change only).
	RetryAfter time.Duration
	// Waiting says, when not Done, what the scheduler is still doing (for
	// logs and error messages).
	Waiting string
}

// Barrier is a process beside the scheduler that a step waits for whether
// pods are pending or not: controllers, which may create pods at any
// change (package controllers). A step ends once the barrier and the
// policy agree at one state of the store.
type Barrier interface {
	Name() string
	Check(ctx context.Context) (BarrierVerdict, error)
}

// BarrierVerdict is a barrier's answer: Idle, or what the process (or the
// API) is still doing (Waiting); Unproven, with Idle, says why the barrier
// cannot tell on this system, and the step is then not exact.
type BarrierVerdict struct {
	Idle     bool
	Waiting  string
	Unproven string
	// RV is the store's resourceVersion the verdict holds at: a write
	// since voids it.
	RV uint64
}

// GroupRef names a pod group (scheduling.k8s.io PodGroup).
type GroupRef struct{ Namespace, Name string }

func (g GroupRef) String() string { return g.Namespace + "/" + g.Name }

// GroupAction is a release of one of the pod groups the broker holds: it
// sets the gang's minCount to its pods' number, so that the scheduler
// attempts it, all its pods at once.
type GroupAction struct {
	Group GroupRef
	// Renew first deletes the group and creates it again held (minCount
	// one more than its pods): a group that has been released already
	// waits on the scheduler's back-off, which no change of the group
	// shortens; a group that appears is gated with every pod it has.
	Renew bool
}

func (a GroupAction) String() string {
	if a.Renew {
		return "renew and release " + a.Group.String()
	}
	return "release " + a.Group.String()
}

// Reason tells how a step's wait for the scheduler ended.
type Reason int

const (
	// NothingPending: no pod waited for a scheduler, so there was nothing
	// to wait for.
	NothingPending Reason = iota
	// Idle: the policy knew the scheduler had nothing left to do (exact).
	Idle
	// Silent: the API was silent for the quiet window (not exact).
	Silent
	// MaxWait: the step's bound on wall time passed (not exact).
	MaxWait
	// Unproven: the policy ended the step without a proof that the
	// scheduler was done (Verdict.Unproven; not exact).
	Unproven
)

func (r Reason) String() string {
	switch r {
	case NothingPending:
		return "nothing-pending"
	case Idle:
		return "idle"
	case Silent:
		return "silent"
	case MaxWait:
		return "max-wait"
	case Unproven:
		return "unproven"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Stats counts the steps of a run by how their wait ended.
type Stats struct {
	// Policy names the policy the run used (Auto names the ones it used).
	Policy string `json:"policy"`
	// Steps waited for nobody (nothing pending), or ended when the
	// scheduler was known idle (exact), on silence (quiet window), on
	// the bound of a step's wall time (settle-max), or on a policy's
	// verdict that could not be proven (unproven).
	NothingPending int `json:"nothingPending"`
	Idle           int `json:"idle"`
	Quiet          int `json:"quiet"`
	MaxWait        int `json:"maxWait"`
	Unproven       int `json:"unproven"`
	// Releases counts the pod groups released at a policy's request, of
	// which Renewals were renewed first (Verdict.Groups).
	Releases int `json:"releases,omitempty"`
	Renewals int `json:"renewals,omitempty"`
	// Checks counts the times the broker asked the policy; Probes the
	// times the policy looked at the scheduler (for kube-scheduler, its
	// metrics scrapes).
	Checks int `json:"checks"`
	Probes int `json:"probes"`
	// BarrierChecks counts the checks of the controllers' barrier
	// (Barrier); PauseReleases the times their scheduling loops' pauses
	// were released once the barrier held (simclock.Pause).
	BarrierChecks int `json:"barrierChecks,omitempty"`
	PauseReleases int `json:"pauseReleases,omitempty"`
	// TimedPauses counts the instants whose bound of pause releases was
	// reached: the pauses then took their own time (releasePauses).
	TimedPauses int `json:"timedPauses,omitempty"`
	// Imminent counts the timers' instants, less than Batsim's resolution
	// after a step's, that fired while the step waited (Cluster.FireImminent).
	Imminent int `json:"imminent,omitempty"`
}

// Add counts one step ended for reason r.
func (s *Stats) Add(r Reason) {
	switch r {
	case NothingPending:
		s.NothingPending++
	case Idle:
		s.Idle++
	case Silent:
		s.Quiet++
	case MaxWait:
		s.MaxWait++
	case Unproven:
		s.Unproven++
	}
}

// Inexact counts the steps that ended without knowing the scheduler was
// done.
func (s Stats) Inexact() int { return s.Quiet + s.MaxWait + s.Unproven }

// Verdict says in a few words whether every step was exact ("every one
// exact", or "N not proven exact"), for the run's summary and report.
func (s Stats) Verdict() string {
	if n := s.Inexact(); n > 0 {
		return fmt.Sprintf("%d not proven exact", n)
	}
	return "every one exact"
}

// Steps counts the steps, however they ended.
func (s Stats) Steps() int { return s.NothingPending + s.Idle + s.Quiet + s.MaxWait + s.Unproven }
