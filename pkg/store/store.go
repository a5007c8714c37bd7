package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// DefaultHistorySize is the number of past writes of each resource kept for
// watches and consistent lists when Options.HistorySize is not set. (The
// real kube-apiserver's watch cache keeps at least 100; a history of
// 10,000 Kueue Workloads, kept as decoded JSON, held half of a 1,500-Job
// run's 1.4 GiB.)
const DefaultHistorySize = 1000

// DefaultHistoryMax is the most records a resource's history grows to for
// watchers that lag when Options.HistoryMax is not set.
const DefaultHistoryMax = 1 << 20

// Options configure a Store.
type Options struct {
	// HistorySize is the number of past writes each resource keeps for
	// watches and consistent lists (DefaultHistorySize when < 1): the
	// initial length of each resource's history ring (allocated as the
	// resource's first records come). Resources have a history each, so
	// writes to one never push out another's records. A watch, an exact-RV
	// list or a continue token older than what its resource's history keeps
	// gets 410 Gone.
	HistorySize int
	// HistoryMax caps the length of a resource's history (DefaultHistoryMax
	// when < 1, HistorySize when smaller). Rather than drop a record that a
	// live watcher of the resource has not read yet, a full history doubles,
	// up to this cap: a burst of writes does not end a watcher that reads
	// slower than the writer. Past the cap the watcher gets 410 Gone.
	// Histories never shrink, so memory is bounded by HistoryMax records per
	// resource, and goes beyond HistorySize only while watchers lag.
	HistoryMax int
	// Fields gives the field selector values of an object; the store adds
	// metadata.name and metadata.namespace. Nil: only those two.
	Fields FieldsFunc
	// Clock times watch bookmarks (the real clock when nil).
	Clock clock.WithTicker
}

// Store is the in-memory object store. All methods are safe for concurrent use.
type Store struct {
	fields      FieldsFunc
	clock       clock.WithTicker
	historySize int
	historyMax  int

	mu      sync.RWMutex
	objects map[schema.GroupResource]*table // current objects; a resource with none has no table
	// histories holds the history of every resource written, watched or
	// subscribed to since the store was created. A resource without one
	// has no past write to replay: it can be replayed from any RV.
	histories map[schema.GroupResource]*history
	last      uint64 // the RV of the latest write, the store's current RV

	// rv mirrors last for readers that do not take mu.
	rv atomic.Uint64

	liveWatchers atomic.Int64

	// closing is closed by Close: watchers send what the history holds and end.
	closing   chan struct{}
	closeOnce sync.Once
}

// Close ends every watch once it has sent the events written so far, and
// refuses new watches: a server that stops lets its clients see the last
// changes. Writes still succeed.
func (s *Store) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
}

func (s *Store) isClosing() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// New returns an empty store at resourceVersion 0.
func New(opts Options) *Store {
	if opts.HistorySize < 1 {
		opts.HistorySize = DefaultHistorySize
	}
	if opts.HistoryMax < 1 {
		opts.HistoryMax = DefaultHistoryMax
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Store{
		closing:     make(chan struct{}),
		fields:      opts.Fields,
		clock:       opts.Clock,
		historySize: opts.HistorySize,
		historyMax:  max(opts.HistoryMax, opts.HistorySize),
		objects:     make(map[schema.GroupResource]*table),
		histories:   make(map[schema.GroupResource]*history),
	}
}

// historyLocked returns the history of gr, creating it if need be. The
// caller holds mu for writing.
func (s *Store) historyLocked(gr schema.GroupResource) *history {
	h := s.histories[gr]
	if h == nil {
		h = newHistory(s.historySize, s.historyMax)
		s.histories[gr] = h
	}
	return h
}

// historyOf returns the history of gr, creating it if need be. Histories are
// never removed: the result stays the history of gr.
func (s *Store) historyOf(gr schema.GroupResource) *history {
	s.mu.RLock()
	h := s.histories[gr]
	s.mu.RUnlock()
	if h != nil {
		return h
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.historyLocked(gr)
}

// compactedLocked is the RV of the newest record of gr its history dropped
// (0 when none): the changes of gr after RV r can be replayed if and only if
// r >= compactedLocked(gr).
func (s *Store) compactedLocked(gr schema.GroupResource) uint64 {
	if h := s.histories[gr]; h != nil {
		return h.compactedRV
	}
	return 0
}

// CurrentRV returns the resourceVersion of the latest write.
func (s *Store) CurrentRV() uint64 { return s.rv.Load() }

// LatestRV returns the resourceVersion of the latest write to gr (0 if none).
func (s *Store) LatestRV(gr schema.GroupResource) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h := s.histories[gr]
	if h == nil || h.kept() == 0 {
		if h != nil {
			return h.compactedRV
		}
		return 0
	}
	return h.at(h.next - 1).rv
}

// LatestWatchedRV returns the resourceVersion of the latest write to a
// resource that a live watch follows (0 if none): writes after it changed
// nothing any watching client can see (Events that no one watches, a
// Lease), so no client's informers moved since.
func (s *Store) LatestWatchedRV() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var latest uint64
	for _, h := range s.histories {
		if h.kept() == 0 || !h.followed() {
			continue
		}
		latest = max(latest, h.at(h.next-1).rv)
	}
	return latest
}

