package ledger

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// account returns the account of one controller at now.
func account(t *testing.T, l *Ledger, ctrl string, now time.Time) Account {
	t.Helper()
	for _, a := range l.Accounts(now) {
		if a.Controller == ctrl {
			return a
		}
	}
	t.Fatalf("no account for %q at %v", ctrl, now)
	return Account{}
}

// TestAccountsSumThePhasesOfEveryPod: a controller's waiting, binding and
// running times are the sums over its pods, past and present, of the time
// each spent in each phase up to the instant asked, and its pod counts are
// those of the instant.
func TestAccountsSumThePhasesOfEveryPod(t *testing.T) {
	l := New()
	id := Identity{Controller: "default/web", SLO: 0.5}
	// a: created 0, binding at 10, running at 12, ended at 40.
	// b: created 5, still pending.
	l.Admit("a", id, at(0))
	l.Admit("b", id, at(5))
	l.Move("a", Binding, at(10))
	l.Move("a", Running, at(12))
	l.Move("a", Ended, at(40))
	for _, tc := range []struct {
		now                       float64
		waiting, binding, running float64
		pods                      [Ended]int
	}{
		{now: 50, waiting: 10 + 45, binding: 2, running: 28, pods: [Ended]int{Pending: 1}},
		{now: 100, waiting: 10 + 95, binding: 2, running: 28, pods: [Ended]int{Pending: 1}},
	} {
		got := account(t, l, id.Controller, at(tc.now))
		want := Times{Waiting: sec(tc.waiting), Binding: sec(tc.binding), Running: sec(tc.running)}
		if got.Times != want || got.Pods != tc.pods || got.SLO != 0.5 {
			t.Errorf("at %gs: got %+v, want %+v with pods %v", tc.now, got, want, tc.pods)
		}
	}
}

// TestQoSAndTTV: QoS is running over total; TTV is the waiting time left
// before QoS falls to the SLO (negative past it), and is exactly that.
func TestQoSAndTTV(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		waiting, binding, running float64
		slo                       float64
		qos                       float64
		qosOK                     bool
		ttv                       float64
	}{
		{name: "nothing yet", slo: 0.9, qosOK: false, ttv: 0},
		{name: "ahead", waiting: 10, running: 30, slo: 0.5, qos: 0.75, qosOK: true, ttv: 60 - 40},
		{name: "at the SLO", waiting: 10, running: 90, slo: 0.9, qos: 0.9, qosOK: true, ttv: 0},
		{name: "violated", waiting: 40, binding: 10, running: 50, slo: 0.9, qos: 0.5, qosOK: true, ttv: 50/0.9 - 100},
		{name: "SLO 1 tolerates no waiting", waiting: 3, running: 100, slo: 1, qos: 100.0 / 103, qosOK: true, ttv: -3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			times := Times{Waiting: sec(tc.waiting), Binding: sec(tc.binding), Running: sec(tc.running)}
			q, ok := QoS(times)
			if ok != tc.qosOK || math.Abs(q-tc.qos) > 1e-9 {
				t.Errorf("QoS = %g, %v; want %g, %v", q, ok, tc.qos, tc.qosOK)
			}
			ttv := TTV(times, tc.slo)
			if math.Abs(ttv-tc.ttv) > 1e-9 {
				t.Errorf("TTV = %g, want %g", ttv, tc.ttv)
			}
			if ttv > 0 {
				// Waiting exactly TTV more brings QoS to the SLO.
				times.Waiting += sec(ttv)
				if q, _ := QoS(times); math.Abs(q-tc.slo) > 1e-9 {
					t.Errorf("after waiting TTV more, QoS = %g, want the SLO %g", q, tc.slo)
				}
			}
		})
	}
}

// TestUrgencyDoesNotJumpAtEvents: moving a pod at an instant leaves its
// controller's TTV at that instant unchanged (so the order of a queue
// sorted at one instant stays valid while that instant's events apply),
// while it changes how the TTV evolves afterwards.
func TestUrgencyDoesNotJumpAtEvents(t *testing.T) {
	l := New()
	id := Identity{Controller: "c", SLO: 0.8}
	l.Admit("a", id, at(0))
	l.Admit("b", id, at(0))
	l.Move("a", Binding, at(10))
	l.Move("a", Running, at(10))
	steps := []struct {
		uid types.UID
		to  Phase
		at  float64
	}{
		{"b", Binding, 20}, {"b", Pending, 20}, {"b", Binding, 30}, {"b", Running, 35}, {"a", Ended, 50}, {"b", Ended, 60},
	}
	for _, s := range steps {
		urgency, _, ok, _ := l.Urgencies(s.uid, s.uid, at(s.at))
		if !ok {
			t.Fatalf("pod %s unknown before its move to %v", s.uid, s.to)
		}
		before := account(t, l, "c", at(s.at))
		if !l.Move(s.uid, s.to, at(s.at)) {
			t.Fatalf("move of %s to %v at %g refused", s.uid, s.to, s.at)
		}
		if got := account(t, l, "c", at(s.at)); got.TTV() != urgency.TTV || got.Times != before.Times {
			t.Errorf("moving %s to %v at %gs changed the account at that instant: TTV %g → %g, times %+v → %+v",
				s.uid, s.to, s.at, urgency.TTV, got.TTV(), before.Times, got.Times)
		}
	}
	// a: waited 10, ran 40; b: waited 20 + 10, bound 0 + 5, ran 25.
	want := Times{Waiting: sec(40), Binding: sec(5), Running: sec(65)}
	if got := account(t, l, "c", at(1000)); got.Times != want || got.Pods != [Ended]int{} {
		t.Errorf("after both ended: %+v, want %+v and no pod", got, want)
	}
}

