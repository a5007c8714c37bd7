package simclock

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/batkube/batkube/pkg/simtime/timerq"
)

// DefaultEpoch is the wall-clock instant of simulated time 0.
var DefaultEpoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// Clock is a simulated clock. It implements clock.PassiveClock, so it can
// stamp the objects of the API server, and it keeps timers: instants that
// someone waits for. Only Set moves it; Set fires the timers that are due.
//
// All methods are safe for concurrent use.
type Clock struct {
	epoch time.Time

	mu  sync.RWMutex
	now time.Duration // since epoch, saturated (at some 292 years)
	// secs is simulated time in seconds as Batsim gives it (a double):
	// Batsim's dates go far beyond what a Duration holds (1e17 s).
	secs float64

	// timers are the pending timers of each kind, earliest first, in
	// registration order at one instant.
	timers [kinds]timerq.Queue[*Timer]
	// activity counts registrations and cancellations of Wake timers;
	// changed, when not nil, is closed at the next one.
	activity uint64
	changed  chan struct{}
	// mirror, when set, is told every move of the clock (Mirror).
	mirror func(time.Duration)
}

// Kind says what a timer asks of the simulation.
type Kind uint8

const (
	// Wake is a time-virtualised scheduler's timer: the broker asks Batsim
	// for a call at its instant, as long as the simulation has jobs to
	// run; it counts as the scheduler's activity (TimerActivity, Pending).
	Wake Kind = iota
	// Work is a controller's pending work (a Job's batched sync, its
	// back-off after a failed pod): a call at its instant, and the
	// simulation is not over while controllers have unfinished objects
	// and such a timer is pending (NextWorkSeconds).
	Work
	// Passive fires when simulated time passes its instant, and asks for
	// nothing: a controller's periodic loops and retries.
	Passive
	// Pause is a scheduling loop's pause between two cycles that admitted
	// nothing (Kueue's, 1 to 10 ms): it asks for nothing and fires when
	// simulated time passes its instant, or earlier when the broker
	// releases it (ReleasePauses) because something changed since the
	// loop's last cycle.
	Pause
	kinds = iota
)

var kindNames = [kinds]string{Wake: "wake", Work: "work", Passive: "passive", Pause: "pause"}