// Get returns the current object of gr at namespace/name, or NotFound.
func (s *Store) Get(gr schema.GroupResource, namespace, name string) (*Stored, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if st := s.getLocked(gr, key{namespace: namespace, name: name}); st != nil {
		return st, nil
	}
	return nil, apierrors.NewNotFound(gr, name)
}

func (s *Store) getLocked(gr schema.GroupResource, k key) *Stored {
	if t := s.objects[gr]; t != nil {
		if e, ok := t.Get(entry{key: k}); ok {
			return e.obj
		}
	}
	return nil
}

// Create stores obj, which the caller hands over and must not touch again, at
// a new resourceVersion. It fails with AlreadyExists if the key is taken.
func (s *Store) Create(ctx context.Context, gr schema.GroupResource, obj Object) (*Stored, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("store: creating %s %q: %w", gr, obj.GetName(), err)
	}
	k := keyOf(obj)
	if k.name == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("store: cannot create %s without a name", gr))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.objects[gr]
	if t == nil {
		t = newTable()
		s.objects[gr] = t
	} else if _, ok := t.Get(entry{key: k}); ok {
		return nil, apierrors.NewAlreadyExists(gr, k.name)
	}
	st := newStored(obj, s.last+1)
	t.ReplaceOrInsert(entry{key: k, obj: st})
	s.appendLocked(gr, record{rv: st.rv, typ: watch.Added, key: k, obj: st})
	return st, nil
}

// errObjectModified is the cause of a Conflict, worded as the real apiserver.
var errObjectModified = errors.New("the object has been modified; please apply your changes to the latest version and try again")

// Update replaces the object at namespace/name by what mutate returns, as an
// atomic read-modify-write. mutate receives a deep copy of the current object
// and returns the new one, which the store takes over; an error from mutate is
// returned as is. mutate may run more than once (when another write to the
// same object wins the race) and must not have side effects beyond its result.
//
// Optimistic concurrency: if the returned object carries a resourceVersion
// other than the current one, Update fails with Conflict. If the returned
// object equals the current one (apiequality.Semantic, ignoring the
// resourceVersion), nothing is written: no new RV, no event, and the current
// Stored is returned, like the apiserver does for no-op updates.
func (s *Store) Update(ctx context.Context, gr schema.GroupResource, namespace, name string,
	mutate func(cur Object) (Object, error)) (*Stored, error) {
	return s.update(ctx, gr, namespace, name, (*Stored).Copy, mutate, true)
}

// Change is Update for a mutation that always changes the object (a
// binding, a phase change): it skips the no-op check, a deep comparison of
// the whole object that costs more than the rest of the write.
func (s *Store) Change(ctx context.Context, gr schema.GroupResource, namespace, name string,
	mutate func(cur Object) (Object, error)) (*Stored, error) {
	return s.update(ctx, gr, namespace, name, (*Stored).Copy, mutate, false)
}

// ChangeSharing is Change for a mutation that writes only what copyOf
// copies deeply. copyOf receives the current object, read only (it is
// shared with every reader), and returns a copy for mutate that may share
// with it the parts mutate leaves as they are (a pod's containers, for a
// change of its status): the new state then shares them with the old one,
// instead of every version the history keeps holding a copy of its own.
func (s *Store) ChangeSharing(ctx context.Context, gr schema.GroupResource, namespace, name string,
	copyOf func(cur Object) Object, mutate func(cur Object) (Object, error)) (*Stored, error) {
	return s.update(ctx, gr, namespace, name, func(cur *Stored) Object { return copyOf(cur.obj) }, mutate, false)
}

func (s *Store) update(ctx context.Context, gr schema.GroupResource, namespace, name string,
	copyOf func(*Stored) Object, mutate func(cur Object) (Object, error), checkNoop bool) (*Stored, error) {
	k := key{namespace: namespace, name: name}
	return s.retry(ctx, gr, k, "updating", func(cur *Stored) (*Stored, bool, error) {
		next, err := mutate(copyOf(cur))
		if err != nil {
			return nil, false, err
		}
		if next == nil {
			return nil, false, apierrors.NewInternalError(fmt.Errorf("store: update of %s %q produced no object", gr, name))
		}
		if got := keyOf(next); got != k {
			return nil, false, apierrors.NewBadRequest(fmt.Sprintf("store: update of %s %s cannot move it to %s", gr, k, got))
		}
		curRV := cur.obj.GetResourceVersion()
		if rv := next.GetResourceVersion(); rv != "" && rv != curRV {
			return nil, false, apierrors.NewConflict(gr, name, errObjectModified)
		}
		next.SetResourceVersion(curRV)
		noop := checkNoop && apiequality.Semantic.DeepEqual(cur.obj, next)
		st, ok := s.commitUpdate(gr, k, cur, next, noop)
		return st, ok, nil
	})
}

