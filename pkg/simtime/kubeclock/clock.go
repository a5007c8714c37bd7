// Package clock stands in for k8s.io/utils/clock inside the upstream
// components Batkube builds (kube-controller-manager): the same API, and a
// RealClock that reads Batkube's simulated clock when the process is
// started with BATKUBE_CLOCK, and real time otherwise.
//
// Every Kubernetes controller takes its time from k8s.io/utils/clock — the
// seam upstream's own tests use to fake time: the Job controller's batched
// sync (one second after a pod changes) and its back-off after a failed
// pod (10 s doubling), a Job's activeDeadlineSeconds and
// ttlSecondsAfterFinished, the work queues' delays, the timestamps the
// controllers write in a Job's status. examples/upstream.mk compiles this
// package in place of k8s.io/utils/clock (a copy of that module, made at
// build time from the module cache, whose clock/clock.go is replaced by the
// files of this package); the controllers' code is upstream's, unmodified.
// Without BATKUBE_CLOCK the binary behaves as upstream's: every method of
// RealClock is the time package's.
//
// # Simulated time
//
// With BATKUBE_CLOCK set (the path of the clock page that kubernetes-server
// --clock-file writes, see Page) and BATKUBE_CLOCK_SERVER (the API server's
// URL), the process attaches to the page at start-up (it exits with a
// message if it cannot), and then:
//
//   - Now reads the page: simulated time on the run's epoch, moved by the
//     broker before it applies each instant, so that a controller that sees
//     an event of an instant reads that instant.
//   - Timers, tickers, AfterFunc, After, Sleep wait for simulated instants.
//     The process keeps them in one heap and holds at most two waits on
//     the server's clock (GET /batkube/v1/clock?until=...): one for its
//     earliest work timer, one for its earliest other timer. A timer fires
//     when the server says simulated time has reached it — after the
//     broker has applied that instant's events — never from a reading of
//     the page alone.
//   - Work timers are those the work queues of k8s.io/client-go create for
//     delayed items (AddAfter, a rate-limited retry), and the taint
//     eviction controller's timed evictions: the controllers' own future
//     work. Their wait asks Batsim to wake the simulation at their
//     instant (CALL_ME_LATER), and keeps the simulation going while Jobs
//     are unfinished. Every other timer (periodic loops, tickers,
//     informers' resyncs, retries after errors) is passive: it fires when
//     simulated time passes it for another reason, and never costs a step.
//
// Limits: code that reads time.Now directly (not this clock) keeps real
// time — among kube-controller-manager's controllers, the conditions of
// Deployments and ReplicaSets (metav1.Now) and a Deployment's progress
// deadline. Polls built on the time package (cache.WaitForCacheSync) run
// in real time, which is what lets the process start while simulated time
// stands still.
package clock

import "time"

// PassiveClock reads the time.
type PassiveClock interface {
	Now() time.Time
	Since(time.Time) time.Duration
}

// Clock reads the time and waits.
type Clock interface {
	PassiveClock
	// After returns the channel of a new Timer.
	After(d time.Duration) <-chan time.Time
	// NewTimer returns a new Timer.
	NewTimer(d time.Duration) Timer
	// Sleep sleeps for d.
	Sleep(d time.Duration)
	// Tick returns the channel of a new Ticker.
	Tick(d time.Duration) <-chan time.Time
}

// WithTicker is a Clock with tickers.
type WithTicker interface {
	Clock
	// NewTicker returns a new Ticker.
	NewTicker(time.Duration) Ticker
}

// WithDelayedExecution is a Clock with AfterFunc.
type WithDelayedExecution interface {
	Clock
	// AfterFunc runs f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// WithTickerAndDelayedExecution is a Clock with tickers and AfterFunc.
type WithTickerAndDelayedExecution interface {
	WithTicker
	// AfterFunc runs f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Ticker ticks on its channel until stopped.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Timer fires once on its channel, unless stopped.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

var (
	_ = WithTicker(RealClock{})
	_ = WithTickerAndDelayedExecution(RealClock{})
)

// RealClock is the process's clock: simulated time when the process was
// started with BATKUBE_CLOCK, the time package's otherwise.
type RealClock struct{}

// Now returns the current time.
func (RealClock) Now() time.Time {
	if s := process; s != nil {
		return s.now()
	}
	return time.Now()
}

// Since returns the time elapsed since ts.
func (c RealClock) Since(ts time.Time) time.Duration {
	if process != nil {
		return c.Now().Sub(ts)
	}
	return time.Since(ts)
}

// After returns the channel of a new Timer of d.
func (RealClock) After(d time.Duration) <-chan time.Time {
	if s := process; s != nil {
		return s.newTimer(d, nil, callerOf()).C()
	}
	return time.After(d)
}

// QueueAfter is After for controller-runtime's priority queue named
// queue: the upstream builds rewrite the queue's tick to it (make's
// priorityqueue_clock), so that its delayed items are classed by the
// queue's controller (queueCallerKind) rather than by the queue's code,
// which every controller shares.
func QueueAfter(queue string) func(time.Duration) <-chan time.Time {
	kind := queueCallerKind(queue)
	return func(d time.Duration) <-chan time.Time {
		if s := process; s != nil {
			return s.newTimer(d, nil, kind).C()
		}
		return time.After(d)
	}
}

// NewTimer returns a Timer that fires after d.
func (RealClock) NewTimer(d time.Duration) Timer {
	if s := process; s != nil {
		return s.newTimer(d, nil, callerOf())
	}
	return &realTimer{timer: time.NewTimer(d)}
}

// AfterFunc runs f in its own goroutine after d.
func (RealClock) AfterFunc(d time.Duration, f func()) Timer {
	if s := process; s != nil {
		return s.newTimer(d, f, callerOf())
	}
	return &realTimer{timer: time.AfterFunc(d, f)}
}

// Tick returns the channel of a new Ticker of d (nil if d <= 0).
func (RealClock) Tick(d time.Duration) <-chan time.Time {
	if s := process; s != nil {
		if d <= 0 {
			return nil
		}
		return s.newTicker(d).C()
	}
	return time.Tick(d)
}

// NewTicker returns a Ticker of period d; it panics if d <= 0, as
// time.NewTicker does.
func (RealClock) NewTicker(d time.Duration) Ticker {
	if s := process; s != nil {
		if d <= 0 {
			panic("non-positive interval for NewTicker")
		}
		return s.newTicker(d)
	}
	return &realTicker{ticker: time.NewTicker(d)}
}

// Sleep blocks for d.
func (RealClock) Sleep(d time.Duration) {
	if s := process; s != nil {
		if d > 0 {
			<-s.newTimer(d, nil, callerOf()).C()
		}
		return
	}
	time.Sleep(d)
}

// realTimer is a time.Timer.
type realTimer struct {
	timer *time.Timer
}

func (r *realTimer) C() <-chan time.Time        { return r.timer.C }
func (r *realTimer) Stop() bool                 { return r.timer.Stop() }
func (r *realTimer) Reset(d time.Duration) bool { return r.timer.Reset(d) }

// realTicker is a time.Ticker.
type realTicker struct {
	ticker *time.Ticker
}

func (r *realTicker) C() <-chan time.Time { return r.ticker.C }
func (r *realTicker) Stop()               { r.ticker.Stop() }
