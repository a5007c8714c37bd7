// Package simclock is the simulated clock of a Batkube run: simulated seconds,
// as Batsim counts them, mapped onto a fixed epoch so that object timestamps
// are reproducible.
package simclock

import (
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// DefaultEpoch is the wall-clock instant of simulated time 0.
var DefaultEpoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// Clock is a simulated clock. It implements clock.PassiveClock, so it can
// stamp the objects of the API server.
type Clock struct {
	epoch time.Time
	mu    sync.RWMutex
	now   time.Duration // since epoch
}

var _ clock.PassiveClock = (*Clock)(nil)

// New returns a clock at simulated time 0 on epoch.
func New(epoch time.Time) *Clock { return &Clock{epoch: epoch} }

// Now returns the current simulated instant.
func (c *Clock) Now() time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.epoch.Add(c.now)
}

// Since returns the simulated time elapsed since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Seconds returns the simulated time in seconds, as Batsim writes it.
func (c *Clock) Seconds() float64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.now.Seconds()
}

// Set moves the clock to simulated second s. Time never goes back: a smaller
// s (rounding noise) is ignored.
func (c *Clock) Set(s float64) {
	d := FromSeconds(s)
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > c.now {
		c.now = d
	}
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
