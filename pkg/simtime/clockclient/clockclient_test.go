package clockclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/batkube/batkube/pkg/chantest"
	"github.com/batkube/batkube/pkg/simtime/simclock"
	"github.com/batkube/batkube/pkg/simtime/timeservice"
)

// failAfter bounds what should happen; a test-failure timeout only.
const failAfter = 10 * time.Second

var epoch = simclock.DefaultEpoch

// errs collects what a Clock reports.
type errs struct {
	mu       sync.Mutex
	list     []error
	reported chan struct{} // receives one value per error, if not full
}

func newErrs() *errs { return &errs{reported: make(chan struct{}, 100)} }

func (e *errs) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, err)
	select {
	case e.reported <- struct{}{}:
	default:
	}
}

// wait waits for the next error report.
func (e *errs) wait(t *testing.T) {
	t.Helper()
	chantest.Recv(t, e.reported, failAfter, "no error reported")
}

func (e *errs) get() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.list...)
}

// setup serves a simulated clock over real HTTP (h wraps the handler when
// not nil) and returns a client Clock reading it.
func setup(t *testing.T, wrap func(http.Handler) http.Handler) (*simclock.Clock, *Clock, *errs) {
	t.Helper()
	sim := simclock.New(epoch)
	var h http.Handler = timeservice.NewHandler(sim, nil)
	if wrap != nil {
		h = wrap(h)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	e := newErrs()
	return sim, mustNew(t, hs.URL, Options{OnError: e.add}), e
}

// waitFor waits until cond holds on the server's clock, woken by its timer
// activity (registrations and cancellations).
func waitFor(t *testing.T, sim *simclock.Clock, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(failAfter)
	for {
		_, changed := sim.TimerActivity()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s (%d timers pending)", what, sim.Pending())
		}
	}
}

// waitTimer waits until the server's only pending timer is at d.
func waitTimer(t *testing.T, sim *simclock.Clock, d time.Duration) {
	t.Helper()
	waitFor(t, sim, "a timer at "+d.String(), func() bool {
		at, ok := sim.NextTimer()
		return ok && sim.Pending() == 1 && at.Equal(epoch.Add(d))
	})
}

func waitNone(t *testing.T, sim *simclock.Clock) {
	t.Helper()
	waitFor(t, sim, "no timer", func() bool { return sim.Pending() == 0 })
}

func receive(t *testing.T, ch <-chan time.Time) time.Time {
	t.Helper()
	return chantest.Recv(t, ch, failAfter, "nothing received")
}

func TestNowAndSinceReadTheSimulatedTime(t *testing.T) {
	sim, c, e := setup(t, nil)
	if got := c.Now(); !got.Equal(epoch) {
		t.Errorf("Now() = %v, want %v", got, epoch)
	}
	sim.SetElapsed(42*time.Second + 1)
	if got := c.Since(epoch); got != 42*time.Second+1 {
		t.Errorf("Since(epoch) = %v, want 42.000000001s", got)
	}
	if got, err := c.NowContext(context.Background()); err != nil || !got.Equal(sim.Now()) {
		t.Errorf("NowContext() = %v, %v; want %v", got, err, sim.Now())
	}
	if len(e.get()) != 0 {
		t.Errorf("errors reported: %v", e.get())
	}
}

func TestTimerFiresWhenSimulatedTimeReachesItAndNotBefore(t *testing.T) {
	sim, c, _ := setup(t, nil)
	sim.Set(10)
	tm := c.NewTimer(5 * time.Second)
	waitTimer(t, sim, 15*time.Second)
	if s, _ := sim.NextTimerSeconds(); s != 15 {
		t.Errorf("the broker would ask a CALL_ME_LATER at %v, want 15", s)
	}
	if n := sim.SetElapsed(15*time.Second - 1); n != 0 {
		t.Fatalf("a nanosecond early: %d timers fired, want 0", n)
	}
	if n := sim.Set(16); n != 1 {
		t.Fatalf("%d timers fired, want 1", n)
	}
	if got := receive(t, tm.C()); !got.Equal(epoch.Add(16 * time.Second)) {
		t.Errorf("fired with %v, want the simulated time %v", got, epoch.Add(16*time.Second))
	}
	if tm.Stop() {
		t.Error("Stop of a fired and received timer returned true")
	}
}

