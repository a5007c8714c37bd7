package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

func TestEveryWriteTakesTheNextRV(t *testing.T) {
	s := newTestStore(t, 0)
	steps := []struct {
		name  string
		write func() *Stored
	}{
		{"create a", func() *Stored { return mustCreate(t, s, pods, newPod("ns", "a", nil, "")) }},
		{"create node", func() *Stored { return mustCreate(t, s, nodes, newPod("", "n1", nil, "")) }},
		{"update a", func() *Stored {
			return mustUpdate(t, s, pods, "ns", "a", func(p *corev1.Pod) { p.Spec.NodeName = "n1" })
		}},
		{"delete a", func() *Stored { return mustDelete(t, s, pods, "ns", "a") }},
	}
	for i, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			st := step.write()
			want := uint64(i + 1)
			if st.RV() != want || s.CurrentRV() != want {
				t.Errorf("got RV %d, CurrentRV %d; want %d", st.RV(), s.CurrentRV(), want)
			}
			if got := st.Object().GetResourceVersion(); got != strconv.FormatUint(want, 10) {
				t.Errorf("got metadata.resourceVersion %q, want %q", got, strconv.FormatUint(want, 10))
			}
		})
	}
}

func TestErrorsAreAPIStatuses(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t, 0)
	mustCreate(t, s, pods, newPod("ns", "a", nil, ""))
	errPrecondition := errors.New("precondition failed")
	tests := []struct {
		name  string
		call  func() error
		check func(error) bool
		want  string
	}{
		{"create existing", func() error { _, err := s.Create(ctx, pods, newPod("ns", "a", nil, "")); return err },
			apierrors.IsAlreadyExists, `pods "a" already exists`},
		{"create without a name", func() error { _, err := s.Create(ctx, pods, newPod("ns", "", nil, "")); return err },
			apierrors.IsBadRequest, ""},
		{"get missing", func() error { _, err := s.Get(pods, "ns", "b"); return err },
			apierrors.IsNotFound, `pods "b" not found`},
		{"get in another namespace", func() error { _, err := s.Get(pods, "other", "a"); return err },
			apierrors.IsNotFound, ""},
		{"get another resource", func() error { _, err := s.Get(nodes, "ns", "a"); return err },
			apierrors.IsNotFound, `nodes "a" not found`},
		{"update missing", func() error {
			_, err := s.Update(ctx, pods, "ns", "b", func(cur Object) (Object, error) { return cur, nil })
			return err
		}, apierrors.IsNotFound, ""},
		{"update renaming", func() error {
			_, err := s.Update(ctx, pods, "ns", "a", func(cur Object) (Object, error) { cur.SetName("z"); return cur, nil })
			return err
		}, apierrors.IsBadRequest, ""},
		{"delete missing", func() error { _, err := s.Delete(ctx, pods, "ns", "b", nil); return err },
			apierrors.IsNotFound, ""},
		{"delete failing precondition", func() error {
			_, err := s.Delete(ctx, pods, "ns", "a", func(Object) error { return errPrecondition })
			return err
		}, func(err error) bool { return err == errPrecondition }, ""},
		{"update failing mutate", func() error {
			_, err := s.Update(ctx, pods, "ns", "a", func(Object) (Object, error) { return nil, errPrecondition })
			return err
		}, func(err error) bool { return err == errPrecondition }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !tt.check(err) {
				t.Fatalf("got error %v, want another kind", err)
			}
			if tt.want != "" && err.Error() != tt.want {
				t.Errorf("got message %q, want %q", err.Error(), tt.want)
			}
		})
	}
	if got := s.CurrentRV(); got != 1 {
		t.Errorf("failed writes moved the RV: got %d, want 1", got)
	}
	if _, err := s.Get(pods, "ns", "a"); err != nil {
		t.Errorf("a failed write lost the object: %v", err)
	}
}

func TestWritesHonourCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := newTestStore(t, 0)
	if _, err := s.Create(ctx, pods, newPod("ns", "a", nil, "")); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestUpdateStaleRVConflict(t *testing.T) {
	s := newTestStore(t, 0)
	first := mustCreate(t, s, pods, newPod("ns", "x", nil, ""))
	mustUpdate(t, s, pods, "ns", "x", func(p *corev1.Pod) { p.Spec.NodeName = "n1" })

	stale := first.Copy() // carries RV 1, the object is now at RV 2
	stale.SetLabels(map[string]string{"a": "b"})
	_, err := s.Update(context.Background(), pods, "ns", "x", func(Object) (Object, error) { return stale, nil })
	if !apierrors.IsConflict(err) {
		t.Fatalf("got %v, want a Conflict", err)
	}
	const want = `Operation cannot be fulfilled on pods "x": the object has been modified; please apply your changes to the latest version and try again`
	if err.Error() != want {
		t.Errorf("got message %q, want %q", err.Error(), want)
	}
	if got := s.CurrentRV(); got != 2 {
		t.Errorf("got RV %d after a conflict, want 2", got)
	}
}

func TestUpdateWithCurrentRVSucceeds(t *testing.T) {
	s := newTestStore(t, 0)
	mustCreate(t, s, pods, newPod("ns", "x", nil, ""))
	st, err := s.Update(context.Background(), pods, "ns", "x", func(cur Object) (Object, error) {
		if cur.GetResourceVersion() != "1" {
			return nil, fmt.Errorf("mutate got RV %q, want 1", cur.GetResourceVersion())
		}
		cur.SetLabels(map[string]string{"a": "b"})
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.RV() != 2 || st.Object().GetLabels()["a"] != "b" {
		t.Errorf("got RV %d labels %v, want RV 2 with a=b", st.RV(), st.Object().GetLabels())
	}
}

func TestNoopUpdateKeepsRV(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(cur Object) (Object, error)
	}{
		{"unchanged copy", func(cur Object) (Object, error) { return cur, nil }},
		{"resourceVersion cleared", func(cur Object) (Object, error) { cur.SetResourceVersion(""); return cur, nil }},
		{"same value rewritten", func(cur Object) (Object, error) {
			cur.(*corev1.Pod).Spec.NodeName = "n1"
			return cur, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, 0)
			orig := mustCreate(t, s, pods, newPod("ns", "x", nil, "n1"))
			w := mustWatch(t, s, pods, WatchOptions{})
			st, err := s.Update(context.Background(), pods, "ns", "x", tt.mutate)
			if err != nil {
				t.Fatal(err)
			}
			if st != orig || s.CurrentRV() != 1 {
				t.Errorf("got RV %d (same Stored: %v), want the unchanged RV 1", s.CurrentRV(), st == orig)
			}
			// The next real write must be the watcher's first event.
			mustDelete(t, s, pods, "ns", "x")
			if ev := nextEvent(t, w); ev.Type != "DELETED" || ev.RV != 2 {
				t.Errorf("got %s at RV %d, want DELETED at 2: the no-op emitted an event", ev.Type, ev.RV)
			}
		})
	}
}

func TestUpdateRetriesMutateWhenRaced(t *testing.T) {
	s := newTestStore(t, 0)
	mustCreate(t, s, pods, newPod("ns", "x", nil, ""))
	calls := 0
	st, err := s.Update(context.Background(), pods, "ns", "x", func(cur Object) (Object, error) {
		calls++
		if calls == 1 { // another writer wins between the read and the commit
			mustUpdate(t, s, pods, "ns", "x", func(p *corev1.Pod) { p.Labels = map[string]string{"other": "1"} })
		}
		cur.(*corev1.Pod).Spec.NodeName = "n1"
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pod := st.Object().(*corev1.Pod)
	if calls != 2 || pod.Spec.NodeName != "n1" || pod.Labels["other"] != "1" || st.RV() != 3 {
		t.Errorf("got calls=%d node=%q labels=%v RV=%d; want 2 calls, both changes, RV 3",
			calls, pod.Spec.NodeName, pod.Labels, st.RV())
	}
}

func TestConcurrentUpdatesAreNotLost(t *testing.T) {
	s := newTestStore(t, 0)
	mustCreate(t, s, pods, newPod("ns", "x", map[string]string{}, ""))
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				mustUpdate(t, s, pods, "ns", "x", func(p *corev1.Pod) { p.Labels[fmt.Sprintf("w%d-%d", g, i)] = "1" })
			}
		})
	}
	wg.Wait()
	st, err := s.Get(pods, "ns", "x")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(st.Object().GetLabels()); got != writers*each {
		t.Errorf("got %d labels, want %d", got, writers*each)
	}
	if got := s.CurrentRV(); got != 1+writers*each {
		t.Errorf("got RV %d, want %d", got, 1+writers*each)
	}
}