// TestMovesOnlyGoForward: a pod moves forward through its phases (skipping
// is allowed) or from Binding back to Pending; other moves and moves of
// unknown pods are ignored, and an ended pod is forgotten.
func TestMovesOnlyGoForward(t *testing.T) {
	l := New()
	id := Identity{Controller: "c", SLO: 0.5}
	l.Admit("p", id, at(0))
	for i, tc := range []struct {
		uid  types.UID
		to   Phase
		want bool
		now  Phase
	}{
		{"p", Pending, false, Pending},
		{"p", Running, true, Running}, // Pending → Running: bound by someone else
		{"p", Binding, false, Running},
		{"p", Pending, false, Running},
		{"x", Running, false, Running},
		{"p", Ended, true, Ended},
		{"p", Running, false, Ended},
	} {
		if got := l.Move(tc.uid, tc.to, at(float64(i))); got != tc.want {
			t.Errorf("step %d: Move(%s, %v) = %v, want %v", i, tc.uid, tc.to, got, tc.want)
		}
		phase, known := l.PhaseOf("p")
		if tc.now == Ended {
			if known {
				t.Errorf("step %d: an ended pod is still known (%v)", i, phase)
			}
		} else if phase != tc.now {
			t.Errorf("step %d: phase %v, want %v", i, phase, tc.now)
		}
	}
	if l.Admit("q", id, at(10)); !l.Move("q", Binding, at(11)) || !l.Move("q", Pending, at(12)) {
		t.Errorf("Binding → Pending (a failed binding) refused")
	}
}

// TestEphemeralControllersAreForgotten: a controller standing for a single
// pod disappears with it; a named controller keeps its history.
func TestEphemeralControllersAreForgotten(t *testing.T) {
	l := New()
	l.Admit("a", Identity{Controller: "default/pod/a", SLO: 0.5, Ephemeral: true}, at(0))
	l.Admit("b", Identity{Controller: "default/web", SLO: 0.5}, at(0))
	l.Move("a", Ended, at(10))
	l.Move("b", Ended, at(10))
	got := l.Accounts(at(20))
	if len(got) != 1 || got[0].Controller != "default/web" || got[0].Waiting != sec(10) {
		t.Errorf("accounts after both pods ended: %+v, want only default/web with 10 s waited", got)
	}
}

// TestLatestPodSetsTheSLO: a controller's SLO is that of the last pod
// admitted or updated.
func TestLatestPodSetsTheSLO(t *testing.T) {
	l := New()
	l.Admit("a", Identity{Controller: "c", SLO: 0.5}, at(0))
	l.Admit("b", Identity{Controller: "c", SLO: 0.9}, at(1))
	if u, _, ok, _ := l.Urgencies("a", "a", at(1)); !ok || u.SLO != 0.9 {
		t.Errorf("SLO after the second pod: %+v, want 0.9", u)
	}
	l.Admit("a", Identity{Controller: "c", SLO: 0.7}, at(2)) // an update of a
	if u, _, _, _ := l.Urgencies("b", "b", at(2)); u.SLO != 0.7 {
		t.Errorf("SLO after a's update: %+v, want 0.7", u)
	}
}

// TestInstantsBeforeAPhaseAccumulateNothing: a move or a reading at an
// instant earlier than the pod's phase began adds no negative time.
func TestInstantsBeforeAPhaseAccumulateNothing(t *testing.T) {
	l := New()
	l.Admit("p", Identity{Controller: "c", SLO: 0.5}, at(10))
	if got := account(t, l, "c", at(5)); got.Total() != 0 {
		t.Errorf("account before the pod's creation: %+v, want nothing", got)
	}
	l.Move("p", Running, at(5))
	if got := account(t, l, "c", at(15)); got.Waiting != 0 || got.Running != sec(5) {
		t.Errorf("account at 15: %+v, want 0 waiting, 5 s running (from its creation)", got)
	}
}

// TestConcurrentUse: admissions, moves and readings from several
// goroutines (run with -race) leave every pod accounted.
func TestConcurrentUse(t *testing.T) {
	l := New()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				uid := types.UID(fmt.Sprintf("%d-%d", g, i))
				l.Admit(uid, Identity{Controller: fmt.Sprintf("c%d", i%3), SLO: 0.5}, at(0))
				l.Urgencies(uid, "0-0", at(1))
				l.Move(uid, Running, at(1))
				l.Move(uid, Ended, at(2))
				l.Accounts(at(2))
			}
		})
	}
	wg.Wait()
	var total Times
	for _, a := range l.Accounts(at(3)) {
		total.Waiting += a.Waiting
		total.Running += a.Running
	}
	if want := (Times{Waiting: sec(800), Running: sec(800)}); total != want {
		t.Errorf("totals %+v, want %+v", total, want)
	}
}

func BenchmarkUrgencies(b *testing.B) {
	l := New()
	uids := make([]types.UID, 1000)
	for i := range uids {
		uids[i] = types.UID(fmt.Sprint(i))
		l.Admit(uids[i], Identity{Controller: fmt.Sprintf("c%d", i%10), SLO: 0.5}, at(0))
	}
	now := at(100)
	b.ResetTimer()
	for i := range b.N {
		l.Urgencies(uids[i%1000], uids[(i*7+3)%1000], now)
	}
}
