package clock

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/simtime/simclock"
	"github.com/batkube/batkube/pkg/simtime/timeservice"
)

var epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// run is a run's clock served by a real timeservice over HTTP, with its
// page, and a process's simulated clock attached to both.
type run struct {
	clock   *simclock.Clock
	page    *Page
	process *simulated
	// parked counts the waits parked on the server.
	parked atomic.Int64
}

func newRun(t *testing.T) *run {
	t.Helper()
	r := &run{clock: simclock.New(epoch)}
	path := filepath.Join(t.TempDir(), "clock")
	page, err := CreatePage(path, epoch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { page.Close() })
	r.page = page
	r.clock.Mirror(page.Set)
	park := func(*http.Request) (func(), func()) {
		var parked atomic.Bool
		return func() {
				if parked.CompareAndSwap(false, true) {
					r.parked.Add(1)
				}
			}, func() {
				if parked.CompareAndSwap(true, false) {
					r.parked.Add(-1)
				}
			}
	}
	srv := httptest.NewServer(timeservice.NewHandler(r.clock, park))
	t.Cleanup(srv.Close)
	s, err := attach(path, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.process = s
	ran := make(chan struct{})
	go func() { s.run(); close(ran) }()
	t.Cleanup(func() {
		close(s.stopped)
		<-ran
		s.page.Close()
	})
	return r
}

// eventually waits for cond, polling; a condition that never holds fails
// the test after a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// registered waits until the server holds a wait of the process for the
// instant at (seconds), of the kind given.
func (r *run) registered(t *testing.T, kind simclock.Kind, at float64) {
	t.Helper()
	eventually(t, "a "+kind.String()+" wait registered", func() bool {
		switch kind {
		case simclock.Work:
			s, ok := r.clock.NextWorkSeconds()
			return ok && s == at
		default:
			return r.parked.Load() > 0
		}
	})
}

func received(c <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-c:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestAttachCountsTheProcess(t *testing.T) {
	r := newRun(t)
	if n := r.page.Attached(); n != 1 {
		t.Fatalf("attached = %d, want 1", n)
	}
}

func TestNowReadsThePage(t *testing.T) {
	r := newRun(t)
	if got := r.process.now(); !got.Equal(epoch) {
		t.Fatalf("now at 0 = %v, want %v", got, epoch)
	}
	r.clock.Advance(12.5)
	if got, want := r.process.now(), epoch.Add(12500*time.Millisecond); !got.Equal(want) {
		t.Fatalf("now = %v, want %v", got, want)
	}
}

// A work timer asks the server for a call at its instant, and fires only
// once the server says the instant was reached: moving the page does not
// fire it, the step's Fire does.
func TestWorkTimerFiresWhenTheServerFiresIt(t *testing.T) {
	r := newRun(t)
	tm := r.process.newTimer(time.Second, nil, workCaller)
	r.registered(t, simclock.Work, 1)
	if s, ok := r.clock.NextTimerSeconds(); !ok || s != 1 {
		t.Fatalf("next call = %v, %v; want 1", s, ok)
	}
	r.clock.Advance(1)
	if _, ok := received(tm.C()); ok {
		t.Fatal("fired once the page moved, before the server fired it")
	}
	if n := r.clock.Fire(); n != (simclock.Fired{Work: 1}) {
		t.Fatalf("server fired %+v, want 1 work timer", n)
	}
	if got := <-tm.C(); !got.Equal(epoch.Add(time.Second)) {
		t.Fatalf("fired with %v, want %v", got, epoch.Add(time.Second))
	}
	eventually(t, "the wait unparked", func() bool { return r.parked.Load() == 0 })
	if tm.Stop() {
		t.Error("Stop after the value was received: true")
	}
}

// A passive timer asks for no call: it fires when the server's time passes
// it for another reason.
func TestPassiveTimerAsksForNoCall(t *testing.T) {
	r := newRun(t)
	tm := r.process.newTimer(5*time.Second, nil, passiveCaller)
	r.registered(t, simclock.Passive, 5)
	if s, ok := r.clock.NextTimerSeconds(); ok {
		t.Fatalf("a passive timer asked for a call at %v", s)
	}
	if r.clock.Set(4) != 0 {
		t.Fatal("a passive timer counted as woken")
	}
	if _, ok := received(tm.C()); ok {
		t.Fatal("fired at 4, before 5")
	}
	r.clock.Set(7)
	if got := <-tm.C(); !got.Equal(epoch.Add(7 * time.Second)) {
		t.Fatalf("fired with %v, want the time that passed it, %v", got, epoch.Add(7*time.Second))
	}
}

// A pause asks for no call and fires at once when the server releases the
// pauses, with the time of the release, before its instant; a later pause
// is not released by that release.
func TestPauseFiresWhenReleased(t *testing.T) {
	r := newRun(t)
	r.clock.Set(2)
	tm := r.process.newTimer(10*time.Millisecond, nil, pauseCaller)
	eventually(t, "the pause registered", func() bool { return r.clock.Pauses() == 1 })
	if s, ok := r.clock.NextTimerSeconds(); ok {
		t.Fatalf("a pause asked for a call at %v", s)
	}
	if _, ok := received(tm.C()); ok {
		t.Fatal("fired before its release")
	}
	if n := r.clock.ReleasePauses(); n != 1 {
		t.Fatalf("released %d pauses, want 1", n)
	}
	if got, want := <-tm.C(), epoch.Add(2*time.Second); !got.Equal(want) {
		t.Fatalf("released with %v, want the release's time %v", got, want)
	}
	eventually(t, "the wait unparked", func() bool { return r.parked.Load() == 0 })
	// The next pause waits for its own release, or for time to pass it.
	next := r.process.newTimer(10*time.Millisecond, nil, pauseCaller)
	eventually(t, "the next pause registered", func() bool { return r.clock.Pauses() == 1 })
	if _, ok := received(next.C()); ok {
		t.Fatal("the next pause fired with the first")
	}
	r.clock.Set(2.5)
	if got, want := <-next.C(), epoch.Add(2500*time.Millisecond); !got.Equal(want) {
		t.Fatalf("passed by time with %v, want %v", got, want)
	}
}

// The earliest timer of each kind has a wait; a new earlier one replaces
// it, and the timers fire in order, each once.
func TestTimersFireInOrder(t *testing.T) {
	r := newRun(t)
	late := r.process.newTimer(3*time.Second, nil, workCaller)
	r.registered(t, simclock.Work, 3)
	early := r.process.newTimer(2*time.Second, nil, workCaller)
	r.registered(t, simclock.Work, 2)
	r.clock.Set(2)
	<-early.C()
	r.registered(t, simclock.Work, 3)
	if _, ok := received(late.C()); ok {
		t.Fatal("the 3 s timer fired at 2 s")
	}
	r.clock.Set(3)
	<-late.C()
	eventually(t, "no wait left", func() bool { _, ok := r.clock.NextWorkSeconds(); return !ok && r.parked.Load() == 0 })
}

// A stopped timer's wait is withdrawn: no call is asked for it.
func TestStoppedTimerLeavesNoCall(t *testing.T) {
	r := newRun(t)
	tm := r.process.newTimer(time.Second, nil, workCaller)
	r.registered(t, simclock.Work, 1)
	if !tm.Stop() {
		t.Fatal("Stop of a pending timer: false")
	}
	eventually(t, "the wait withdrawn", func() bool { _, ok := r.clock.NextWorkSeconds(); return !ok })
	if tm.Stop() {
		t.Error("second Stop: true")
	}
}

// Reset moves a timer; a value fired and not received is dropped.
func TestResetDropsAStaleValue(t *testing.T) {
	r := newRun(t)
	tm := r.process.newTimer(time.Second, nil, workCaller)
	r.registered(t, simclock.Work, 1)
	r.clock.Set(1)
	eventually(t, "fired", func() bool { return len(tm.c) == 1 })
	if !tm.Reset(2 * time.Second) { // now 1: fires at 3
		t.Fatal("Reset of a timer whose value was not received: false")
	}
	if _, ok := received(tm.C()); ok {
		t.Fatal("a stale value after Reset")
	}
	r.registered(t, simclock.Work, 3)
	r.clock.Set(3)
	if got := <-tm.C(); !got.Equal(epoch.Add(3 * time.Second)) {
		t.Fatalf("fired with %v, want 3 s", got)
	}
}

// AfterFunc runs its function when the timer fires.
func TestAfterFunc(t *testing.T) {
	r := newRun(t)
	done := make(chan struct{})
	r.process.newTimer(time.Second, func() { close(done) }, workCaller)
	r.registered(t, simclock.Work, 1)
	r.clock.Set(1)
	<-done
}

// A ticker ticks at each period simulated time reaches and drops the ticks
// its receiver missed.
func TestTickerDropsMissedTicks(t *testing.T) {
	r := newRun(t)
	k := r.process.newTicker(time.Second)
	r.registered(t, simclock.Passive, 1)
	r.clock.Set(1)
	if got := <-k.C(); !got.Equal(epoch.Add(time.Second)) {
		t.Fatalf("tick %v, want 1 s", got)
	}
	eventually(t, "the next tick's wait", func() bool { return r.parked.Load() > 0 })
	r.clock.Set(4.5) // ticks of 2, 3 and 4 due: one is received
	<-k.C()
	eventually(t, "the next tick's wait", func() bool { return r.parked.Load() > 0 })
	if _, ok := received(k.C()); ok {
		t.Fatal("more than one tick for one step")
	}
	r.clock.Set(5) // the next tick is at 5
	<-k.C()
	k.Stop()
}

// A timer of no duration fires at once, without the server.
func TestZeroTimerFiresAtOnce(t *testing.T) {
	r := newRun(t)
	r.clock.Advance(2)
	tm := r.process.newTimer(0, nil, passiveCaller)
	if got, ok := received(tm.C()); !ok || !got.Equal(epoch.Add(2*time.Second)) {
		t.Fatalf("zero timer: %v, %v", got, ok)
	}
}

func TestAttachErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := attach(filepath.Join(dir, "clock"), "", nil); err == nil {
		t.Error("no server URL: no error")
	}
	if _, err := attach(filepath.Join(dir, "clock"), "localhost:8001", nil); err == nil {
		t.Error("a server URL without a scheme: no error")
	}
	if _, err := attach(filepath.Join(dir, "missing"), "http://127.0.0.1:1", nil); err == nil {
		t.Error("no page: no error")
	}
}

func TestWorkQueueFrames(t *testing.T) {
	for fn, want := range map[string]callerKind{
		"k8s.io/client-go/util/workqueue.(*delayingType[...]).waitingLoop":                                     workCaller,
		"k8s.io/client-go/tools/cache.(*Reflector).ListAndWatch":                                               passiveCaller,
		"k8s.io/apimachinery/pkg/util/wait.(*jitteredBackoffManagerImpl).Backoff":                              passiveCaller,
		"k8s.io/kubernetes/pkg/controller/tainteviction.createWorker":                                          workCaller,
		"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.(*priorityqueue[...]).handleWaitingItems": workCaller,
		"sigs.k8s.io/kueue/pkg/util/wait.UntilWithBackoff":                                                     pauseCaller,
		"sigs.k8s.io/kueue/pkg/scheduler.(*Scheduler).schedule":                                                passiveCaller,
	} {
		if got := callerKindOf(fn); got != want {
			t.Errorf("callerKindOf(%q) = %v, want %v", fn, got, want)
		}
	}
	for fn, want := range map[string]bool{
		"k8s.io/utils/clock.RealClock.NewTimer":            true,
		"k8s.io/utils/clock.(*RealClock).NewTimer":         true,
		thisPackage + ".RealClock.After":                   true,
		"k8s.io/utils/clock/testing.(*FakeClock).NewTimer": false,
	} {
		if got := isClockFrame(fn); got != want {
			t.Errorf("isClockFrame(%q) = %v", fn, got)
		}
	}
	if callerOf() != passiveCaller {
		t.Error("a test's call taken for a work queue's")
	}
}

// TestKarpenterFrames: Karpenter's batch window, once a pod triggered it,
// and disruption's validation period are work (a call at their instant),
// so that a NodeClaim is created at the window's end and a consolidated
// node deleted at the validation's; the window's first wait for a trigger
// stays passive.
func TestKarpenterFrames(t *testing.T) {
	const wait = "sigs.k8s.io/karpenter/pkg/controllers/provisioning.(*Batcher[...]).Wait"
	for _, c := range []struct {
		fn   string
		line int
		want callerKind
	}{
		{wait, karpenterBatcherTriggerLine, passiveCaller},
		{wait, 98, workCaller}, // BATCH_MAX_DURATION
		{wait, 99, workCaller}, // BATCH_IDLE_DURATION
		{"sigs.k8s.io/karpenter/pkg/controllers/disruption.(*EmptinessValidator).Validate", 139, workCaller},
		{"sigs.k8s.io/karpenter/pkg/controllers/disruption.(*ConsolidationValidator).isValid", 204, workCaller},
		{"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/lifecycle.(*Controller).Reconcile", 189, workCaller},
		{"sigs.k8s.io/karpenter/pkg/controllers/disruption.(*Controller).Reconcile", 10, passiveCaller},
		{"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.(*priorityqueue[...]).handleWaitingItems", 1, workCaller},
	} {
		if got := callerKindAt(c.fn, c.line); got != c.want {
			t.Errorf("callerKindAt(%q, %d) = %v, want %v", c.fn, c.line, got, c.want)
		}
	}
}

// A controller-runtime priority queue's delayed items are classed by the
// queue's controller (QueueAfter): work, but for the controllers whose
// periodic reconciles only refresh metrics, whose items are passive (they
// ask for no call).
func TestQueueTimersByController(t *testing.T) {
	for _, c := range []struct {
		queue string
		want  callerKind
	}{
		{"metrics.node", passiveCaller},
		{"metrics.nodepool", passiveCaller},
		{"metrics.pod", passiveCaller},
		{"operatorpkg.node.status", passiveCaller},
		{"operatorpkg.nodeclaim.status", passiveCaller},
		{"operatorpkg.nodepool.status", passiveCaller},
		{"disruption", workCaller},
		{"provisioner", workCaller},
		{"nodepool.counter", workCaller},
		{"nodeclaim.disruption", workCaller},
		{"state.node", workCaller},
		{"operatorpkg.node", workCaller},
		{"workload", workCaller}, // Kueue's
	} {
		if got := queueCallerKind(c.queue); got != c.want {
			t.Errorf("queueCallerKind(%q) = %v, want %v", c.queue, got, c.want)
		}
	}
	r := newRun(t)
	r.process.newTimer(10*time.Second, nil, queueCallerKind("operatorpkg.node.status"))
	r.registered(t, simclock.Passive, 10)
	if s, ok := r.clock.NextTimerSeconds(); ok {
		t.Fatalf("a status controller's requeue asked for a call at %v", s)
	}
}
