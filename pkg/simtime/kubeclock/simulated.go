package clock

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// The environment of a process whose clock is simulated.
const (
	// EnvPage names the clock page (kubernetes-server --clock-file).
	EnvPage = "BATKUBE_CLOCK"
	// EnvServer is the URL of the API server that serves the clock
	// (http://127.0.0.1:8001).
	EnvServer = "BATKUBE_CLOCK_SERVER"
)

// ClockPath is where the API server serves the simulated clock (package
// timeservice).
const ClockPath = "/batkube/v1/clock"

// The kinds of wait on the server's clock (its "kind" parameter).
const (
	// KindWork: the instant asks Batsim for a call and keeps the
	// simulation going while controllers have unfinished work.
	KindWork = "work"
	// KindPassive: the wait ends when simulated time passes the instant,
	// without asking for a call.
	KindPassive = "passive"
	// KindPause: a passive wait that the broker may also end before its
	// instant ("released") once every process is idle and something
	// changed since the last release.
	KindPause = "pause"
)

// process is this process's simulated clock; nil when its time is real.
// It is set once, before main runs.
var process *simulated

func init() {
	path := os.Getenv(EnvPage)
	if path == "" {
		return
	}
	s, err := attach(path, os.Getenv(EnvServer), nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "the simulated clock of %s=%s cannot be used: %v\n", EnvPage, path, err)
		os.Exit(1)
	}
	process = s
	go s.run()
}

// simulated is a clock on the page of a run, whose timers fire when the
// server says simulated time reached them.
type simulated struct {
	page   *Page
	epoch  time.Time
	server string
	client *http.Client

	mu sync.Mutex
	// timers are the pending timers of each class.
	timers [classes]timerHeap
	seq    uint64
	// reached is the latest simulated time the server said the clock
	// reached: timers at or before it are due.
	reached time.Duration
	// kick wakes run when the timers changed; stopped ends it (tests).
	kick    chan struct{}
	stopped chan struct{}
	// errs are the errors of waits already reported.
	errs map[string]bool
}

// The classes of timers, and of waits on the server.
const (
	passive = iota
	work
	pause
	classes
)

var kinds = [classes]string{passive: KindPassive, work: KindWork, pause: KindPause}

// attach maps the page at path and counts this process among its
// processes.
func attach(path, server string, client *http.Client) (*simulated, error) {
	if server == "" {
		return nil, fmt.Errorf("%s is not set: the API server's URL is needed to wait for simulated instants", EnvServer)
	}
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s=%q is not an http(s) URL", EnvServer, server)
	}
	page, err := OpenPage(path)
	if err != nil {
		return nil, err
	}
	if client == nil {
		client = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 2, DisableCompression: true}}
	}
	page.attach()
	return &simulated{page: page, epoch: page.Epoch(), server: strings.TrimSuffix(server, "/"), client: client,
		kick: make(chan struct{}, 1), stopped: make(chan struct{}), errs: map[string]bool{}}, nil
}

// now is the simulated time the page says.
func (s *simulated) now() time.Time { return s.epoch.Add(s.page.Elapsed()) }

// newTimer schedules a timer d from now for a caller of the given kind;
// f, if not nil, runs in its own goroutine instead of a send on the timer's
// channel.
func (s *simulated) newTimer(d time.Duration, f func(), caller callerKind) *simTimer {
	t := &simTimer{s: s, f: f, index: -1}
	switch caller {
	case workCaller:
		t.class = work
	case pauseCaller:
		t.class = pause
	}
	if f == nil {
		t.c = make(chan time.Time, 1)
	}
	s.mu.Lock()
	s.scheduleLocked(t, d)
	s.mu.Unlock()
	return t
}

// newTicker schedules a ticker of period d > 0.
func (s *simulated) newTicker(d time.Duration) *simTicker {
	t := &simTimer{s: s, period: d, c: make(chan time.Time, 1), index: -1}
	s.mu.Lock()
	s.scheduleLocked(t, d)
	s.mu.Unlock()
	return &simTicker{t}
}

