package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// WatchOptions select the objects of a Watch and where its events start.
type WatchOptions struct {
	Selection
	// ResourceVersion: deliver the events after this RV (410 Gone if older
	// than the resource's history; an RV in the future waits for it). 0
	// without SendInitialEvents starts at the current RV.
	ResourceVersion uint64
	// SendInitialEvents first sends an ADDED event for every matching object
	// (a snapshot at the current RV, in key order), then a Bookmark with
	// InitialEventsEnd at the snapshot's RV, then the changes after it.
	// ResourceVersion is then a lower bound for the snapshot.
	SendInitialEvents bool
	// BookmarkInterval: when > 0, a watcher that is idle and caught up sends a
	// Bookmark at the current RV every interval.
	BookmarkInterval time.Duration
}

// Event is one watch event.
type Event struct {
	Type watch.EventType // Added, Modified, Deleted, Bookmark or Error
	// Object is the object after the write; for Deleted, the object as
	// deleted (or, when it stopped matching the selectors, as modified).
	// Nil for Bookmark and Error.
	Object *Stored
	RV     uint64
	// InitialEventsEnd marks the Bookmark that ends the initial events.
	InitialEventsEnd bool
	// Err is the reason of an Error event: 410 Expired when the watcher fell
	// behind its resource's history.
	Err error
}

const (
	watchBuffer = 128 // events a watcher queues ahead of its consumer
	readBatch   = 256 // records a watcher copies from the history at once
)

// errStopped ends a watcher stopped by its consumer.
var errStopped = errors.New("store: watcher stopped")

// Watcher streams the events of one watch. Each watcher has a goroutine that
// follows its resource's history at its own pace: writers never wait for it.
// While the watcher runs, the history keeps the records it has not read,
// growing up to Options.HistoryMax records. A watcher whose consumer falls
// further behind gets an Error event (410 Expired) and ends; the consumer
// re-lists.
type Watcher struct {
	store  *Store
	gr     schema.GroupResource
	hist   *history // gr's
	ns     string
	pred   predicate
	ticker clock.Ticker // nil without bookmarks

	initial     []*Stored // the snapshot to send first
	initialRV   uint64
	sendInitial bool
	// follow is where the watcher is in hist, registered there from position
	// until the watcher ends.
	follow follower
	// startRV is the RV it started from (Start).
	startRV uint64
	// rv is the RV up to which the watcher has read every write of gr: it
	// skips the records up to it and sends bookmarks at it.
	rv uint64
	// delivered is the RV up to which every write of gr has been handed to
	// the consumer (sent on out) or skipped; sent counts the events handed
	// over. See Progress.
	delivered, sent atomic.Uint64

	out      chan Event
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}

	mu  sync.Mutex
	err error
}

