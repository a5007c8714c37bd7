package settle

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/store"
)

// TestLabel: a step is exact only when the policy and the controllers'
// barrier are both proven; otherwise it says why, or that it went by
// silence.
func TestLabel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		v       Verdict
		barrier string
		want    Reason
		why     string
	}{
		{"both proven", Verdict{Done: true, Exact: true}, "", Idle, ""},
		{"barrier unproven", Verdict{Done: true, Exact: true}, "no sock_diag", Unproven, "no sock_diag"},
		{"policy unproven", Verdict{Done: true, Unproven: "metrics incomplete"}, "", Unproven, "metrics incomplete"},
		{"silence", Verdict{Done: true}, "", Silent, ""},
	} {
		if got, why := label(tc.v, tc.barrier); got != tc.want || why != tc.why {
			t.Errorf("%s: label = %v, %q; want %v, %q", tc.name, got, why, tc.want, tc.why)
		}
	}
}

// fakeCluster is a cluster whose writes are scripted: each TakeIn takes
// the next count of changes (0 once the script is over).
type fakeCluster struct {
	pending int
	takes   []int
	rv      uint64
	// boundAt, when positive, is the TakeIn after which nothing is
	// pending (the scheduler's bindings taken in).
	boundAt int
	calls   int
	// imminent scripts FireImminent's answers, one a call: noTimer,
	// aTimer (a controller's) or aWake (a scheduler's).
	imminent []imminentTimer
}

type imminentTimer int

const (
	noTimer imminentTimer = iota
	aTimer
	aWake
)

func (c *fakeCluster) TakeIn(context.Context) (int, error) {
	if c.calls++; c.calls == c.boundAt {
		c.pending = 0
	}
	if len(c.takes) == 0 {
		return 0, nil
	}
	n := c.takes[0]
	c.takes = c.takes[1:]
	c.rv += uint64(n)
	return n, nil
}
func (c *fakeCluster) Written() <-chan struct{}     { return nil }
func (c *fakeCluster) Terminating() <-chan struct{} { return nil }
func (c *fakeCluster) Pending() int                 { return c.pending }
func (c *fakeCluster) SchedulerPresent() bool       { return true }
func (c *fakeCluster) CheckScheduler() error        { return nil }
func (c *fakeCluster) ReleaseGroups(context.Context, []GroupAction) error {
	return nil
}
func (c *fakeCluster) FireImminent() (fired, wake bool) {
	if len(c.imminent) == 0 {
		return false, false
	}
	t := c.imminent[0]
	c.imminent = c.imminent[1:]
	return t != noTimer, t == aWake
}
func (c *fakeCluster) OwedInWallTime() string { return "" }
func (c *fakeCluster) StoreRV() uint64        { return c.rv }
func (c *fakeCluster) WatchedRV() uint64      { return c.rv }

type stillClock struct{}

func (stillClock) Elapsed() time.Duration                   { return 0 }
func (stillClock) Pauses() int                              { return 0 }
func (stillClock) ReleasePauses() int                       { return 0 }
func (stillClock) TimePauses() int                          { return 0 }
func (stillClock) TimerActivity() (uint64, <-chan struct{}) { return 0, nil }

// countingPolicy says done and exact, and counts its checks.
type countingPolicy struct{ checks int }

func (p *countingPolicy) Name() string         { return "counting" }
func (p *countingPolicy) Abilities() Abilities { return Abilities{} }
func (p *countingPolicy) Observe(store.Change) {}
func (p *countingPolicy) Check(context.Context, State) (Verdict, error) {
	p.checks++
	return Verdict{Done: true, Exact: true}, nil
}

// TestWaitVoidsAVerdictAChangeContradicts: a Done verdict is taken only
// if nothing was written while the policy looked; with nothing pending
// and no barrier, the step ends at once without asking.
func TestWaitVoidsAVerdictAChangeContradicts(t *testing.T) {
	p := &countingPolicy{}
	s := NewSettler(p, SettlerOptions{Clock: stillClock{}, MaxSettle: time.Hour})
	// Takes: the wait's first, the loop's first, then a binding landing
	// while the policy looked (voids it), then nothing.
	c := &fakeCluster{pending: 1, takes: []int{0, 0, 1}}
	if err := s.Wait(context.Background(), c, 0, false); err != nil {
		t.Fatal(err)
	}
	if p.checks != 2 || s.Last() != Idle {
		t.Errorf("checks %d, ended %v; want 2 checks (the first voided), idle", p.checks, s.Last())
	}
	c.pending = 0
	if err := s.Wait(context.Background(), c, 1, false); err != nil {
		t.Fatal(err)
	}
	if p.checks != 2 || s.Last() != NothingPending {
		t.Errorf("checks %d, ended %v; want no check, nothing pending", p.checks, s.Last())
	}
	if st := s.Stats(); st.Idle != 1 || st.NothingPending != 1 || st.Checks != 2 || st.Policy != "counting" {
		t.Errorf("stats %+v", st)
	}
}

// writingLoop is a scheduling loop whose every cycle writes and pauses
// again (Kueue preempting a Workload that is then admitted again): each
// release of its pause moves the cluster's resourceVersion.
type writingLoop struct {
	cluster  *fakeCluster
	at       time.Duration
	released int
	timed    int
}

func (l *writingLoop) Elapsed() time.Duration { return l.at }
func (l *writingLoop) Pauses() int {
	if l.released >= 1000 { // unbounded, it would loop for ever
		return 0
	}
	return 1
}
func (l *writingLoop) TimerActivity() (uint64, <-chan struct{}) { return 0, nil }
func (l *writingLoop) ReleasePauses() int {
	l.released++
	l.cluster.rv++ // the cycle's write
	return 1
}
func (l *writingLoop) TimePauses() int { l.timed++; return 1 }

