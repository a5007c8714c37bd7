package store

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Change is one write, as a subscription delivers it.
type Change struct {
	Type   watch.EventType // Added, Modified or Deleted
	GR     schema.GroupResource
	Object *Stored // the new state; for Deleted, the object as deleted
	Prev   *Stored // the state before the write; nil for Added
	RV     uint64
}

// keptQueue is the largest queue capacity a subscription keeps for reuse
// after Take: the memory of a burst is given back once it is taken.
const keptQueue = 4096

// Subscription queues the writes of some resources for one in-process
// consumer; see Store.Subscribe. Its methods are safe for concurrent use.
type Subscription struct {
	store *Store
	grs   []schema.GroupResource // the resources subscribed to; nil once closed (guarded by store.mu)
	ready chan struct{}

	mu    sync.Mutex
	queue []Change // the changes not taken yet, in RV order
}

// Subscribe returns a subscription to every write of the given resources
// from now on. Unlike a Watcher it never drops anything and never ends with
// 410: writes are appended to an unbounded queue under the store's lock, so
// the subscriber sees every write exactly once, in RV order, however far
// behind it is. It is meant for one in-process consumer that keeps up on
// average (the simulation broker).
//
// "From now on": the subscription sees the writes with an RV after the
// store's RV at the moment it subscribed, none before. Queuing costs a write
// an append to a slice (O(1) amortised, never blocking); writes to resources
// nobody subscribed to pay nothing. The queue holds the objects it refers to until they are taken, so
// a consumer that stops taking without calling Close holds memory for ever.
func (s *Store) Subscribe(grs ...schema.GroupResource) *Subscription {
	sub := &Subscription{store: s, ready: make(chan struct{}, 1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, gr := range grs {
		if slices.Contains(sub.grs, gr) {
			continue
		}
		h := s.historyLocked(gr)
		h.subs = append(h.subs, sub)
		sub.grs = append(sub.grs, gr)
	}
	return sub
}

// Ready is signalled (capacity-1 channel, non-blocking send) whenever changes
// are waiting: a write that finds the queue empty signals it. A consumer
// receives from Ready, then calls Take; a signal may find the queue already
// emptied by an earlier Take.
func (sub *Subscription) Ready() <-chan struct{} { return sub.ready }

// Take appends the waiting changes to buf, in RV order, and removes them from
// the queue. The changes after them come in later Takes: together, the Takes
// deliver each write once, in RV order, with no gap.
func (sub *Subscription) Take(buf []Change) []Change {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	buf = append(buf, sub.queue...)
	clear(sub.queue) // let the objects go
	if cap(sub.queue) > keptQueue {
		sub.queue = nil
	} else {
		sub.queue = sub.queue[:0]
	}
	return buf
}

// Close stops the subscription; later writes are not queued. The changes
// queued before Close can still be taken. Close may be called more than once.
func (sub *Subscription) Close() {
	s := sub.store
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, gr := range sub.grs {
		h := s.histories[gr]
		h.subs = slices.DeleteFunc(h.subs, func(o *Subscription) bool { return o == sub })
	}
	sub.grs = nil
}

// add queues c. Writers call it with the store's mu held, which orders the
// changes by RV.
func (sub *Subscription) add(c Change) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if len(sub.queue) == 0 {
		select {
		case sub.ready <- struct{}{}:
		default: // a signal is already waiting
		}
	}
	sub.queue = append(sub.queue, c)
}
