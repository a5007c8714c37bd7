package store

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// record is one write in the event history.
type record struct {
	rv   uint64
	typ  watch.EventType // Added, Modified or Deleted
	gr   schema.GroupResource
	key  key
	obj  *Stored // the new state; for a deletion, the object as deleted
	prev *Stored // the state before the write; nil for a creation
}

// history is the global event log: a ring holding the records of the latest
// len(ring) writes. Every write takes the next RV, so the record of RV r sits
// at ring[r % len(ring)] and the kept RVs are contiguous.
type history struct {
	ring []record
	last uint64 // RV of the newest record, the store's current RV
}

func newHistory(size int) history { return history{ring: make([]record, size)} }

func (h *history) size() uint64 { return uint64(len(h.ring)) }

// append stores r, whose rv must be last+1, overwriting the oldest record.
func (h *history) append(r record) {
	h.ring[r.rv%h.size()] = r
	h.last = r.rv
}

// compacted is the newest RV whose record is gone (0 when none is): the events
// after RV r can be replayed if and only if r >= compacted().
func (h *history) compacted() uint64 { return compactedAt(h.last, h.size()) }

func compactedAt(last, size uint64) uint64 {
	if last <= size {
		return 0
	}
	return last - size
}

// at returns the record of rv, which must satisfy compacted() < rv <= last.
func (h *history) at(rv uint64) *record { return &h.ring[rv%h.size()] }