func TestAfterAndSleepWaitForSimulatedTime(t *testing.T) {
	sim, c, _ := setup(t, nil)
	ch := c.After(time.Minute)
	waitTimer(t, sim, time.Minute)
	slept := make(chan struct{})
	go func() {
		c.Sleep(2 * time.Minute)
		close(slept)
	}()
	waitFor(t, sim, "the sleep's timer", func() bool { return sim.Pending() == 2 })
	sim.Set(60)
	if got := receive(t, ch); !got.Equal(epoch.Add(time.Minute)) {
		t.Errorf("After fired with %v", got)
	}
	select {
	case <-slept:
		t.Fatal("Sleep(2m) returned at 1m")
	default:
	}
	sim.Set(120)
	chantest.Recv(t, slept, failAfter, "Sleep did not return")
	c.Sleep(0) // returns at once, no request
	c.Sleep(-time.Second)
}

func TestStopRemovesTheTimerFromTheSimulation(t *testing.T) {
	sim, c, e := setup(t, nil)
	tm := c.NewTimer(time.Hour)
	waitTimer(t, sim, time.Hour)
	if !tm.Stop() {
		t.Error("Stop of a pending timer returned false")
	}
	waitNone(t, sim)
	if tm.Stop() {
		t.Error("second Stop returned true")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-tm.C():
		t.Errorf("a stopped timer delivered %v", v)
	default:
	}
	if len(e.get()) != 0 {
		t.Errorf("stopping reported errors: %v", e.get())
	}
}

// Go 1.23 semantics: a timer fired but not received is still active for
// Stop, and nothing stale is received after Stop.
func TestStopAfterFiringDrainsTheValue(t *testing.T) {
	sim, c, _ := setup(t, nil)
	tm := c.NewTimer(time.Second)
	waitTimer(t, sim, time.Second)
	sim.Set(1)
	if !tm.Stop() {
		t.Error("Stop of a fired timer whose value was not received returned false")
	}
	_ = c.Close() // no goroutine is left to deliver anything
	select {
	case v := <-tm.C():
		t.Errorf("received %v after Stop", v)
	default:
	}
}

func TestResetMovesTheTimer(t *testing.T) {
	sim, c, _ := setup(t, nil)
	tm := c.NewTimer(10 * time.Second)
	waitTimer(t, sim, 10*time.Second)
	if !tm.Reset(20 * time.Second) {
		t.Error("Reset of a pending timer returned false")
	}
	waitTimer(t, sim, 20*time.Second) // the 10 s one is gone
	if n := sim.Set(10); n != 0 {
		t.Fatalf("%d timers fired at the old instant, want 0", n)
	}
	sim.Set(20)
	if got := receive(t, tm.C()); !got.Equal(epoch.Add(20 * time.Second)) {
		t.Errorf("fired with %v, want 20s", got)
	}
	if tm.Reset(5 * time.Second) {
		t.Error("Reset of a fired and received timer returned true")
	}
	waitTimer(t, sim, 25*time.Second)
	sim.Set(25)
	if got := receive(t, tm.C()); !got.Equal(epoch.Add(25 * time.Second)) {
		t.Errorf("fired again with %v, want 25s", got)
	}
}

