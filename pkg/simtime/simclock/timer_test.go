package simclock

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/chantest"
)

// failAfter bounds a wait that should succeed; it is a test-failure timeout,
// never a synchronisation.
const failAfter = 10 * time.Second

func fired(t *Timer) (time.Time, bool) {
	select {
	case now := <-t.C:
		return now, true
	default:
		return time.Time{}, false
	}
}

func TestTimerFiresWhenTimeReachesItAndNotBefore(t *testing.T) {
	c := New(DefaultEpoch)
	at := DefaultEpoch.Add(10 * time.Second)
	tm := c.NewTimer(at)
	if got := tm.When(); !got.Equal(at) {
		t.Fatalf("When() = %v, want %v", got, at)
	}
	if n := c.SetElapsed(10*time.Second - 1); n != 0 {
		t.Fatalf("one nanosecond early: %d timers fired, want 0", n)
	}
	if _, ok := fired(tm); ok {
		t.Fatal("the timer fired one nanosecond early")
	}
	if n := c.Set(10); n != 1 {
		t.Fatalf("at its instant: %d timers fired, want 1", n)
	}
	now, ok := fired(tm)
	if !ok || !now.Equal(at) {
		t.Fatalf("got (%v, %v) on C, want (%v, true)", now, ok, at)
	}
	if c.Pending() != 0 {
		t.Errorf("%d timers pending after firing, want 0", c.Pending())
	}
	if tm.Stop() {
		t.Error("Stop of a fired timer returned true")
	}
}

func TestSetFiresDueTimersInOrderWithTheNewTime(t *testing.T) {
	c := New(DefaultEpoch)
	var ts []*Timer
	for _, s := range []int{5, 1, 3, 7, 3} {
		ts = append(ts, c.NewTimer(DefaultEpoch.Add(time.Duration(s)*time.Second)))
	}
	if at, ok := c.NextTimer(); !ok || !at.Equal(DefaultEpoch.Add(time.Second)) {
		t.Fatalf("NextTimer() = %v, %v; want epoch+1s", at, ok)
	}
	if n := c.Set(4); n != 3 {
		t.Fatalf("Set(4) fired %d timers, want 3", n)
	}
	want := DefaultEpoch.Add(4 * time.Second)
	for i, tm := range ts {
		now, ok := fired(tm)
		due := i == 1 || i == 2 || i == 4
		if ok != due || (ok && !now.Equal(want)) {
			t.Errorf("timer %d: got (%v, %v), want fired=%v at %v", i, now, ok, due, want)
		}
	}
	if at, ok := c.NextTimer(); !ok || !at.Equal(DefaultEpoch.Add(5*time.Second)) {
		t.Errorf("NextTimer() = %v, %v; want epoch+5s", at, ok)
	}
	if !ts[0].Stop() {
		t.Error("Stop of a pending timer returned false")
	}
	if at, ok := c.NextTimer(); !ok || !at.Equal(DefaultEpoch.Add(7*time.Second)) {
		t.Errorf("after stopping the 5s timer: NextTimer() = %v, %v; want epoch+7s", at, ok)
	}
	if n := c.Set(100); n != 1 {
		t.Errorf("Set(100) fired %d timers, want 1 (the other one was stopped)", n)
	}
	if _, ok := c.NextTimer(); ok {
		t.Error("NextTimer() reports a timer after all fired")
	}
}

func TestTimerInThePastFiresAtOnce(t *testing.T) {
	c := New(DefaultEpoch)
	c.Set(3)
	for _, at := range []time.Time{DefaultEpoch, DefaultEpoch.Add(3 * time.Second), time.Time{}} {
		tm := c.NewTimer(at)
		now, ok := fired(tm)
		if !ok || !now.Equal(DefaultEpoch.Add(3*time.Second)) {
			t.Errorf("NewTimer(%v) at 3s: got (%v, %v) on C, want the current time", at, now, ok)
		}
	}
	if c.Pending() != 0 {
		t.Errorf("%d timers pending, want 0", c.Pending())
	}
}