func (s *simulated) scheduleLocked(t *simTimer, d time.Duration) {
	if d <= 0 {
		t.fireLocked(s.now())
		return
	}
	now := s.page.Elapsed()
	t.at = now + d
	if t.at < now { // overflow: never
		t.at = math.MaxInt64
	}
	s.pushLocked(t)
}

func (s *simulated) pushLocked(t *simTimer) {
	t.seq = s.seq
	s.seq++
	heap.Push(&s.timers[t.class], t)
	s.kickLocked()
}

// kickLocked wakes run: the timers changed.
func (s *simulated) kickLocked() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// fireDueLocked fires the timers at or before s.reached, earliest first;
// a ticker is scheduled again at its next period after it (ticks missed
// meanwhile are dropped, as Go's tickers drop them for a slow receiver).
func (s *simulated) fireDueLocked() {
	now := s.now()
	for {
		h := s.earliestHeapLocked()
		if h == nil || (*h)[0].at > s.reached {
			return
		}
		t := heap.Pop(h).(*simTimer)
		t.fireLocked(now)
		if t.period > 0 {
			missed := (s.reached - t.at) / t.period
			t.at += (missed + 1) * t.period
			s.pushLocked(t)
		}
	}
}

// earliestHeapLocked is the heap whose first timer is due first (nil when
// no timer is pending).
func (s *simulated) earliestHeapLocked() *timerHeap {
	var best *timerHeap
	for i := range s.timers {
		h := &s.timers[i]
		if len(*h) > 0 && (best == nil || (*h)[0].less((*best)[0])) {
			best = h
		}
	}
	return best
}

// run keeps one wait on the server for the earliest timer of each class,
// and fires the timers the server says are due.
func (s *simulated) run() {
	var waits [classes]*wait
	done := make(chan waitResult)
	for {
		s.mu.Lock()
		s.fireDueLocked()
		var next [classes]time.Duration
		for class := range s.timers {
			next[class] = -1
			if h := s.timers[class]; len(h) > 0 {
				next[class] = h[0].at
			}
		}
		s.mu.Unlock()
		for class, want := range next {
			cur := waits[class]
			switch {
			case want < 0 && cur != nil:
				cur.cancel()
				waits[class] = nil
			case want >= 0 && (cur == nil || cur.at > want):
				// A wait for a later instant is replaced; one for an
				// earlier instant is kept (it ends early, and the next
				// is then asked for).
				if cur != nil {
					cur.cancel()
				}
				waits[class] = s.startWait(class, want, done)
			}
		}
		select {
		case <-s.stopped:
			for _, w := range waits {
				if w != nil {
					w.cancel()
				}
			}
			return
		case <-s.kick:
		case r := <-done:
			if waits[r.class] == r.wait {
				waits[r.class] = nil
			}
			switch {
			case r.err == nil && r.released:
				s.mu.Lock()
				s.releaseLocked(r.wait.at)
				s.mu.Unlock()
			case r.err == nil:
				s.mu.Lock()
				s.reached = max(s.reached, r.reached)
				s.mu.Unlock()
			}
		}
	}
}

// wait is one wait on the server's clock.
type wait struct {
	at     time.Duration
	cancel context.CancelFunc
}

type waitResult struct {
	class   int
	wait    *wait
	reached time.Duration
	// released: the server ended a pause before its instant.
	released bool
	err      error
}