func TestAfterFuncRunsOnceUnlessStopped(t *testing.T) {
	sim, c, _ := setup(t, nil)
	var calls atomic.Int32
	called := make(chan struct{}, 2)
	f := func() { calls.Add(1); called <- struct{}{} }
	tm := c.AfterFunc(3*time.Second, f)
	if tm.C() != nil {
		t.Error("an AfterFunc timer has a channel")
	}
	stopped := c.AfterFunc(3*time.Second, f)
	waitFor(t, sim, "two timers", func() bool { return sim.Pending() == 2 })
	if !stopped.Stop() {
		t.Error("Stop of a pending AfterFunc returned false")
	}
	waitFor(t, sim, "one timer", func() bool { return sim.Pending() == 1 })
	sim.Set(3)
	chantest.Recv(t, called, failAfter, "f was not called")
	if tm.Stop() {
		t.Error("Stop after f started returned true")
	}
	_ = c.Close()
	if n := calls.Load(); n != 1 {
		t.Errorf("f called %d times, want 1", n)
	}
}

func TestTickerTicksOnItsGridAndDropsMissedTicks(t *testing.T) {
	sim, c, _ := setup(t, nil)
	tk := c.NewTicker(10 * time.Second)
	waitTimer(t, sim, 10*time.Second)
	sim.Set(10)
	if got := receive(t, tk.C()); !got.Equal(epoch.Add(10 * time.Second)) {
		t.Errorf("first tick at %v, want 10s", got)
	}
	waitTimer(t, sim, 20*time.Second)
	sim.Set(35) // 20 and 30 are missed: one tick, then back on the grid
	if got := receive(t, tk.C()); !got.Equal(epoch.Add(35 * time.Second)) {
		t.Errorf("tick at %v, want 35s", got)
	}
	waitTimer(t, sim, 40*time.Second)
	sim.Set(40) // not received: the next one is dropped
	waitTimer(t, sim, 50*time.Second)
	sim.Set(50)
	waitTimer(t, sim, 60*time.Second)
	if got := receive(t, tk.C()); !got.Equal(epoch.Add(40 * time.Second)) {
		t.Errorf("tick at %v, want the 40s one (50s dropped)", got)
	}
	tk.Stop()
	waitNone(t, sim)
	sim.Set(100)
	_ = c.Close()
	select {
	case v := <-tk.C():
		t.Errorf("tick %v after Stop", v)
	default:
	}
	if c.Tick(0) != nil {
		t.Error("Tick(0) is not nil")
	}
}

func TestNonPositiveTickerIsReportedAndNeverTicks(t *testing.T) {
	sim, c, e := setup(t, nil)
	tk := c.NewTicker(0)
	tk.Stop()
	if len(e.get()) != 1 || sim.Pending() != 0 {
		t.Errorf("got errors %v and %d timers, want one error and no timer", e.get(), sim.Pending())
	}
}

func TestNowReturnsTheLastTimeSeenWhenTheServerIsGone(t *testing.T) {
	sim := simclock.New(epoch)
	hs := httptest.NewServer(timeservice.NewHandler(sim, nil))
	e := newErrs()
	c := mustNew(t, hs.URL, Options{OnError: e.add, RequestTimeout: failAfter})
	sim.Set(8)
	if got := c.Now(); !got.Equal(epoch.Add(8 * time.Second)) {
		t.Fatalf("Now() = %v", got)
	}
	hs.Close()
	if got := c.Now(); !got.Equal(epoch.Add(8 * time.Second)) {
		t.Errorf("with the server gone, Now() = %v, want the last time seen", got)
	}
	if _, err := c.NowContext(context.Background()); err == nil {
		t.Error("NowContext succeeded with the server gone")
	}
	if len(e.get()) != 1 {
		t.Errorf("reported %v, want one error", e.get())
	}
}