func TestNextTimerSecondsFiresTheTimer(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ds := []time.Duration{1, 999, time.Second + 1, 100*time.Millisecond + 3, 1<<53 + 1, 1<<60 + 7, math.MaxInt64}
	for range 2000 {
		ds = append(ds, time.Duration(r.Int64N(1<<56))+1)
	}
	for _, d := range ds {
		c := New(DefaultEpoch)
		tm := c.NewTimer(DefaultEpoch.Add(d))
		s, ok := c.NextTimerSeconds()
		if !ok {
			t.Fatalf("%d: no next timer", d)
		}
		got := FromSeconds(s)
		if d < 1<<22*time.Second && got != d {
			t.Fatalf("%d: FromSeconds(%v) = %d, want it exact", d, s, got)
		}
		if got < d || float64(got-d) > float64(d)*0x1p-51 {
			t.Fatalf("%d: FromSeconds(%v) = %d, want at least d and within two ulps", d, s, got)
		}
		if n := c.Set(s); n != 1 {
			t.Fatalf("%d: Set(NextTimerSeconds()=%v) fired %d timers, want 1", d, s, n)
		}
		if _, ok := fired(tm); !ok {
			t.Fatalf("%d: timer did not fire", d)
		}
	}
}

func TestWaitUntilReturnsWhenTimeReachesTheInstant(t *testing.T) {
	c := New(DefaultEpoch)
	_, changed := c.TimerActivity()
	type result struct {
		now time.Time
		err error
	}
	done := make(chan result, 1)
	go func() {
		now, err := c.WaitUntil(context.Background(), DefaultEpoch.Add(2*time.Second))
		done <- result{now, err}
	}()
	chantest.Recv(t, changed, failAfter, "WaitUntil never registered its timer")
	c.Set(1)
	select {
	case r := <-done:
		t.Fatalf("WaitUntil(2s) returned at 1s: %v, %v", r.now, r.err)
	default:
	}
	c.Set(2.5)
	if r := chantest.Recv(t, done, failAfter, "WaitUntil did not return once the time was reached"); r.err != nil || !r.now.Equal(DefaultEpoch.Add(2500*time.Millisecond)) {
		t.Errorf("got %v, %v; want epoch+2.5s, nil", r.now, r.err)
	}
}

func TestCancelledWaitsLeaveNoTimerBehind(t *testing.T) {
	c := New(DefaultEpoch)
	const n = 200
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := c.WaitUntil(ctx, DefaultEpoch.Add(time.Duration(i+1)*time.Second))
			errs <- err
		}()
	}
	for {
		count, changed := c.TimerActivity()
		if count >= n {
			break
		}
		chantest.Recv(t, changed, failAfter, "only %d of %d waits registered", count, n)
	}
	if got := c.Pending(); got != n {
		t.Fatalf("%d timers pending, want %d", got, n)
	}
	cancel()
	for range n {
		if err := chantest.Recv(t, errs, failAfter, "a cancelled wait did not return"); !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled wait returned %v, want context.Canceled", err)
		}
	}
	if got := c.Pending(); got != 0 {
		t.Errorf("%d timers left behind by cancelled waits, want 0", got)
	}
	if _, ok := c.NextTimer(); ok {
		t.Error("NextTimer() reports a cancelled wait")
	}
}

// Waits cancelled while Set fires them either fire or are removed: no timer
// is lost, none stays behind, under the race detector.
func TestWaitsRacingSetAndCancellation(t *testing.T) {
	c := New(DefaultEpoch)
	const n = 500
	var wg sync.WaitGroup
	var mu sync.Mutex
	woken, cancelled := 0, 0
	for i := range n {
		ctx, cancel := context.WithCancel(context.Background())
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := c.WaitUntil(ctx, DefaultEpoch.Add(time.Duration(i%50+1)*time.Millisecond))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				cancelled++
			} else {
				woken++
			}
		}()
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				cancel()
			}
		}()
		defer cancel()
	}
	for ms := 1; ms <= 60; ms++ {
		c.SetElapsed(time.Duration(ms) * time.Millisecond)
	}
	// Waits registered after the last Set fire at once; the odd ones are
	// never cancelled, so every goroutine returns.
	wg.Wait()
	if woken+cancelled != n || woken < n/2 {
		t.Errorf("woken %d + cancelled %d, want %d in all and at least %d woken", woken, cancelled, n, n/2)
	}
	if got := c.Pending(); got != 0 {
		t.Errorf("%d timers pending, want 0", got)
	}
}

