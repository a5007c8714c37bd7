package apiserver

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/batkube/batkube/pkg/store"
)

// DefaultEventTTL is how long an event is kept after its last write when
// Options.EventTTL is 0: kube-apiserver's --event-ttl default.
const DefaultEventTTL = time.Hour

// eventsStorage is where core and events.k8s.io Events are stored.
var eventsStorage = corev1.SchemeGroupVersion.WithResource("events").GroupResource()

// eventExpiry removes events once they have not been written for the TTL
// (by the server's clock: simulated time in a simulation), as
// kube-apiserver's etcd leases do: a scheduler writes an event for every
// pod it places, and without expiry a long run would keep them all. It
// follows every write of events through a store subscription: each create,
// update or patch of an event notes the writes made since (its own among
// them) and expires what is due; removals are ordinary deletions (watchers
// of events see them).
type eventExpiry struct {
	ttl time.Duration
	sub *store.Subscription

	mu      sync.Mutex
	buf     []store.Change
	pending []expiring // in deadline order: writes are taken in RV order at a clock that never goes back
}

// expiring is an event's write: the event expires at deadline unless it was
// written again since (then a later entry stands for it).
type expiring struct {
	deadline        time.Time
	namespace, name string
	rv              uint64
}

func newEventExpiry(st *store.Store, ttl time.Duration) *eventExpiry {
	return &eventExpiry{ttl: ttl, sub: st.Subscribe(eventsStorage)}
}

// errRewritten cancels the expiry of an event written again since.
var errRewritten = errors.New("apiserver: the event was written again")

// expire notes the event writes since the last call, which its caller's
// write ends (they expire a TTL from now: from their own instant, or from
// the instant a concurrent writer's call takes them), and removes the
// events that are due. The clock is read under the lock, so that deadlines
// are noted in order.
func (e *eventExpiry) expire(ctx context.Context, s *store.Store, clock interface{ Now() time.Time }) {
	e.mu.Lock()
	now := clock.Now()
	e.buf = e.sub.Take(e.buf[:0])
	for _, c := range e.buf {
		if c.Type == watch.Deleted {
			continue
		}
		e.pending = append(e.pending, expiring{deadline: now.Add(e.ttl), namespace: c.Object.Object().GetNamespace(), name: c.Object.Object().GetName(), rv: c.RV})
	}
	clear(e.buf)
	n := 0
	for n < len(e.pending) && !e.pending[n].deadline.After(now) {
		n++
	}
	// The due entries are sliced off the front, not copied: later appends
	// write past them, and the array they share goes when append outgrows it.
	due := e.pending[:n:n]
	e.pending = e.pending[n:]
	e.mu.Unlock()
	ctx = context.WithoutCancel(ctx) // a client gone does not keep events for ever
	for _, x := range due {
		rv := strconv.FormatUint(x.rv, 10)
		// NotFound (deleted already) and errRewritten (a later entry
		// stands for it) are what they should be; the store fails
		// nothing else without a cancelled context.
		_, _ = s.Delete(ctx, eventsStorage, x.namespace, x.name, func(cur store.Object) error {
			if cur.GetResourceVersion() != rv {
				return errRewritten
			}
			return nil
		})
	}
}