func TestRefusedWaitIsReported(t *testing.T) {
	refuse := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"no token"}`))
		})
	}
	_, c, e := setup(t, refuse)
	c.NewTimer(time.Second)
	e.wait(t)
	_ = c.Close() // waits for the timer's goroutine, which gave up
	got := e.get()
	var se *StatusError
	if len(got) != 1 || !errors.As(got[0], &se) || se.Code != http.StatusUnauthorized || se.Message != "no token" {
		t.Errorf("reported %v, want one 401 StatusError", got)
	}
}

// A wait whose connection breaks after the server registered it waits
// again for the same instant, even though simulated time moved meanwhile.
func TestBrokenWaitIsRetriedForTheSameInstant(t *testing.T) {
	var sim *simclock.Clock
	var broken atomic.Bool
	breakFirst := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Has(timeservice.ParamAfter) && broken.CompareAndSwap(false, true) {
				w = &abortOnFlush{ResponseWriter: w, before: func() { sim.Set(1) }}
			}
			h.ServeHTTP(w, r)
		})
	}
	s, c, e := setup(t, breakFirst)
	sim = s
	tm := c.NewTimer(5 * time.Second)
	// The aborted handler's timer stays (it never returned normally); the
	// retry registers a second one, at the same instant, not at 1s + 5s.
	waitFor(t, sim, "the retry", func() bool { return sim.Pending() == 2 })
	if at, _ := sim.NextTimer(); !at.Equal(epoch.Add(5 * time.Second)) {
		t.Errorf("retry waits for %v, want the first instant %v", at, epoch.Add(5*time.Second))
	}
	if n := sim.Set(5); n != 2 {
		t.Errorf("%d timers fired at 5s, want 2", n)
	}
	if got := receive(t, tm.C()); !got.Equal(epoch.Add(5 * time.Second)) {
		t.Errorf("fired with %v", got)
	}
	if len(e.get()) != 1 {
		t.Errorf("reported %v, want the one broken wait", e.get())
	}
}

// abortOnFlush breaks the connection once the handler flushed its headers.
type abortOnFlush struct {
	http.ResponseWriter
	before func()
}

func (a *abortOnFlush) Flush() {
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	a.before()
	panic(http.ErrAbortHandler)
}

func TestCloseEndsEveryTimer(t *testing.T) {
	sim, c, _ := setup(t, nil)
	for i := range 10 {
		c.NewTimer(time.Duration(i+1) * time.Second)
	}
	c.NewTicker(time.Second)
	waitFor(t, sim, "eleven timers", func() bool { return sim.Pending() == 11 })
	done := make(chan struct{})
	go func() { _ = c.Close(); close(done) }()
	chantest.Recv(t, done, failAfter, "Close did not return")
	waitNone(t, sim)
	c.Sleep(time.Hour) // returns at once on a closed clock
	_ = c.NewTimer(time.Second)
	if sim.Pending() != 0 {
		t.Error("a closed clock registered a timer")
	}
}

func TestOnlyServerRefusalsAreNotRetried(t *testing.T) {
	for code, want := range map[int]bool{
		http.StatusBadRequest: true, http.StatusUnauthorized: true, http.StatusForbidden: true, http.StatusNotFound: true,
		http.StatusRequestTimeout: false, http.StatusTooManyRequests: false,
		http.StatusInternalServerError: false, http.StatusServiceUnavailable: false, http.StatusGatewayTimeout: false,
	} {
		if got := (&StatusError{Code: code}).permanent(); got != want {
			t.Errorf("%d: permanent = %v, want %v", code, got, want)
		}
	}
}

func TestNewRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8001", "ftp://x", "http://", "://"} {
		if _, err := New(u, Options{}); err == nil {
			t.Errorf("New(%q) succeeded", u)
		}
	}
}

func TestInterfaces(t *testing.T) {
	var c any = &Clock{}
	if _, ok := c.(clock.WithTickerAndDelayedExecution); !ok {
		t.Error("Clock is not a clock.WithTickerAndDelayedExecution")
	}
}

// mustNew returns a client of the clock served at url, closed when the test
// ends.
func mustNew(t testing.TB, url string, opts Options) *Clock {
	t.Helper()
	c, err := New(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