// retry is the loop of an optimistic write of the object at k: it reads
// the current state and hands it to attempt, which checks it, prepares the
// write and commits it if that state is still the current one. attempt
// returns ok false when another write came first; retry then reads the new
// state and tries again. It returns the committed state or the first
// error: attempt's, NotFound, or ctx's, wrapped with verb ("updating",
// "deleting") and the object's resource and name.
func (s *Store) retry(ctx context.Context, gr schema.GroupResource, k key, verb string,
	attempt func(cur *Stored) (st *Stored, ok bool, err error)) (*Stored, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("store: %s %s %q: %w", verb, gr, k.name, err)
		}
		cur, err := s.Get(gr, k.namespace, k.name)
		if err != nil {
			return nil, err
		}
		st, ok, err := attempt(cur)
		if err != nil {
			return nil, err
		}
		if ok {
			return st, nil
		}
	}
}

// commitUpdate stores next if cur is still the current object; ok is false
// when it is not (the caller retries).
func (s *Store) commitUpdate(gr schema.GroupResource, k key, cur *Stored, next Object, noop bool) (st *Stored, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.getLocked(gr, k) != cur {
		return nil, false
	}
	if noop {
		return cur, true
	}
	st = newStored(next, s.last+1)
	s.objects[gr].ReplaceOrInsert(entry{key: k, obj: st})
	s.appendLocked(gr, record{rv: st.rv, typ: watch.Modified, key: k, obj: st, prev: cur})
	return st, true
}

// Delete removes the object at namespace/name, or fails with NotFound. If
// precondition is not nil it is given the current object (read only) and its
// error, returned as is, cancels the deletion; like mutate in Update it may
// run more than once. The result is the object as deleted, stamped with the
// deletion's resourceVersion (the one its DELETED event carries).
func (s *Store) Delete(ctx context.Context, gr schema.GroupResource, namespace, name string,
	precondition func(cur Object) error) (*Stored, error) {
	return s.delete(ctx, gr, namespace, name, precondition, (*Stored).Copy)
}

// DeleteSharing is Delete whose deleted state (the object of the DELETED
// event, with its own resourceVersion) is made by copyOf, which receives
// the current object, read only, and may share with it everything but the
// metadata (see ChangeSharing).
func (s *Store) DeleteSharing(ctx context.Context, gr schema.GroupResource, namespace, name string,
	precondition func(cur Object) error, copyOf func(cur Object) Object) (*Stored, error) {
	return s.delete(ctx, gr, namespace, name, precondition, func(cur *Stored) Object { return copyOf(cur.obj) })
}

func (s *Store) delete(ctx context.Context, gr schema.GroupResource, namespace, name string,
	precondition func(cur Object) error, copyOf func(*Stored) Object) (*Stored, error) {
	k := key{namespace: namespace, name: name}
	return s.retry(ctx, gr, k, "deleting", func(cur *Stored) (*Stored, bool, error) {
		if precondition != nil {
			if err := precondition(cur.obj); err != nil {
				return nil, false, err
			}
		}
		st, ok := s.commitDelete(gr, k, cur, copyOf(cur))
		return st, ok, nil
	})
}

func (s *Store) commitDelete(gr schema.GroupResource, k key, cur *Stored, gone Object) (st *Stored, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.getLocked(gr, k) != cur {
		return nil, false
	}
	t := s.objects[gr]
	t.Delete(entry{key: k})
	if t.Len() == 0 {
		delete(s.objects, gr)
	}
	st = newStored(gone, s.last+1)
	s.appendLocked(gr, record{rv: st.rv, typ: watch.Deleted, key: k, obj: st, prev: cur})
	return st, true
}

// appendLocked records a write of gr in its history, wakes the watchers,
// queues the write on the subscriptions to gr and marks the state it
// replaced or deleted (r.prev) as superseded (see Stored.supersede). It
// never blocks.
func (s *Store) appendLocked(gr schema.GroupResource, r record) {
	h := s.historyLocked(gr)
	r.obj.seq = h.next
	h.appendLocked(r)
	s.last = r.rv
	s.rv.Store(r.rv)
	for _, sub := range h.subs {
		sub.add(Change{Type: r.typ, GR: gr, Object: r.obj, Prev: r.prev, RV: r.rv})
	}
	if prev := r.prev; prev != nil {
		read := h.first.Load() > prev.seq || !h.unreadLocked(prev.seq)
		prev.supersede(read)
	}
}

// wake closes the channel in p after replacing it by a fresh one.
func wake(p *atomic.Pointer[chan struct{}]) {
	ch := make(chan struct{})
	close(*p.Swap(&ch))
}

// tooOld is the 410 Gone of a request older than its resource's history.
func tooOld(rv, compacted uint64) error {
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, compacted))
}

// tooLarge is the error of a request for a resourceVersion the store has not
// reached, worded as the apiserver's.
func tooLarge(rv, current uint64) error {
	return apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", rv, current), 1)
}