// startWait waits on the server until simulated time reaches at, retrying
// failed requests (10 ms doubling to 1 s of real time) until it succeeds
// or is cancelled, and sends the outcome on done.
func (s *simulated) startWait(class int, at time.Duration, done chan<- waitResult) *wait {
	ctx, cancel := context.WithCancel(context.Background())
	w := &wait{at: at, cancel: cancel}
	go func() {
		backoff := 10 * time.Millisecond
		for {
			reached, released, err := s.waitOnce(ctx, class, at)
			if err == nil || ctx.Err() != nil {
				select {
				case done <- waitResult{class: class, wait: w, reached: reached, released: released, err: err}:
				case <-s.stopped:
				}
				return
			}
			s.report(err)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				select {
				case done <- waitResult{class: class, wait: w, err: ctx.Err()}:
				case <-s.stopped:
				}
				return
			}
			backoff = min(2*backoff, time.Second)
		}
	}()
	return w
}

// waitOnce is one request: GET /batkube/v1/clock?until=...&kind=...; it
// returns the simulated time that ended the wait, and whether the server
// released it (a pause) before its instant.
func (s *simulated) waitOnce(ctx context.Context, class int, at time.Duration) (reached time.Duration, released bool, err error) {
	q := url.Values{"until": {s.epoch.Add(at).UTC().Format(time.RFC3339Nano)}, "kind": {kinds[class]}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.server+ClockPath+"?"+q.Encode(), nil)
	if err != nil {
		return 0, false, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, false, fmt.Errorf("waiting for %s: %w", q.Get("until"), err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, false, fmt.Errorf("waiting for %s: %s: %s", q.Get("until"), resp.Status, strings.TrimSpace(string(body)))
	}
	var reading struct {
		Nanoseconds *int64 `json:"nanoseconds"`
		Released    bool   `json:"released"`
	}
	if err := json.Unmarshal(body, &reading); err != nil || reading.Nanoseconds == nil {
		return 0, false, fmt.Errorf("waiting for %s: not a reading of the clock: %q", q.Get("until"), body)
	}
	d := time.Duration(*reading.Nanoseconds)
	switch {
	case reading.Released && class != pause:
		return 0, false, fmt.Errorf("waiting for %s: released at %v, but only pauses are released", q.Get("until"), d)
	case reading.Released:
		return d, true, nil
	case d < at:
		return 0, false, fmt.Errorf("waiting for %s: woken at %v, before it", q.Get("until"), d)
	}
	return d, false, nil
}

// releaseLocked fires the pauses at or before at: the server released the
// wait for at. (Pauses are timers, never tickers: newTicker's are passive.)
func (s *simulated) releaseLocked(at time.Duration) {
	now := s.now()
	for h := &s.timers[pause]; len(*h) > 0 && (*h)[0].at <= at; {
		heap.Pop(h).(*simTimer).fireLocked(now)
	}
}

// report writes an error of a wait to standard error, once for each
// message.
func (s *simulated) report(err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	s.mu.Lock()
	seen := s.errs[err.Error()]
	s.errs[err.Error()] = true
	s.mu.Unlock()
	if !seen {
		fmt.Fprintf(os.Stderr, "simulated clock: %v (retrying)\n", err)
	}
}

// simTimer is a timer (or, with a period, a ticker) of a simulated clock.
type simTimer struct {
	s      *simulated
	c      chan time.Time
	f      func()
	period time.Duration
	class  int
	at     time.Duration // since the epoch
	seq    uint64        // order among timers of one instant
	index  int           // in its heap; -1 when not pending
}

func (t *simTimer) less(u *simTimer) bool {
	return t.at < u.at || (t.at == u.at && t.seq < u.seq)
}

func (t *simTimer) fireLocked(now time.Time) {
	if t.f != nil {
		go t.f()
		return
	}
	select {
	case t.c <- now:
	default: // a ticker's receiver is behind: the tick is dropped
	}
}

// C returns the timer's channel (nil for AfterFunc's, as the time
// package's).
func (t *simTimer) C() <-chan time.Time { return t.c }

// Stop stops the timer. It reports whether the timer was active: pending,
// or fired with its value not received yet (which is then dropped: after
// Stop no stale value is received, as with Go's timers since 1.23).
func (t *simTimer) Stop() bool {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return t.stopLocked()
}

func (t *simTimer) stopLocked() bool {
	active := t.index >= 0
	if active {
		heap.Remove(&t.s.timers[t.class], t.index)
		t.s.kickLocked()
	}
	if t.c != nil {
		select {
		case <-t.c:
			active = true
		default:
		}
	}
	return active
}

// Reset stops the timer and schedules it d from now; it reports what Stop
// would.
func (t *simTimer) Reset(d time.Duration) bool {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	active := t.stopLocked()
	t.s.scheduleLocked(t, d)
	return active
}

// simTicker is a ticker of a simulated clock.
type simTicker struct{ t *simTimer }

func (k *simTicker) C() <-chan time.Time { return k.t.c }
func (k *simTicker) Stop()               { k.t.Stop() }

// timerHeap orders timers by instant, then by scheduling order.
type timerHeap []*simTimer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].less(h[j]) }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*simTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// callerKind says what a timer's caller waits for.
type callerKind int

