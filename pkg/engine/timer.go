package engine

import (
	"container/heap"
	"time"
)

// timer is a future instant at which something happens: a running job's
// step ends or its walltime is reached (run != nil), or a CALL_ME_LATER
// falls due (run == nil).
type timer struct {
	at    time.Duration
	seq   uint64 // tie-break: the order in which timers were (re)scheduled
	index int    // position in the queue, -1 when not queued
	run   *run
}

// timerQueue is a min-heap of timers ordered by (at, seq), so that events of
// one instant keep a stable order. Timers can be moved and removed.
type timerQueue []*timer

func (q timerQueue) Len() int { return len(q) }
func (q timerQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q timerQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}
func (q *timerQueue) Push(x any) {
	t := x.(*timer)
	t.index = len(*q)
	*q = append(*q, t)
}
func (q *timerQueue) Pop() any {
	old := *q
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	t.index = -1
	return t
}

// schedule queues t at the given instant, or moves it there.
func (q *timerQueue) schedule(t *timer, at time.Duration, seq uint64) {
	t.at, t.seq = at, seq
	if t.index >= 0 {
		heap.Fix(q, t.index)
		return
	}
	heap.Push(q, t)
}

// cancel removes t if it is queued.
func (q *timerQueue) cancel(t *timer) {
	if t.index >= 0 {
		heap.Remove(q, t.index)
	}
}

// peek returns the earliest timer, or nil.
func (q timerQueue) peek() *timer {
	if len(q) == 0 {
		return nil
	}
	return q[0]
}

// pop removes and returns the earliest timer.
func (q *timerQueue) pop() *timer { return heap.Pop(q).(*timer) }
