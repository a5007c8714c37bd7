// Package timerq is a queue of timers ordered by instant, timers of one
// instant in the order they were scheduled, that can be moved and cancelled
// in O(log n): the event queue of the embedded engine (pkg/engine, whose
// instants are exact sums of doubles) and of the simulated clock
// (simclock, whose instants are durations since its epoch).
package timerq

import "time"

// Instant is what a queue orders its items by: Before must be a strict
// total order (no NaN).
type Instant[I any] interface {
	Before(I) bool
}

// Duration is a time.Duration as an Instant: a time since an epoch.
type Duration time.Duration

// Before orders durations.
func (d Duration) Before(e Duration) bool { return d < e }

// Item is a timer carrying a Value. Its zero value is not queued; an Item
// belongs to at most one Queue at a time.
type Item[V any, I Instant[I]] struct {
	Value V
	at    I
	seq   uint64 // tie-break: the order of scheduling
	pos   int    // 1 + index in the queue; 0 when not queued
}

// At returns the instant the item was last scheduled (or set) at.
func (it *Item[V, I]) At() I { return it.at }

// SetAt sets the instant of an item that is not queued (one kept outside
// of a queue).
func (it *Item[V, I]) SetAt(at I) {
	if it.pos == 0 {
		it.at = at
	}
}

// Queued reports whether the item waits in a queue.
func (it *Item[V, I]) Queued() bool { return it.pos > 0 }

// Queue is a min-queue of items by (instant, scheduling order). The zero
// value is an empty queue. It is not safe for concurrent use.
type Queue[V any, I Instant[I]] struct {
	h   []*Item[V, I]
	seq uint64
}

// Len returns the number of queued items.
func (q *Queue[V, I]) Len() int { return len(q.h) }

// Schedule queues it at instant at, or moves it there if it is queued
// already; it then comes after the items scheduled before at that instant.
func (q *Queue[V, I]) Schedule(it *Item[V, I], at I) {
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
func (q *Queue[V, I]) Cancel(it *Item[V, I]) bool {
	if it.pos == 0 {
		return false
	}
	q.remove(it.pos - 1)
	return true
}

// Peek returns the earliest item, or nil if the queue is empty.
func (q *Queue[V, I]) Peek() *Item[V, I] {
	if len(q.h) == 0 {
		return nil
	}
	return q.h[0]
}

// Pop removes and returns the earliest item, or nil if the queue is empty.
func (q *Queue[V, I]) Pop() *Item[V, I] {
	if len(q.h) == 0 {
		return nil
	}
	it := q.h[0]
	q.remove(0)
	return it
}

// remove takes the item at index i out of the heap.
func (q *Queue[V, I]) remove(i int) {
	it := q.h[i]
	last := len(q.h) - 1
	if i != last {
		q.h[i] = q.h[last]
		q.h[i].pos = i + 1
	}
	q.h[last] = nil
	q.h = q.h[:last]
	it.pos = 0
	if i < last && !q.down(i) {
		q.up(i)
	}
}

// before orders items by instant, then scheduling order.
func before[V any, I Instant[I]](a, b *Item[V, I]) bool {
	if a.at.Before(b.at) {
		return true
	}
	if b.at.Before(a.at) {
		return false
	}
	return a.seq < b.seq
}

// up sifts the item at i up.
func (q *Queue[V, I]) up(i int) {
	it := q.h[i]
	for i > 0 {
		parent := (i - 1) / 2
		p := q.h[parent]
		if !before(it, p) {
			break
		}
		q.h[i] = p
		p.pos = i + 1
		i = parent
	}
	q.h[i] = it
	it.pos = i + 1
}

// down sifts the item at i down and reports whether it moved.
func (q *Queue[V, I]) down(i int) bool {
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
		q.h[i] = c
		c.pos = i + 1
		i = child
	}
	q.h[i] = it
	it.pos = i + 1
	return i > start
}
