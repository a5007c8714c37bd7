// Package timeq is the engine's virtual time (Time): the dates its timers
// are due at, which its event queue (pkg/simtime/timerq) orders.
package timeq

import "math"

// Time is a date in the engine's virtual time: the exact sum of the
// durations of SimGrid's steps, as a double-double (hi + lo, |lo| at most
// half an ulp of hi), which keeps sub-microsecond differences between dates
// of 1e17 seconds, where a double is 16 s coarse. SimGrid's own clock, a
// double, is that sum rounded at each step.
type Time struct{ Hi, Lo float64 }

// Plus returns t + d (+Inf if either is).
func (t Time) Plus(d float64) Time {
	s, e := twoSum(t.Hi, d)
	if s > math.MaxFloat64 || s < -math.MaxFloat64 {
		return Time{s, 0}
	}
	e += t.Lo
	hi := s + e
	return Time{hi, e - (hi - s)}
}

// Minus returns t - u, rounded to a double.
func (t Time) Minus(u Time) float64 {
	s, e := twoSum(t.Hi, -u.Hi)
	return s + (e + (t.Lo - u.Lo))
}

// Before reports whether t < u.
func (t Time) Before(u Time) bool { return t.Hi < u.Hi || t.Hi == u.Hi && t.Lo < u.Lo }

// twoSum returns a + b rounded and its rounding error (Knuth's two-sum,
// branch-free).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}
