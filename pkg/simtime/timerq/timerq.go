// Package timerq is the queue of timers of simulated time, the embedded
// engine's (pkg/engine) and the simulated clock's (simclock): timers ordered
// by their due date (a Time), timers of one date in the order they were
// scheduled. Timers can be moved and cancelled in O(log n).
//
// One queue serves both without a queue generic over the date, which made
// the engine 4 % slower a delay job and 25 % slower a job whose end crosses
// the network (its comparisons went through the instantiation's
// dictionary): the engine's dates are seconds of virtual time, sums of
// SimGrid's steps; the clock's are nanoseconds since its epoch, which
// FromInt64 makes Times exactly.
package timerq

import "math"

// Time is a date as a double-double (hi + lo, |lo| at most half an ulp of
// hi). In the engine's virtual time it is the exact sum of the durations of
// SimGrid's steps, in seconds, which keeps sub-microsecond differences
// between dates of 1e17 seconds, where a double is 16 s coarse (SimGrid's
// own clock, a double, is that sum rounded at each step); the simulated
// clock counts its nanoseconds with it (FromInt64).
type Time struct{ Hi, Lo float64 }

// FromInt64 returns n as a Time, exactly (a double alone holds integers up
// to 2^53 only), so that Times of integers compare as the integers do.
func FromInt64(n int64) Time {
	high := n >> 32 << 32 // n rounded down to a multiple of 2^32: a double holds it exactly
	return Time{Hi: float64(high)}.Plus(float64(n - high))
}

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

// Item is a timer carrying a Value. Its zero value is not queued; an Item
// belongs to at most one Queue at a time.
type Item[T any] struct {
	Value T
	at    Time
	seq   uint64 // tie-break: the order of scheduling
	pos   int    // 1 + index in the queue; 0 when not queued
}

// At returns the date the item was last scheduled at.
func (it *Item[T]) At() Time { return it.at }

// SetAt sets the date of an item kept outside of any queue; a queued
// item is moved by Schedule, and SetAt on one panics (it would break its
// queue's order).
func (it *Item[T]) SetAt(at Time) {
	if it.pos > 0 {
		panic("timerq: SetAt on a queued item (use Schedule)")
	}
	it.at = at
}

// Queued reports whether the item waits in a queue.
func (it *Item[T]) Queued() bool { return it.pos > 0 }

// Queue is a min-queue of items by (date, scheduling order). The zero value
// is an empty queue. It is not safe for concurrent use. Dates must not be
// NaN.
type Queue[T any] struct {
	h   []*Item[T]
	seq uint64
}

// Len returns the number of queued items.
func (q *Queue[T]) Len() int { return len(q.h) }

// Schedule queues it at date at, or moves it there if it is queued already;
// it then comes after the items scheduled before at that date.
func (q *Queue[T]) Schedule(it *Item[T], at Time) {
	q.seq++
	it.at, it.seq = at, q.seq
	if it.pos > 0 {
		i := it.pos - 1
		if !q.down(i) {
			q.up(i)
		}
		return
	}
	q.h = append(q.h, it)
	it.pos = len(q.h)
	q.up(len(q.h) - 1)
}

// Cancel removes it from the queue and reports whether it was queued.
func (q *Queue[T]) Cancel(it *Item[T]) bool {
	if it.pos == 0 {
		return false
	}
	q.remove(it.pos - 1)
	return true
}

// Peek returns the earliest item, or nil if the queue is empty.
func (q *Queue[T]) Peek() *Item[T] {
	if len(q.h) == 0 {
		return nil
	}
	return q.h[0]
}

// Pop removes and returns the earliest item, or nil if the queue is empty.
func (q *Queue[T]) Pop() *Item[T] {
	if len(q.h) == 0 {
		return nil
	}
	it := q.h[0]
	q.remove(0)
	return it
}

// remove takes the item at index i out of the heap.
func (q *Queue[T]) remove(i int) {
	it := q.h[i]
	last := len(q.h) - 1
	if i != last {
		q.set(i, q.h[last])
	}
	q.h[last] = nil
	q.h = q.h[:last]
	it.pos = 0
	if i < last && !q.down(i) {
		q.up(i)
	}
}

// before orders items by date, then scheduling order.
func before[T any](a, b *Item[T]) bool {
	if a.at.Hi != b.at.Hi {
		return a.at.Hi < b.at.Hi
	}
	if a.at.Lo != b.at.Lo {
		return a.at.Lo < b.at.Lo
	}
	return a.seq < b.seq
}

// up sifts the item at i up.
func (q *Queue[T]) up(i int) {
	it := q.h[i]
	for i > 0 {
		parent := (i - 1) / 2
		p := q.h[parent]
		if !before(it, p) {
			break
		}
		q.set(i, p)
		i = parent
	}
	q.set(i, it)
}

// down sifts the item at i down and reports whether it moved.
func (q *Queue[T]) down(i int) bool {
	start, n := i, len(q.h)
	it := q.h[i]
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		c := q.h[child]
		if right := child + 1; right < n && before(q.h[right], c) {
			child, c = right, q.h[right]
		}
		if !before(c, it) {
			break
		}
		q.set(i, c)
		i = child
	}
	q.set(i, it)
	return i > start
}

// set puts it at index i of the heap.
func (q *Queue[T]) set(i int, it *Item[T]) {
	q.h[i] = it
	it.pos = i + 1
}
