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

// DefaultHistorySize is the number of past writes kept for watches and
// consistent lists when Options.HistorySize is not set.
const DefaultHistorySize = 10000

// Options configure a Store.
type Options struct {
	// HistorySize bounds the event history shared by all resources
	// (DefaultHistorySize when < 1). A watch or a paged list older than the
	// history gets 410 Gone.
	HistorySize int
	// Fields gives the field selector values of an object; the store adds
	// metadata.name and metadata.namespace. Nil: only those two.
	Fields FieldsFunc
	// Clock times watch bookmarks (the real clock when nil).
	Clock clock.WithTicker
}

// Store is the in-memory object store. All methods are safe for concurrent use.
type Store struct {
	fields FieldsFunc
	clock  clock.WithTicker

	mu      sync.RWMutex
	objects map[schema.GroupResource]*table // current objects; a resource with none has no table
	log     history

	// rv mirrors log.last for readers that do not take mu.
	rv atomic.Uint64
	// changed is closed and replaced by the first write after a watcher took
	// it (changedTaken), to wake watchers that are caught up.
	changed      atomic.Pointer[chan struct{}]
	changedTaken atomic.Bool
	// lapped is closed and replaced every lapEvery writes, to wake watchers
	// blocked on a slow consumer so they notice when the history passed them.
	lapped   atomic.Pointer[chan struct{}]
	lapEvery uint64

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
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	s := &Store{
		closing:  make(chan struct{}),
		fields:   opts.Fields,
		clock:    opts.Clock,
		objects:  make(map[schema.GroupResource]*table),
		log:      newHistory(opts.HistorySize),
		lapEvery: max(1, uint64(opts.HistorySize)/8),
	}
	changed, lapped := make(chan struct{}), make(chan struct{})
	s.changed.Store(&changed)
	s.lapped.Store(&lapped)
	return s
}

// CurrentRV returns the resourceVersion of the latest write.
func (s *Store) CurrentRV() uint64 { return s.rv.Load() }

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
	st := newStored(obj, s.log.last+1)
	t.ReplaceOrInsert(entry{key: k, obj: st})
	s.appendLocked(record{rv: st.rv, typ: watch.Added, gr: gr, key: k, obj: st})
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
	return s.update(ctx, gr, namespace, name, mutate, true)
}

// Change is Update for a mutation that always changes the object (a
// binding, a phase change): it skips the no-op check, a deep comparison of
// the whole object that costs more than the rest of the write.
func (s *Store) Change(ctx context.Context, gr schema.GroupResource, namespace, name string,
	mutate func(cur Object) (Object, error)) (*Stored, error) {
	return s.update(ctx, gr, namespace, name, mutate, false)
}

func (s *Store) update(ctx context.Context, gr schema.GroupResource, namespace, name string,
	mutate func(cur Object) (Object, error), checkNoop bool) (*Stored, error) {
	k := key{namespace: namespace, name: name}
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("store: updating %s %q: %w", gr, name, err)
		}
		cur, err := s.Get(gr, namespace, name)
		if err != nil {
			return nil, err
		}
		next, err := mutate(cur.Copy())
		if err != nil {
			return nil, err
		}
		if next == nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("store: update of %s %q produced no object", gr, name))
		}
		if got := keyOf(next); got != k {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("store: update of %s %s cannot move it to %s", gr, k, got))
		}
		curRV := cur.obj.GetResourceVersion()
		if rv := next.GetResourceVersion(); rv != "" && rv != curRV {
			return nil, apierrors.NewConflict(gr, name, errObjectModified)
		}
		next.SetResourceVersion(curRV)
		noop := checkNoop && apiequality.Semantic.DeepEqual(cur.obj, next)
		if st, ok := s.commitUpdate(gr, k, cur, next, noop); ok {
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
	st = newStored(next, s.log.last+1)
	s.objects[gr].ReplaceOrInsert(entry{key: k, obj: st})
	s.appendLocked(record{rv: st.rv, typ: watch.Modified, gr: gr, key: k, obj: st, prev: cur})
	return st, true
}

// Delete removes the object at namespace/name, or fails with NotFound. If
// precondition is not nil it is given the current object (read only) and its
// error, returned as is, cancels the deletion; like mutate in Update it may
// run more than once. The result is the object as deleted, stamped with the
// deletion's resourceVersion (the one its DELETED event carries).
func (s *Store) Delete(ctx context.Context, gr schema.GroupResource, namespace, name string,
	precondition func(cur Object) error) (*Stored, error) {
	k := key{namespace: namespace, name: name}
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("store: deleting %s %q: %w", gr, name, err)
		}
		cur, err := s.Get(gr, namespace, name)
		if err != nil {
			return nil, err
		}
		if precondition != nil {
			if err := precondition(cur.obj); err != nil {
				return nil, err
			}
		}
		if st, ok := s.commitDelete(gr, k, cur, cur.Copy()); ok {
			return st, nil
		}
	}
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
	st = newStored(gone, s.log.last+1)
	s.appendLocked(record{rv: st.rv, typ: watch.Deleted, gr: gr, key: k, obj: st, prev: cur})
	return st, true
}

// appendLocked records a write and wakes the watchers. It never blocks.
func (s *Store) appendLocked(r record) {
	s.log.append(r)
	s.rv.Store(r.rv)
	if s.changedTaken.Swap(false) {
		wake(&s.changed)
	}
	if r.rv%s.lapEvery == 0 {
		wake(&s.lapped)
	}
}

// wake closes the channel in p after replacing it by a fresh one.
func wake(p *atomic.Pointer[chan struct{}]) {
	ch := make(chan struct{})
	close(*p.Swap(&ch))
}

// tooOld is the 410 Gone of a request older than the history.
func tooOld(rv, compacted uint64) error {
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, compacted))
}

// tooLarge is the error of a request for a resourceVersion the store has not
// reached, worded as the apiserver's.
func tooLarge(rv, current uint64) error {
	return apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", rv, current), 1)
}