// Watch starts a watch of gr. It fails with 410 Expired when
// opts.ResourceVersion is older than gr's history. The watcher runs until
// Stop, ctx's end, or falling behind the history past Options.HistoryMax.
func (s *Store) Watch(ctx context.Context, gr schema.GroupResource, opts WatchOptions) (*Watcher, error) {
	if s.isClosing() {
		return nil, apierrors.NewServiceUnavailable("the server is shutting down")
	}
	w := &Watcher{
		store: s,
		gr:    gr,
		hist:  s.historyOf(gr),
		ns:    opts.Namespace,
		pred:  newPredicate(gr, opts.Selection, s.fields),
		out:   make(chan Event, watchBuffer),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	if err := w.position(opts); err != nil {
		return nil, err
	}
	if opts.BookmarkInterval > 0 {
		w.ticker = s.clock.NewTicker(opts.BookmarkInterval)
	}
	s.liveWatchers.Add(1)
	go w.run(ctx)
	return w, nil
}

// position sets where the watcher starts, taking the initial snapshot if
// asked, and registers it with its history.
func (w *Watcher) position(opts WatchOptions) error {
	s, h := w.store, w.hist
	s.mu.RLock()
	defer s.mu.RUnlock()
	current := s.last
	next := h.next
	switch {
	case opts.SendInitialEvents:
		if opts.ResourceVersion > current {
			return tooLarge(opts.ResourceVersion, current)
		}
		s.scanLocked(w.gr, current, w.ns, nil, func(_ key, st *Stored) bool {
			if w.pred.matches(st) {
				w.initial = append(w.initial, st)
			}
			return true
		})
		w.sendInitial, w.initialRV, w.rv = true, current, current
	case opts.ResourceVersion == 0:
		w.rv = current
	default:
		if c := h.compactedRV; opts.ResourceVersion < c {
			return tooOld(opts.ResourceVersion, c)
		}
		// From an RV in the future, next is the next record and the
		// records up to the RV are skipped as they come.
		w.rv = opts.ResourceVersion
		next = h.searchLocked(w.rv)
	}
	w.startRV = w.rv
	h.follow(&w.follow, next)
	return nil
}

// Start is the resourceVersion the watcher started from: the changes
// after it are delivered as events; the state at it, as initial events
// (SendInitialEvents) or from the list the client made before (a watch from
// a list's resourceVersion). A client that watched from Start knows the
// changes up to it only folded into that state, not as events.
func (w *Watcher) Start() uint64 { return w.startRV }

// Progress tells how far the watcher is: every write of its resource up to
// resourceVersion delivered has been handed to the consumer (or did not
// match), and sent events were handed over in all. A consumer that has
// received and dealt with sent events, when delivered is at the resource's
// LatestRV, has dealt with every write so far. Read delivered before sent:
// Progress does.
func (w *Watcher) Progress() (delivered, sent uint64) {
	delivered = w.delivered.Load()
	return delivered, w.sent.Load()
}

// Events returns the stream of events. It is closed when the watcher ends.
func (w *Watcher) Events() <-chan Event { return w.out }

// Stop ends the watcher and waits for its goroutine to exit. It is safe to
// call more than once and from any goroutine.
func (w *Watcher) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
}

// Err tells why the watcher ended once Events is closed: nil after Stop, the
// context's error, or the 410 Expired also sent as an Error event.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Watcher) run(ctx context.Context) {
	defer close(w.done) // last: Stop returns once everything else is done
	defer w.store.liveWatchers.Add(-1)
	defer w.hist.unfollow(&w.follow) // a watcher that ended keeps no record
	if w.ticker != nil {
		defer w.ticker.Stop()
	}
	err := w.stream(ctx)
	if apierrors.IsResourceExpired(err) {
		// The consumer must re-list anyway: drop what it has not read so the
		// error is delivered at once, without waiting for it.
		w.drain()
		w.out <- Event{Type: watch.Error, Err: err} // the only sender: there is room now
	}
	if errors.Is(err, errStopped) {
		err = nil
	}
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
	close(w.out)
}

// drain drops the events the consumer has not read, without blocking (the
// consumer may be reading concurrently).
func (w *Watcher) drain() {
	for {
		select {
		case <-w.out:
		default:
			return
		}
	}
}

// stream sends events until the watcher must end, and says why.
func (w *Watcher) stream(ctx context.Context) error {
	if w.sendInitial {
		for i, st := range w.initial {
			if err := w.send(ctx, Event{Type: watch.Added, Object: st, RV: st.rv}); err != nil {
				return err
			}
			w.initial[i] = nil
		}
		w.initial = nil
		if err := w.send(ctx, Event{Type: watch.Bookmark, RV: w.initialRV, InitialEventsEnd: true}); err != nil {
			return err
		}
	}
	buf := make([]record, 0, readBatch)
	for {
		skip := w.rv // the records up to it were read, or precede a future start RV
		var wake <-chan struct{}
		var err error
		buf, wake, err = w.read(buf[:0])
		if err != nil {
			return err
		}
		for i := range buf {
			if buf[i].rv <= skip {
				continue
			}
			if ev, ok := w.eventFor(&buf[i]); ok {
				if err := w.send(ctx, ev); err != nil {
					return err
				}
			}
		}
		clear(buf) // drop references to objects the history may forget
		w.delivered.Store(w.rv)
		if wake != nil {
			if w.store.isClosing() {
				return nil // caught up with a closed store: the stream ends
			}
			if err := w.wait(ctx, wake); err != nil {
				return err
			}
		}
	}
}

