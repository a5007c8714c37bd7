package store

import (
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/watch"
)

// record is one write in a resource's history.
type record struct {
	rv   uint64
	typ  watch.EventType // Added, Modified or Deleted
	key  key
	obj  *Stored // the new state; for a deletion, the object as deleted
	prev *Stored // the state before the write; nil for a creation
}

// minRing is the length of a history's first ring (HistorySize if smaller):
// rings double up to HistorySize as records come, so that a resource written
// a few times does not hold a full ring.
const minRing = 64

// history is the event log of one resource: a ring of its latest records, in
// RV order. Records are numbered by a sequence number (seq) of their own
// resource, from 0. The RVs of one resource increase but are not contiguous
// (other resources take the RVs between them), so the first record after an
// RV is found by binary search.
//
// The ring keeps at least the latest `size` records. Appending to a full ring
// drops the oldest record, unless a follower (a live watcher of the resource)
// has not read it yet: then the ring doubles instead, up to `maxSize` records.
// Past that the record is dropped and the followers are woken, so that the
// one it lapped ends with 410 Gone. Rings never shrink.
//
// Fields without a comment on their guard are guarded by the store's mu.
type history struct {
	ring []record // record seq at ring[seq % len(ring)] for first <= seq < next; nil before the first write
	// first is the seq of the oldest kept record. Stored with mu held for
	// writing; watchers blocked on their consumer load it without mu.
	first       atomic.Uint64
	next        uint64 // the seq of the next record appended
	compactedRV uint64 // RV of the newest dropped record, 0 if none
	size        int    // the ring's guaranteed length
	maxSize     int    // the ring's largest length

	// changed is closed and replaced by the first write after a watcher took
	// it (changedTaken), to wake the watchers that are caught up.
	changed      atomic.Pointer[chan struct{}]
	changedTaken atomic.Bool
	// lapped is closed and replaced when a write drops a record a follower
	// has not read, to wake watchers blocked on a slow consumer so they notice.
	lapped atomic.Pointer[chan struct{}]

	followMu  sync.Mutex
	followers map[*follower]struct{} // guarded by followMu
	// lowWater is at most the next seq of every follower, so a record before
	// it can be dropped without looking at them. follow lowers it (holding
	// followMu and mu for reading); unreadLocked raises it (holding followMu
	// and mu for writing). A follower leaving does not touch it.
	lowWater atomic.Uint64

	subs []*Subscription // the subscriptions fed by every write of the resource
}

// follower is a live watcher as its resource's history sees it: the seq of
// the next record it reads. The watcher moves it forward; writers read it to
// tell whether they may drop a record.
type follower struct{ next atomic.Uint64 }

func newHistory(size, maxSize int) *history {
	h := &history{size: size, maxSize: maxSize, followers: make(map[*follower]struct{})}
	h.lowWater.Store(math.MaxUint64)
	changed, lapped := make(chan struct{}), make(chan struct{})
	h.changed.Store(&changed)
	h.lapped.Store(&lapped)
	return h
}

// kept is the number of records kept.
func (h *history) kept() uint64 { return h.next - h.first.Load() }

// at returns the record seq, which must satisfy first <= seq < next.
func (h *history) at(seq uint64) *record { return &h.ring[seq%uint64(len(h.ring))] }

// searchLocked returns the seq of the first kept record with an RV after rv,
// or next when there is none.
func (h *history) searchLocked(rv uint64) uint64 {
	first, n := h.first.Load(), h.kept()
	if n == 0 || h.at(h.next-1).rv <= rv { // the common case: nothing after rv
		return h.next
	}
	return first + uint64(sort.Search(int(n), func(i int) bool { return h.at(first+uint64(i)).rv > rv }))
}

// afterLocked returns the seqs [from, to) of the kept records with an RV
// after rv. h may be nil: a resource without a history has no record.
func (h *history) afterLocked(rv uint64) (from, to uint64) {
	if h == nil {
		return 0, 0
	}
	return h.searchLocked(rv), h.next
}

// appendLocked adds r, whose RV is after every kept record's. It never blocks
// on a watcher.
func (h *history) appendLocked(r record) {
	if h.kept() == uint64(len(h.ring)) {
		h.makeRoomLocked()
	}
	*h.at(h.next) = r
	h.next++
	if h.changedTaken.Swap(false) {
		wake(&h.changed)
	}
}

// makeRoomLocked frees a slot in the full ring: it grows the ring if it is
// shorter than size, or if a follower has not read the oldest record and the
// ring is shorter than maxSize; otherwise it drops the oldest record.
func (h *history) makeRoomLocked() {
	n := len(h.ring)
	if n < h.size {
		h.resizeLocked(min(max(2*n, minRing), h.size))
		return
	}
	first := h.first.Load()
	unread := h.unreadLocked(first)
	if unread && n < h.maxSize {
		h.resizeLocked(min(2*n, h.maxSize))
		return
	}
	oldest := h.at(first)
	h.compactedRV = oldest.rv
	*oldest = record{} // let the objects go
	h.first.Store(first + 1)
	if unread {
		wake(&h.lapped)
	}
}

// resizeLocked moves the kept records, in order, to a ring of length n.
func (h *history) resizeLocked(n int) {
	ring := make([]record, n)
	for seq := h.first.Load(); seq < h.next; seq++ {
		ring[seq%uint64(n)] = *h.at(seq)
	}
	h.ring = ring
}

// unreadLocked reports whether a follower has not read record seq yet (or
// was lapped already). It looks at the followers only when lowWater says
// one may be that far behind, and then updates lowWater.
func (h *history) unreadLocked(seq uint64) bool {
	if h.lowWater.Load() > seq {
		return false
	}
	h.followMu.Lock()
	defer h.followMu.Unlock()
	low := uint64(math.MaxUint64)
	for f := range h.followers {
		low = min(low, f.next.Load())
	}
	h.lowWater.Store(low)
	return low <= seq
}

// followed reports whether a live watcher follows the resource.
func (h *history) followed() bool {
	h.followMu.Lock()
	defer h.followMu.Unlock()
	return len(h.followers) > 0
}

// follow registers f, which reads from record next on. The caller holds mu
// (for reading at least), so no record from next on is dropped before f is
// registered.
func (h *history) follow(f *follower, next uint64) {
	f.next.Store(next)
	h.followMu.Lock()
	defer h.followMu.Unlock()
	h.followers[f] = struct{}{}
	if next < h.lowWater.Load() {
		h.lowWater.Store(next)
	}
}

// unfollow forgets f: the records it has not read may go.
func (h *history) unfollow(f *follower) {
	h.followMu.Lock()
	defer h.followMu.Unlock()
	delete(h.followers, f)
}