// String returns the kind's name, as timeservice's kind parameter gives it.
func (k Kind) String() string {
	if k < kinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// ParseKind reads a kind's name.
func ParseKind(s string) (Kind, error) {
	for k, name := range kindNames {
		if s == name {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("unknown kind of timer %q (want one of %q)", s, kindNames)
}

var _ clock.PassiveClock = (*Clock)(nil)

// New returns a clock at simulated time 0 on epoch.
func New(epoch time.Time) *Clock { return &Clock{epoch: epoch} }

// Epoch returns the instant of simulated time 0.
func (c *Clock) Epoch() time.Time { return c.epoch }

// Now returns the current simulated instant.
func (c *Clock) Now() time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.epoch.Add(c.now)
}

// Since returns the simulated time elapsed since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Elapsed returns the simulated time since the start of the simulation,
// exact to the nanosecond.
func (c *Clock) Elapsed() time.Duration {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.now
}

// Seconds returns the simulated time in seconds, as Batsim writes it
// (beyond what a Duration holds: object timestamps, Now, saturate at some
// 292 years from the epoch, Seconds does not).
func (c *Clock) Seconds() float64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.secs
}

// Mirror makes set follow the clock: it is called with the current
// simulated time now and at every move (under the clock's lock, before the
// timers then due fire: it must be quick and must not use the clock).
// The run's clock page (kubeclock.Page.Set) follows the clock so.
func (c *Clock) Mirror(set func(time.Duration)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mirror = set
	if set != nil {
		set(c.now)
	}
}

// Set moves the clock to simulated second s and fires the timers that are
// then due, earliest first. Time never goes back: a smaller s (rounding
// noise) is ignored. Set returns how many Wake and Work timers fired.
func (c *Clock) Set(s float64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advanceLocked(FromSeconds(s))
	c.secs = max(c.secs, s)
	return c.fireLocked().Total()
}

// SetElapsed is Set with an exact duration since the start of the simulation.
func (c *Clock) SetElapsed(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advanceLocked(d)
	return c.fireLocked().Total()
}

// Advance moves the clock to simulated second s like Set, but leaves the
// timers that are then due to Fire: a step applies what happened at s
// first, so that a scheduler woken at s sees it.
func (c *Clock) Advance(s float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advanceLocked(FromSeconds(s))
	c.secs = max(c.secs, s)
}

// Fired counts the timers a Fire fired that someone acts on.
type Fired struct {
	// Wake counts time-virtualised schedulers' timers: the scheduler may
	// act at this step whether or not a pod is pending.
	Wake int
	// Work counts controllers' pending work: the controllers' barrier
	// sees to it.
	Work int
}

// Total is how many Wake and Work timers fired.
func (f Fired) Total() int { return f.Wake + f.Work }

// Fire fires the timers due at the current simulated time, earliest first,
// and counts the Wake and Work ones among them.
func (c *Clock) Fire() Fired {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fireLocked()
}

func (c *Clock) advanceLocked(d time.Duration) {
	if d > c.now {
		c.now = d
		c.secs = max(c.secs, d.Seconds())
		if c.mirror != nil {
			c.mirror(d)
		}
	}
}

// fireLocked fires the due timers of every kind, earliest first, and
// counts the Wake and Work ones (those a scheduler or a controller acts
// on at this step).
func (c *Clock) fireLocked() Fired {
	now := c.epoch.Add(c.now)
	var fired Fired
	for {
		q := c.earliestLocked(Wake, Work, Passive, Pause)
		if q == nil || q.Peek().Value.at > c.now {
			return fired
		}
		t := q.Pop().Value
		t.fire(now)
		switch t.kind {
		case Wake:
			fired.Wake++
		case Work:
			fired.Work++
		}
	}
}

// earliestLocked returns the queue, among those of kinds, whose first
// timer is due first (nil if they are all empty).
func (c *Clock) earliestLocked(kinds ...Kind) *timerq.Queue[*Timer] {
	var best *timerq.Queue[*Timer]
	for _, k := range kinds {
		q := &c.timers[k]
		if next := q.Peek(); next != nil && (best == nil || next.Value.at < best.Peek().Value.at) {
			best = q
		}
	}
	return best
}

// NewTimer registers a Wake timer that fires when simulated time reaches
// at: the simulated instant it fired at is then sent on its channel C. A
// timer whose instant has already been reached fires at once.
func (c *Clock) NewTimer(at time.Time) *Timer { return c.NewTimerOf(Wake, at, nil) }

// NewTimerOf registers a timer of a kind. onFire, if not nil, is called
// when it fires, under the clock's lock and before the instant is sent on
// C: it must be quick and must not use the clock (the API server counts a
// parked request in progress again with it, so that no moment is left
// where the request neither waits nor counts).
func (c *Clock) NewTimerOf(kind Kind, at time.Time, onFire func()) *Timer {
	ch := make(chan time.Time, 1)
	t := &Timer{C: ch, c: ch, clock: c, at: at.Sub(c.epoch), kind: kind, onFire: onFire}
	t.item.Value = t
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.at <= c.now {
		t.fire(c.epoch.Add(c.now))
		return t
	}
	c.timers[kind].Schedule(&t.item, timerq.FromInt64(int64(t.at))) // in nanoseconds, exactly
	if kind == Wake {
		c.changedLocked()
	}
	return t
}

// WaitUntil blocks until simulated time reaches at and returns the
// simulated instant that woke it. If ctx ends first, its timer is removed
// and WaitUntil returns an error wrapping ctx.Err().
func (c *Clock) WaitUntil(ctx context.Context, at time.Time) (time.Time, error) {
	t := c.NewTimer(at)
	select {
	case now := <-t.C:
		return now, nil
	case <-ctx.Done():
		if t.Stop() {
			return time.Time{}, fmt.Errorf("simclock: waiting until %s: %w", at.Format(time.RFC3339Nano), ctx.Err())
		}
		return <-t.C, nil // it fired meanwhile
	}
}

// NextTimer returns the instant of the earliest pending timer that asks
// for a call (Wake or Work); ok is false when none is pending.
func (c *Clock) NextTimer() (at time.Time, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	q := c.earliestLocked(Wake, Work)
	if q == nil {
		return time.Time{}, false
	}
	return c.epoch.Add(q.Peek().Value.at), true
}

// NextTimerSeconds returns the earliest pending timer that asks for a call
// (Wake or Work) in protocol seconds, for a CALL_ME_LATER, rounded up so
// that Set(s) fires the timer (see ToSeconds).
func (c *Clock) NextTimerSeconds() (s float64, ok bool) {
	return c.nextSeconds(Wake, Work)
}

// NextWorkSeconds is NextTimerSeconds for Work timers alone: the
// controllers' pending work.
func (c *Clock) NextWorkSeconds() (s float64, ok bool) { return c.nextSeconds(Work) }

func (c *Clock) nextSeconds(kinds ...Kind) (float64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	q := c.earliestLocked(kinds...)
	if q == nil {
		return 0, false
	}
	return ToSeconds(q.Peek().Value.at), true
}

// Pauses returns the number of pending Pause timers.
func (c *Clock) Pauses() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.timers[Pause].Len()
}

