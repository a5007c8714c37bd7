package simclock

import (
	"testing"
	"time"
)

func TestClockFollowsBatsimTime(t *testing.T) {
	c := New(DefaultEpoch)
	if !c.Now().Equal(DefaultEpoch) {
		t.Fatalf("got %v, want the epoch", c.Now())
	}
	c.Set(10.5)
	if got := c.Since(DefaultEpoch); got != 10500*time.Millisecond {
		t.Errorf("after Set(10.5): got %v, want 10.5s", got)
	}
	c.Set(9.999999999) // rounding noise never moves time back
	if got := c.Seconds(); got != 10.5 {
		t.Errorf("time went back to %v", got)
	}
	for s, want := range map[float64]time.Duration{-1: 0, 1e-9: 1, 1e300: 1<<63 - 1} {
		if got := FromSeconds(s); got != want {
			t.Errorf("FromSeconds(%v) = %v, want %v", s, got, want)
		}
	}
}