// read copies the records the watcher has not read into buf (up to its
// capacity) and moves the watcher past them. When there are none yet it
// returns a channel closed by the next write of the resource; when the
// history has dropped one, a 410 Expired.
func (w *Watcher) read(buf []record) ([]record, <-chan struct{}, error) {
	s, h := w.store, w.hist
	s.mu.RLock()
	defer s.mu.RUnlock()
	next := w.follow.next.Load()
	if next < h.first.Load() {
		return buf, nil, tooOld(w.rv, h.compactedRV)
	}
	if next == h.next {
		w.rv = max(w.rv, s.last) // the writes since were to other resources
		h.changedTaken.Store(true)
		return buf, *h.changed.Load(), nil
	}
	end := min(h.next, next+uint64(cap(buf)))
	for seq := next; seq < end; seq++ {
		buf = append(buf, *h.at(seq))
	}
	w.follow.next.Store(end)
	if end == h.next {
		w.rv = max(w.rv, s.last)
	} else {
		w.rv = max(w.rv, buf[len(buf)-1].rv)
	}
	return buf, nil, nil
}

// caughtUp reports whether the watcher has read every record of its
// resource; if so it moves the watcher's RV to the current one.
func (w *Watcher) caughtUp() bool {
	s := w.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	if w.follow.next.Load() != w.hist.next {
		return false
	}
	w.rv = max(w.rv, s.last)
	return true
}

// eventFor turns a record into the event this watcher sends, if any. A write
// that makes an object match the selectors is an Added, one that makes it
// stop matching a Deleted.
func (w *Watcher) eventFor(r *record) (Event, bool) {
	if w.ns != "" && r.key.namespace != w.ns {
		return Event{}, false
	}
	typ := r.typ
	switch r.typ {
	case watch.Added:
		if !w.pred.matches(r.obj) {
			return Event{}, false
		}
	case watch.Deleted:
		if !w.pred.matches(r.prev) { // same content as r.obj, fields already computed
			return Event{}, false
		}
	case watch.Modified:
		now, was := w.pred.matches(r.obj), w.pred.matches(r.prev)
		switch {
		case now && !was:
			typ = watch.Added
		case was && !now:
			typ = watch.Deleted
		case !now:
			return Event{}, false
		}
	}
	return Event{Type: typ, Object: r.obj, RV: r.rv}, true
}

// send delivers ev, waiting for the consumer; it gives up with 410 Expired if
// the history drops a record the watcher has yet to read meanwhile (which it
// does only past Options.HistoryMax).
func (w *Watcher) send(ctx context.Context, ev Event) error {
	w.sent.Add(1) // before the hand-over: see Progress
	select {
	case w.out <- ev:
		return nil
	default:
	}
	h := w.hist
	for {
		lapped := *h.lapped.Load() // before looking at the history, so no lap is missed
		if w.follow.next.Load() < h.first.Load() {
			return w.expired()
		}
		select {
		case w.out <- ev:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-w.stop:
			return errStopped
		case <-lapped:
		}
	}
}

// wait blocks until the next write, sending bookmarks meanwhile.
func (w *Watcher) wait(ctx context.Context, wake <-chan struct{}) error {
	var tick <-chan time.Time
	if w.ticker != nil {
		tick = w.ticker.C()
	}
	for {
		select {
		case <-wake:
			return nil
		case <-w.store.closing:
			return nil // read what is left, then end
		case <-ctx.Done():
			return ctx.Err()
		case <-w.stop:
			return errStopped
		case <-tick:
			if !w.caughtUp() {
				return nil // read first; a later tick sends the bookmark
			}
			if w.rv > w.store.CurrentRV() { // watching from a future RV
				continue
			}
			if err := w.send(ctx, Event{Type: watch.Bookmark, RV: w.rv}); err != nil {
				return err
			}
		}
	}
}

// expired is the 410 Expired of a watcher its history has lapped.
func (w *Watcher) expired() error {
	s := w.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	return tooOld(w.rv, w.hist.compactedRV)
}