const (
	// passiveCaller: anything else (periodic loops, informer resyncs,
	// retries after errors): its timers fire when simulated time passes
	// them.
	passiveCaller callerKind = iota
	// workCaller: a controller's future work, a delayed item of a work
	// queue: its instant asks Batsim for a call.
	workCaller
	// pauseCaller: a scheduling loop's pause before its next cycle: it
	// ends when simulated time passes it, or when the broker releases it.
	pauseCaller
)

// callerOf says what the clock's caller waits for, from the first frame
// outside this package (and its wrappers).
func callerOf() callerKind {
	var pcs [8]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !isClockFrame(f.Function) {
			return callerKindAt(f.Function, f.Line)
		}
		if !more {
			return passiveCaller
		}
	}
}

// callerKindOf classifies a caller's function: the work queues of
// k8s.io/client-go and of controller-runtime (its priority queue) and the
// taint eviction controller's timed evictions are work; Kueue's scheduling
// loop (its pause of 1 to 10 ms after a cycle that admitted nothing) is a
// pause; the rest is passive.
//
// Kueue's pause is neither work nor passive. As work, each pause of a
// loop whose head Workload waits for room (StrictFIFO) is a step of 10
// simulated ms: real time. As passive (or no pause at all), the loop
// misses what the pause waited for: the room a preempted Job's pods free
// at Batsim's next answer, within the same instant. A pause ends at its
// instant, or when the broker, every process idle, sees that the store or
// the clock moved since it last released the pauses (package broker).
func callerKindOf(fn string) callerKind {
	for _, prefix := range []string{
		"k8s.io/client-go/util/workqueue.",
		"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.",
		"k8s.io/kubernetes/pkg/controller/tainteviction.",
	} {
		if strings.HasPrefix(fn, prefix) {
			return workCaller
		}
	}
	if strings.HasPrefix(fn, "sigs.k8s.io/kueue/pkg/util/wait.") {
		return pauseCaller
	}
	return passiveCaller
}

// callerKindAt is callerKindOf for the caller's function fn at line:
// Karpenter's waits that end in a decision are work too, so that the
// decision comes at their instant rather than at the next step that
// something else asks for:
//   - the provisioner's batch window (provisioning.Batcher.Wait): once a
//     pod has triggered it, its idle timer (BATCH_IDLE_DURATION, reset by
//     every trigger) and its maximum (BATCH_MAX_DURATION) end in the
//     scheduling simulation that creates NodeClaims; its first timer, a
//     1 s wait for a trigger that the provisioner's loop starts again and
//     again while no pod is pending, stays passive (it would cost a step
//     a second), told apart by its line (karpenterBatcherTriggerLine);
//   - disruption's validation period before it carries out a command
//     (EmptinessValidator.Validate, ConsolidationValidator.isValid:
//     clock.After(15 s)), at whose end the nodes are deleted;
//   - the NodeClaim lifecycle controller's second of sleep after each
//     status patch (lifecycle.(*Controller).Reconcile: clock.Sleep(1 s)),
//     during which that NodeClaim's next reconcile (its registration,
//     which lifts the unregistered taint, or its initialisation) waits:
//     as passive, it ended at the next step, however later.
func callerKindAt(fn string, line int) callerKind {
	if strings.HasPrefix(fn, karpenterBatcher) && strings.HasSuffix(fn, ").Wait") {
		if line == karpenterBatcherTriggerLine {
			return passiveCaller
		}
		return workCaller
	}
	for _, f := range karpenterWorkCallers {
		if fn == f {
			return workCaller
		}
	}
	return callerKindOf(fn)
}