func TestDeleteReturnsTheObjectAtTheDeletionRV(t *testing.T) {
	s := newTestStore(t, 0)
	created := mustCreate(t, s, pods, newPod("ns", "x", map[string]string{"app": "a"}, ""))
	var seen string
	st, err := s.Delete(context.Background(), pods, "ns", "x", func(cur Object) error {
		seen = cur.GetResourceVersion()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != "1" {
		t.Errorf("precondition saw RV %q, want 1", seen)
	}
	if st.RV() != 2 || st.Object().GetResourceVersion() != "2" || st.Object().GetLabels()["app"] != "a" {
		t.Errorf("got RV %d/%q labels %v, want the object at RV 2", st.RV(), st.Object().GetResourceVersion(), st.Object().GetLabels())
	}
	if created.Object().GetResourceVersion() != "1" {
		t.Errorf("deleting mutated the shared stored object: RV %q", created.Object().GetResourceVersion())
	}
	if _, err := s.Get(pods, "ns", "x"); !apierrors.IsNotFound(err) {
		t.Errorf("got %v after delete, want NotFound", err)
	}
}

func TestMemoryBoundedByHistory(t *testing.T) {
	const history, writes = 1000, 100_000
	s := newTestStore(t, history)
	ctx := context.Background()
	for i := range writes / 2 {
		name := "p" + strconv.Itoa(i%7)
		if _, err := s.Create(ctx, pods, newPod("ns", name, nil, "")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Delete(ctx, pods, "ns", name, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.CurrentRV(); got != writes {
		t.Fatalf("got RV %d, want %d", got, writes)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	// The history is per resource now: the pods' one holds the pods' records
	// and, all writes being to pods, it was compacted up to the same RV as
	// the global history was.
	h := s.histories[pods]
	if got := len(h.ring); got > history {
		t.Errorf("history holds %d records, want at most %d", got, history)
	}
	if got := len(s.objects); got != 0 {
		t.Errorf("store still has %d resource tables, want 0", got)
	}
	if got, want := s.compactedLocked(pods), uint64(writes-history); got != want {
		t.Errorf("got compacted RV %d, want %d", got, want)
	}
}

func TestEncodedComputedOncePerFormat(t *testing.T) {
	s := newTestStore(t, 0)
	st := mustCreate(t, s, pods, newPod("ns", "x", nil, ""))
	var mu sync.Mutex
	calls := map[string]int{}
	encode := func(format string) func(Object) ([]byte, error) {
		return func(obj Object) ([]byte, error) {
			mu.Lock()
			calls[format]++
			mu.Unlock()
			return []byte(format + ":" + obj.GetName()), nil
		}
	}
	var wg sync.WaitGroup
	for i := range 40 {
		format := []string{"json", "protobuf"}[i%2]
		wg.Go(func() {
			b, err := st.Encoded(format, encode(format))
			if err != nil || string(b) != format+":x" {
				t.Errorf("got %q, %v; want %q", b, err, format+":x")
			}
		})
	}
	wg.Wait()
	for _, format := range []string{"json", "protobuf"} {
		if calls[format] != 1 {
			t.Errorf("format %s encoded %d times, want once", format, calls[format])
		}
	}
}

func TestEncodedErrorIsNotRemembered(t *testing.T) {
	st := NewStored(newPod("ns", "x", nil, ""))
	boom := errors.New("boom")
	if _, err := st.Encoded("json", func(Object) ([]byte, error) { return nil, boom }); err != boom {
		t.Fatalf("got %v, want the encoder's error", err)
	}
	b, err := st.Encoded("json", func(Object) ([]byte, error) { return []byte("ok"), nil })
	if err != nil || string(b) != "ok" {
		t.Errorf("got %q, %v after a failure; want a fresh encode", b, err)
	}
}

func TestNewStoredReadsTheObjectRV(t *testing.T) {
	tests := []struct {
		rv   string
		want uint64
	}{{"", 0}, {"42", 42}, {"junk", 0}}
	for _, tt := range tests {
		t.Run(tt.rv, func(t *testing.T) {
			pod := newPod("ns", "x", nil, "")
			pod.ResourceVersion = tt.rv
			if got := NewStored(pod).RV(); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFieldSetAlwaysHasMetadataFields(t *testing.T) {
	tests := []struct {
		name string
		fn   FieldsFunc
		want []string
	}{
		{"default", nil, []string{"metadata.name", "metadata.namespace"}},
		{"pods", podFields, []string{"metadata.name", "metadata.namespace", "spec.nodeName", "status.phase"}},
		{"none", func(schema.GroupResource, runtime.Object, func(string, string)) {}, []string{"metadata.name", "metadata.namespace"}},
		{"metadata again", func(_ schema.GroupResource, _ runtime.Object, add func(string, string)) { add("metadata.name", "y") }, []string{"metadata.name", "metadata.namespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := NewStored(newPod("ns", "x", nil, "n1"))
			set := st.fieldSet(pods, tt.fn)
			var got []string
			for _, f := range *set.(*fieldValues) {
				got = append(got, f.name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got fields %v, want %v", got, tt.want)
			}
			if set.Get("metadata.name") != "x" || set.Get("metadata.namespace") != "ns" || !set.Has("metadata.name") || set.Has("spec.other") {
				t.Errorf("got %v, want name x namespace ns", set)
			}
		})
	}
}

// TestUpdateOfNothingWritesNothingButChangeWrites: an Update whose result
// equals the current object is a no-op (no new RV); Change, for mutations
// known to change the object, skips that check and always writes.
func TestUpdateOfNothingWritesNothingButChangeWrites(t *testing.T) {
	s := newTestStore(t, 0)
	created := mustCreate(t, s, pods, newPod("ns", "a", nil, ""))
	same := func(cur Object) (Object, error) { return cur, nil }
	st, err := s.Update(context.Background(), pods, "ns", "a", same)
	if err != nil || st.RV() != created.RV() || s.CurrentRV() != created.RV() {
		t.Fatalf("a no-op Update: %v, RV %d (store at %d), want the object unchanged at RV %d", err, st.RV(), s.CurrentRV(), created.RV())
	}
	st, err = s.Change(context.Background(), pods, "ns", "a", same)
	if err != nil || st.RV() != created.RV()+1 {
		t.Fatalf("Change: %v, RV %d, want a write at RV %d", err, st.RV(), created.RV()+1)
	}
}

// TestHistoryRingGrowsDropsAndSearchesInOrder drives one resource's history
// directly: it fills up to its size, then grows only for a follower that has
// not read its oldest record, up to its cap, and finds the records after any
// RV among RVs that are not contiguous.
func TestHistoryRingGrowsDropsAndSearchesInOrder(t *testing.T) {
	h := newHistory(3, 24)
	var f follower
	h.follow(&f, 0)
	rvs := []uint64{}
	appendN := func(n int) {
		for range n {
			rv := uint64(1)
			if len(rvs) > 0 {
				rv = rvs[len(rvs)-1] + uint64(len(rvs)%3+1) // gaps: other resources' RVs
			}
			rvs = append(rvs, rv)
			h.appendLocked(record{rv: rv})
		}
	}
	check := func(wantLen int, wantFirst uint64) {
		t.Helper()
		if len(h.ring) != wantLen || h.first.Load() != wantFirst || h.next != uint64(len(rvs)) {
			t.Fatalf("ring of %d, records [%d, %d); want a ring of %d, records [%d, %d)",
				len(h.ring), h.first.Load(), h.next, wantLen, wantFirst, len(rvs))
		}
		if wantFirst > 0 && h.compactedRV != rvs[wantFirst-1] {
			t.Errorf("compactedRV %d, want %d", h.compactedRV, rvs[wantFirst-1])
		}
		for seq := wantFirst; seq < h.next; seq++ {
			if got := h.at(seq).rv; got != rvs[seq] {
				t.Fatalf("record %d has RV %d, want %d", seq, got, rvs[seq])
			}
			if from, _ := h.afterLocked(rvs[seq] - 1); from != seq {
				t.Errorf("first record after RV %d: %d, want %d", rvs[seq]-1, from, seq)
			}
			if from, _ := h.afterLocked(rvs[seq]); from != seq+1 {
				t.Errorf("first record after RV %d: %d, want %d", rvs[seq], from, seq+1)
			}
		}
	}

	appendN(20) // the follower reads nothing: 3 -> 6 -> 12 -> 24
	check(24, 0)
	lapped := *h.lapped.Load()
	for range 30 { // it keeps up: the ring turns over at its length
		f.next.Store(h.next)
		appendN(1)
	}
	check(24, 26)
	select {
	case <-lapped:
		t.Error("a follower that keeps up was woken as lapped")
	default:
	}
	f.next.Store(h.next)
	appendN(25) // it reads nothing again: lapped at the cap, and woken
	check(24, 51)
	select {
	case <-lapped:
	default:
		t.Error("lapping the follower did not wake it")
	}
	h.unfollow(&f)
	grown := newHistory(3, 24) // without a follower it never grows past its size
	for rv := range uint64(10) {
		grown.appendLocked(record{rv: rv + 1})
	}
	if len(grown.ring) != 3 || grown.compactedRV != 7 {
		t.Errorf("a history without followers holds %d records, compacted at %d; want 3 and 7", len(grown.ring), grown.compactedRV)
	}
}

// TestSubscriptionDeliversEveryWriteOnceInOrder: 100,000 writes before the
// first Take, to the resources subscribed to and to another one, all with a
// history far too short to hold them.
func TestSubscriptionDeliversEveryWriteOnceInOrder(t *testing.T) {
	const writes = 100_000
	s := newTestStore(t, 100)
	mustCreate(t, s, pods, newPod("ns", "before", nil, "")) // before the subscription: not delivered
	sub := s.Subscribe(pods, nodes, pods)
	current := map[schema.GroupResource]map[string]*Stored{pods: {}, nodes: {}, events: {}}
	var want []Change
	for i := range writes {
		gr := []schema.GroupResource{pods, pods, nodes, events}[i%4]
		name := strconv.Itoa(i % 7)
		prev := current[gr][name]
		var c Change
		switch {
		case prev == nil:
			c = Change{Type: watch.Added, Object: mustCreate(t, s, gr, newPod("ns", name, nil, ""))}
		case i%3 == 0:
			c = Change{Type: watch.Deleted, Object: mustDelete(t, s, gr, "ns", name), Prev: prev}
		default: // Change rather than Update: no costly no-op check, the write always changes the pod
			st, err := s.Change(context.Background(), gr, "ns", name, func(cur Object) (Object, error) {
				cur.(*corev1.Pod).Spec.NodeName = strconv.Itoa(i)
				return cur, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			c = Change{Type: watch.Modified, Object: st, Prev: prev}
		}
		current[gr][name] = c.Object
		if c.Type == watch.Deleted {
			delete(current[gr], name)
		}
		if gr != events {
			c.GR, c.RV = gr, c.Object.RV()
			want = append(want, c)
		}
	}
	select {
	case <-sub.Ready():
	default:
		t.Error("Ready is not signalled while changes wait")
	}
	got := sub.Take(nil)
	if len(got) != len(want) {
		t.Fatalf("took %d changes, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("change %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if more := sub.Take(nil); len(more) != 0 {
		t.Errorf("a second Take returned %d changes, want none", len(more))
	}

	sub.Close()
	sub.Close()
	mustCreate(t, s, pods, newPod("ns", "after", nil, ""))
	if after := sub.Take(nil); len(after) != 0 {
		t.Errorf("took %d changes written after Close, want none", len(after))
	}
	select {
	case <-sub.Ready():
		t.Error("Ready is signalled after Close")
	default:
	}
}

// TestSubscriptionSeesConcurrentWritersInRVOrder: a consumer taking as
// changes come while 8 writers create pods and another writes nodes sees
// each pod creation once, in increasing RV order.
func TestSubscriptionSeesConcurrentWritersInRVOrder(t *testing.T) {
	const writers, perWriter = 8, 2000
	s := newTestStore(t, 0)
	sub := s.Subscribe(pods)
	defer sub.Close()
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range perWriter {
				mustCreate(t, s, pods, newPod("ns", fmt.Sprintf("w%d-%d", g, i), nil, ""))
			}
		})
	}
	wg.Go(func() {
		for i := range perWriter {
			mustCreate(t, s, nodes, newPod("", fmt.Sprintf("n%d", i), nil, ""))
		}
	})

	seen := make(map[string]bool, writers*perWriter)
	var last uint64
	var buf []Change
	timer := time.NewTimer(eventDeadline)
	defer timer.Stop()
	for len(seen) < writers*perWriter {
		select {
		case <-sub.Ready():
		case <-timer.C:
			t.Fatalf("saw %d creations within %v, want %d", len(seen), eventDeadline, writers*perWriter)
		}
		buf = sub.Take(buf[:0])
		for _, c := range buf {
			name := c.Object.Object().GetName()
			if c.GR != pods || c.Type != watch.Added || c.Prev != nil || c.RV != c.Object.RV() {
				t.Fatalf("got %s of %s %s at RV %d, want the ADDED of a pod", c.Type, c.GR, name, c.RV)
			}
			if c.RV <= last || seen[name] {
				t.Fatalf("got %s at RV %d after RV %d (seen before: %v)", name, c.RV, last, seen[name])
			}
			seen[name], last = true, c.RV
		}
	}
	wg.Wait()
	if more := sub.Take(nil); len(more) != 0 {
		t.Errorf("%d more changes after every creation, want none", len(more))
	}
}

// TestSupersededObjectsLetTheirEncodingsGo: an object replaced by a later
// write stops memoising; its encodings are let go at once when no live
// watcher of the resource is behind its record, and kept for one that is
// (which then gets them); a new state always gets its own encoding.
func TestSupersededObjectsLetTheirEncodingsGo(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t, 0)
	counting := func(calls *int, text string) func(Object) ([]byte, error) {
		return func(Object) ([]byte, error) { *calls++; return []byte(text), nil }
	}
	relabel := func(v string) *Stored {
		t.Helper()
		st, err := s.Update(ctx, pods, "ns", "p", func(cur Object) (Object, error) {
			cur.SetLabels(map[string]string{"v": v})
			return cur, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	v0 := mustCreate(t, s, pods, newPod("ns", "p", map[string]string{"v": "0"}, ""))
	calls := 0
	if _, err := v0.Encoded("json", counting(&calls, "v0")); err != nil {
		t.Fatal(err)
	}
	v1 := relabel("1") // nobody watches: v0's encoding goes
	if v0.memoised("json") != nil {
		t.Errorf("the superseded state still holds its encoding")
	}
	for range 2 {
		if b, _ := v0.Encoded("json", counting(&calls, "v0")); string(b) != "v0" {
			t.Errorf("superseded state encoded as %q", b)
		}
	}
	if calls != 3 || v0.memoised("json") != nil {
		t.Errorf("a superseded state: %d encodes for 3 calls, memoised %q; want 3, none", calls, v0.memoised("json"))
	}

	// A watcher that has not read v1's record yet (a follower of the
	// history at v1's record, as a watch from before v1 registers) keeps
	// v1's encoding when v2 supersedes it, for the event it will send; once
	// it has gone, a superseded state lets its encoding go again.
	calls = 0
	if _, err := v1.Encoded("json", counting(&calls, "v1")); err != nil {
		t.Fatal(err)
	}
	h := s.histories[pods]
	var lagging follower
	s.mu.RLock()
	h.follow(&lagging, v1.seq)
	s.mu.RUnlock()
	v2 := relabel("2")
	if v1.memoised("json") == nil {
		t.Errorf("v1, superseded while a watcher has not read it, dropped its encoding")
	}
	if b, _ := v1.Encoded("json", counting(&calls, "v1")); string(b) != "v1" || calls != 1 {
		t.Errorf("v1 for the lagging watcher: %q after %d encodes, want \"v1\" after 1", b, calls)
	}
	h.unfollow(&lagging)
	if _, err := v2.Encoded("json", counting(&calls, "v2")); err != nil {
		t.Fatal(err)
	}
	relabel("3") // nobody lags now: v2's encoding goes
	if v2.memoised("json") != nil {
		t.Errorf("v2, superseded with no watcher behind, still holds its encoding")
	}
	cur := relabel("4")
	// The current state memoises.
	calls = 0
	for range 3 {
		if b, _ := cur.Encoded("json", counting(&calls, "v4")); string(b) != "v4" {
			t.Errorf("current state encoded as %q", b)
		}
	}
	if calls != 1 {
		t.Errorf("the current state was encoded %d times for 3 calls, want 1", calls)
	}
}

// createSharedPod creates pod ns/p, labelled v=0, with a container that
// the sharing tests expect a state and the next to share.
func createSharedPod(t *testing.T, s *Store) *Stored {
	t.Helper()
	p := newPod("ns", "p", map[string]string{"v": "0"}, "")
	p.Spec.Containers = []corev1.Container{{Name: "c"}}
	return mustCreate(t, s, pods, p)
}

// TestChangeSharingKeepsTheOldStateAsItWas: a ChangeSharing whose copy
// shares parts with the current object writes a new state that shares
// them, and the old state, which the history keeps, is unchanged.
func TestChangeSharingKeepsTheOldStateAsItWas(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t, 0)
	old := createSharedPod(t, s)
	shallow := func(cur Object) Object {
		c := *cur.(*corev1.Pod)
		c.ObjectMeta = *c.ObjectMeta.DeepCopy()
		return &c
	}
	st, err := s.ChangeSharing(ctx, pods, "ns", "p", shallow, func(cur Object) (Object, error) {
		pod := cur.(*corev1.Pod)
		pod.Labels["v"] = "1"
		pod.Spec.NodeName = "n1"
		return pod, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	was, now := old.Object().(*corev1.Pod), st.Object().(*corev1.Pod)
	if was.Labels["v"] != "0" || was.Spec.NodeName != "" || was.ResourceVersion != strconv.FormatUint(old.RV(), 10) {
		t.Errorf("the old state changed: labels %v, node %q, RV %s", was.Labels, was.Spec.NodeName, was.ResourceVersion)
	}
	if now.Labels["v"] != "1" || now.Spec.NodeName != "n1" || st.RV() <= old.RV() {
		t.Errorf("the new state: labels %v, node %q, RV %d", now.Labels, now.Spec.NodeName, st.RV())
	}
	if &now.Spec.Containers[0] != &was.Spec.Containers[0] {
		t.Errorf("the new state does not share the containers")
	}
}

// TestDeleteSharingKeepsTheLastStateAsItWas: the deleted state gets its own
// resourceVersion without touching the last stored state, and shares the
// rest with it.
func TestDeleteSharingKeepsTheLastStateAsItWas(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t, 0)
	last := createSharedPod(t, s)
	w, err := s.Watch(ctx, pods, WatchOptions{ResourceVersion: last.RV()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	shallow := func(cur Object) Object {
		c := *cur.(*corev1.Pod)
		c.ObjectMeta = *c.ObjectMeta.DeepCopy()
		return &c
	}
	gone, err := s.DeleteSharing(ctx, pods, "ns", "p", nil, shallow)
	if err != nil {
		t.Fatal(err)
	}
	was, now := last.Object().(*corev1.Pod), gone.Object().(*corev1.Pod)
	if was.ResourceVersion != strconv.FormatUint(last.RV(), 10) || now.ResourceVersion != strconv.FormatUint(gone.RV(), 10) || gone.RV() <= last.RV() {
		t.Errorf("resourceVersions: last state %s (%d), deleted %s (%d)", was.ResourceVersion, last.RV(), now.ResourceVersion, gone.RV())
	}
	if &now.Spec.Containers[0] != &was.Spec.Containers[0] {
		t.Error("the deleted state does not share the containers")
	}
	ev := <-w.Events()
	if ev.Type != watch.Deleted || ev.Object != gone {
		t.Errorf("watch: %s %v, want DELETED of the deleted state", ev.Type, ev.Object)
	}
	if _, err := s.Get(pods, "ns", "p"); err == nil {
		t.Error("the pod is still there")
	}
}