// idleBarrier proves the controllers idle at the cluster's resourceVersion.
type idleBarrier struct{ cluster *fakeCluster }

func (b idleBarrier) Name() string { return "idle" }
func (b idleBarrier) Check(context.Context) (BarrierVerdict, error) {
	return BarrierVerdict{Idle: true, RV: b.cluster.rv}, nil
}

// countingBarrier is an idleBarrier that counts its checks.
type countingBarrier struct {
	idleBarrier
	checks *int
}

func (b countingBarrier) Check(ctx context.Context) (BarrierVerdict, error) {
	*b.checks++
	return b.idleBarrier.Check(ctx)
}

// TestImminentTimersFireWhileTheStepWaits: a timer due less than Batsim's
// resolution after the step fires inside its wait; the controllers'
// barrier is proven again after it (a controller's timer fired after the
// proof), and a scheduler's timer makes the wait ask the policy although
// nothing is pending.
func TestImminentTimersFireWhileTheStepWaits(t *testing.T) {
	for _, tc := range []struct {
		name           string
		script         []imminentTimer
		proofs, checks int
	}{
		{"none", nil, 1, 0},
		{"a controller's after the proof", []imminentTimer{noTimer, aTimer}, 2, 0},
		{"a scheduler's", []imminentTimer{aWake}, 1, 1},
	} {
		c := &fakeCluster{rv: 1, imminent: tc.script}
		proofs := 0
		p := &countingPolicy{}
		s := NewSettler(p, SettlerOptions{Barrier: countingBarrier{idleBarrier{c}, &proofs}, Clock: stillClock{}, MaxSettle: time.Minute})
		if err := s.Wait(context.Background(), c, 0, false); err != nil {
			t.Fatal(err)
		}
		fired := 0
		for _, x := range tc.script {
			if x != noTimer {
				fired++
			}
		}
		if proofs != tc.proofs || p.checks != tc.checks || s.Stats().Imminent != fired {
			t.Errorf("%s: %d barrier checks, %d policy checks, %d imminent; want %d, %d, %d",
				tc.name, proofs, p.checks, s.Stats().Imminent, tc.proofs, tc.checks, fired)
		}
	}
}

// TestPauseReleasesAreBoundedPerInstant: a loop whose every cycle writes
// gets MaxPauseReleases releases at one instant, then its pauses take
// their own time and the step ends exact, not on --settle-max; the next
// instant has its own releases.
func TestPauseReleasesAreBoundedPerInstant(t *testing.T) {
	c := &fakeCluster{rv: 1} // a store is never empty at a step
	loop := &writingLoop{cluster: c}
	const bound = 5
	// Without the bound the loop would run at this instant for ever.
	s := NewSettler(&countingPolicy{}, SettlerOptions{Barrier: idleBarrier{c}, Clock: loop, MaxSettle: time.Minute, MaxPauseReleases: bound})
	if err := s.Wait(context.Background(), c, 0, true); err != nil {
		t.Fatal(err)
	}
	if s.Last() != Idle || loop.released != bound || loop.timed != 1 {
		t.Fatalf("ended %v after %d releases, pauses timed %d times; want exact after %d releases, timed once", s.Last(), loop.released, loop.timed, bound)
	}
	loop.at = time.Millisecond
	if err := s.Wait(context.Background(), c, 0.001, true); err != nil {
		t.Fatal(err)
	}
	if loop.released != 2*bound {
		t.Errorf("%d releases after the second instant, want %d", loop.released, 2*bound)
	}
	if st := s.Stats(); st.PauseReleases != 2*bound || st.TimedPauses != 2 {
		t.Errorf("stats: %d releases, %d instants timed; want %d, 2", st.PauseReleases, st.TimedPauses, 2*bound)
	}
}

// decidingGate is a policy whose gate reports a scheduler deciding until
// its signal comes (a token on wake).
type decidingGate struct {
	countingPolicy
	wake     chan struct{}
	deciding atomic.Bool
}

func (g *decidingGate) Abilities() Abilities { return Abilities{Wake: g.wake, Gate: g} }
func (g *decidingGate) Open()                {}
func (g *decidingGate) Shut()                {}
func (g *decidingGate) Deciding() string {
	if g.deciding.Load() {
		return "random"
	}
	return ""
}

// TestWaitWithNothingPendingWaitsForADecidingScheduler: once a
// scheduler's bindings leave nothing pending, the step still waits for
// the scheduler let through the gate to say it is done; else the next
// instant's writes would land while it reads this one (a seeded
// scheduler then draws on a state that never existed).
func TestWaitWithNothingPendingWaitsForADecidingScheduler(t *testing.T) {
	g := &decidingGate{wake: make(chan struct{}, 1)}
	g.deciding.Store(true)
	s := NewSettler(g, SettlerOptions{Clock: stillClock{}, MaxSettle: time.Hour})
	// The step opens with a pod pending; the scheduler binds it (nothing
	// pending) and is still reading when the broker next looks.
	c := &fakeCluster{pending: 1, boundAt: 2}
	ended := make(chan error, 1)
	go func() { ended <- s.Wait(context.Background(), c, 0, false) }()
	select {
	case err := <-ended:
		t.Fatalf("the step ended (%v, %v) while the scheduler was deciding", err, s.Last())
	case <-time.After(50 * time.Millisecond): // a bound on waiting for something that must not happen
	}
	g.deciding.Store(false)
	g.wake <- struct{}{}
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if s.Last() != NothingPending {
		t.Errorf("ended %v, want nothing pending (once the scheduler said it was done)", s.Last())
	}
}