// queueCallerKind classifies the delayed items of the controller-runtime
// priority queue of the controller named queue (QueueAfter): a
// controller's future work, but for the controllers whose periodic
// reconciles only refresh Prometheus metrics. Theirs are passive: they run
// when simulated time passes them, within a step something else asks for,
// and nothing the simulation records depends on their instant. As work,
// each was a step: every node's status every 10 s, every NodePool's and
// NodeClaim's too (two fifths of the timers Karpenter set, a quarter of
// the steps, over three hours of the day-long example).
//
//   - Karpenter's metrics controllers (metrics.node, metrics.nodepool,
//     metrics.pod): each reconcile reads its object from the informer's
//     cache and sets gauges; they write nothing to the API.
//   - operatorpkg's status controllers (operatorpkg.<kind>.status, for
//     Karpenter's Nodes, NodeClaims and NodePools): each reconcile sets
//     gauges from the object's conditions and records an Event when it
//     sees a condition change since its last look. A change reaches it
//     through its watch on the object, as a reconcile at once (not a
//     delayed item), which records the Event at the change's instant; the
//     10 s requeue after it finds nothing new but the gauges' ages.
func queueCallerKind(queue string) callerKind {
	if slices.Contains(metricsOnlyQueues, queue) ||
		(strings.HasPrefix(queue, "operatorpkg.") && strings.HasSuffix(queue, ".status")) {
		return passiveCaller
	}
	return workCaller
}

// metricsOnlyQueues are the queues of Karpenter v1.15.0's controllers
// that only compute metrics (pkg/controllers/metrics: each controller's
// Name()).
var metricsOnlyQueues = []string{"metrics.node", "metrics.nodepool", "metrics.pod"}

// Karpenter's functions whose timers are work (callerKindAt), as
// runtime.Frame names them.
const (
	karpenterBatcher = "sigs.k8s.io/karpenter/pkg/controllers/provisioning.(*Batcher["
	// karpenterBatcherTriggerLine is the line of Batcher.Wait's first
	// timer, `timeout := b.clk.NewTimer(time.Second)`, in Karpenter
	// v1.15.0's pkg/controllers/provisioning/batcher.go (make karpenter
	// checks it, so that another version fails the build rather than
	// costing a step a second).
	karpenterBatcherTriggerLine = 89
)

// karpenterWorkCallers are the functions of Karpenter whose timers are
// work wherever they are set (callerKindAt), as runtime.Frame names them.
var karpenterWorkCallers = []string{
	"sigs.k8s.io/karpenter/pkg/controllers/disruption.(*EmptinessValidator).Validate",
	"sigs.k8s.io/karpenter/pkg/controllers/disruption.(*ConsolidationValidator).isValid",
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/lifecycle.(*Controller).Reconcile",
}

// isClockFrame: a function of this package, under the import path it is
// compiled at (k8s.io/utils/clock in the upstream binaries).
func isClockFrame(fn string) bool {
	return strings.HasPrefix(fn, "k8s.io/utils/clock.") || strings.HasPrefix(fn, thisPackage+".")
}

// thisPackage is this package's import path where it is not compiled as
// k8s.io/utils/clock.
const thisPackage = "github.com/batkube/batkube/pkg/simtime/kubeclock"