// ReleasePauses fires every pending Pause timer now, before its instant,
// and returns how many fired: the current simulated instant is sent on
// their channels (earlier than When).
func (c *Clock) ReleasePauses() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.epoch.Add(c.now)
	n := 0
	for q := &c.timers[Pause]; q.Len() > 0; n++ {
		q.Pop().Value.fire(now)
	}
	return n
}

// TimePauses gives every pending Pause timer its own instant back: it
// becomes a Work timer, which asks for a call at that instant
// (NextTimerSeconds), so that simulated time moves on by the pause's
// own length (Kueue's 1 to 10 ms) rather than past it or not at all.
// It returns how many it moved.
func (c *Clock) TimePauses() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for q := &c.timers[Pause]; q.Len() > 0; n++ {
		t := q.Pop().Value
		t.kind = Work
		c.timers[Work].Schedule(&t.item, timerq.FromInt64(int64(t.at)))
	}
	return n
}

// Pending returns the number of pending Wake timers: those of
// time-virtualised schedulers.
func (c *Clock) Pending() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.timers[Wake].Len()
}

// TimerActivity returns how many Wake timers have been registered or
// cancelled so far, and a channel closed at the next registration or
// cancellation.
// The broker counts this as activity of a time-virtualised scheduler, the
// way it counts writes to the API.
func (c *Clock) TimerActivity() (count uint64, changed <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.activity, c.changed
}

func (c *Clock) changedLocked() {
	c.activity++
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// Timer is a pending instant of a Clock.
type Timer struct {
	// C receives the simulated instant the timer fired at (once).
	C <-chan time.Time

	c      chan time.Time
	clock  *Clock
	at     time.Duration       // since the epoch
	kind   Kind                // its queue
	onFire func()              // see NewTimerOf
	item   timerq.Item[*Timer] // queued until fired or stopped
}

// fire sends now on the timer's channel (buffered: a timer fires once).
func (t *Timer) fire(now time.Time) {
	if t.onFire != nil {
		t.onFire()
	}
	t.c <- now
}

// When returns the instant the timer fires at.
func (t *Timer) When() time.Time { return t.clock.epoch.Add(t.at) }

// Stop removes the timer from its clock. It reports whether the call stopped
// the timer; false means it had already fired (its instant is in C unless
// received already) or been stopped.
func (t *Timer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.timers[t.kind].Cancel(&t.item) {
		return false
	}
	if t.kind == Wake {
		c.changedLocked()
	}
	return true
}

// FromSeconds converts protocol seconds to a duration, rounded to the
// nanosecond.
func FromSeconds(s float64) time.Duration {
	if s <= 0 || math.IsNaN(s) {
		return 0
	}
	if s >= math.MaxInt64/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(math.Round(s * float64(time.Second)))
}

// ToSeconds converts a duration to protocol seconds, rounding up: it returns
// d.Seconds(), moved up by the fewest float steps needed for
// FromSeconds(s) >= d, so that a CALL_ME_LATER at s, set back on the clock,
// reaches d (a plain conversion may come back a nanosecond short). Below
// 2^22 s (48 days), where a float64 still resolves the nanosecond,
// FromSeconds(ToSeconds(d)) == d; beyond, s overshoots d by at most a few ns.
func ToSeconds(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	s := d.Seconds()
	for FromSeconds(s) < d {
		s = math.Nextafter(s, math.Inf(1))
	}
	return s
}