func TestTimerActivityCountsRegistrationsAndCancellations(t *testing.T) {
	c := New(DefaultEpoch)
	n0, ch := c.TimerActivity()
	tm := c.NewTimer(DefaultEpoch.Add(time.Second))
	select {
	case <-ch:
	default:
		t.Fatal("registering a timer did not close the activity channel")
	}
	n1, ch := c.TimerActivity()
	if n1 != n0+1 {
		t.Errorf("activity %d after one registration, want %d", n1, n0+1)
	}
	c.NewTimer(DefaultEpoch) // fires at once: no activity
	select {
	case <-ch:
		t.Error("a timer that fired at once counted as activity")
	default:
	}
	tm.Stop()
	select {
	case <-ch:
	default:
		t.Fatal("stopping a timer did not close the activity channel")
	}
	if n2, _ := c.TimerActivity(); n2 != n1+1 {
		t.Errorf("activity %d after a cancellation, want %d", n2, n1+1)
	}
}

// TestAdvanceLeavesDueTimersToFire: a step moves the clock, applies its
// events at the new time, and only then wakes the timers that are due.
func TestAdvanceLeavesDueTimersToFire(t *testing.T) {
	c := New(DefaultEpoch)
	tm := c.NewTimer(DefaultEpoch.Add(5 * time.Second))
	c.Advance(7)
	if _, ok := fired(tm); ok {
		t.Fatal("Advance fired a due timer")
	}
	if got := c.Seconds(); got != 7 {
		t.Fatalf("after Advance(7): %g s, want 7", got)
	}
	if n := c.Fire(); n != (Fired{Wake: 1}) {
		t.Fatalf("Fire: %+v, want 1 wake timer", n)
	}
	if now, ok := fired(tm); !ok || !now.Equal(DefaultEpoch.Add(7*time.Second)) {
		t.Fatalf("the timer fired %v (%v), want at the current simulated time 7 s", ok, now)
	}
	if n := c.Fire(); n.Total() != 0 {
		t.Fatalf("a second Fire: %+v, want none", n)
	}
}

// TestTimedPausesAskForACallAtTheirInstant: a pause asks for no call
// until TimePauses, then for one at its own instant, where it fires as a
// controller's work (not released early); Stop still finds it.
func TestTimedPausesAskForACallAtTheirInstant(t *testing.T) {
	c := New(DefaultEpoch)
	c.SetElapsed(time.Second)
	early := c.NewTimerOf(Pause, DefaultEpoch.Add(time.Second+3*time.Millisecond), nil)
	stopped := c.NewTimerOf(Pause, DefaultEpoch.Add(time.Second+time.Millisecond), nil)
	late := c.NewTimerOf(Pause, DefaultEpoch.Add(time.Second+10*time.Millisecond), nil)
	if _, ok := c.NextTimerSeconds(); ok {
		t.Fatal("a pause asks for a call before TimePauses")
	}
	if n := c.TimePauses(); n != 3 || c.Pauses() != 0 {
		t.Fatalf("TimePauses moved %d, %d pauses left; want 3, 0", n, c.Pauses())
	}
	if !stopped.Stop() {
		t.Fatal("a timed pause could not be stopped")
	}
	if s, ok := c.NextTimerSeconds(); !ok || FromSeconds(s) != time.Second+3*time.Millisecond {
		t.Fatalf("next call at %v (%v), want 1.003 s", s, ok)
	}
	if n := c.SetElapsed(time.Second + 3*time.Millisecond); n != 1 {
		t.Fatalf("%d timers fired at 1.003 s, want 1", n)
	}
	if now, ok := fired(early); !ok || !now.Equal(DefaultEpoch.Add(time.Second+3*time.Millisecond)) {
		t.Fatalf("the pause fired at %v (%v), want at its own instant", now, ok)
	}
	if _, ok := fired(late); ok {
		t.Fatal("a later pause fired early")
	}
}
