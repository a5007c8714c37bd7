package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"
)

func TestWatchFromOldRVReplaysMissedEventsInOrder(t *testing.T) {
	s := newTestStore(t, 0)
	mustCreate(t, s, pods, newPod("ns", "a", nil, ""))                                // 1
	mustCreate(t, s, nodes, newPod("", "n1", nil, ""))                                // 2, another resource
	mustCreate(t, s, pods, newPod("ns", "b", nil, ""))                                // 3
	mustUpdate(t, s, pods, "ns", "a", func(p *corev1.Pod) { p.Spec.NodeName = "n1" }) // 4
	mustCreate(t, s, pods, newPod("other", "c", nil, ""))                             // 5, another namespace
	mustDelete(t, s, pods, "ns", "b")                                                 // 6
	tests := []struct {
		from uint64
		ns   string
		want []string
	}{
		{1, "", []string{"ADDED b@3", "MODIFIED a@4", "ADDED c@5", "DELETED b@6"}},
		{1, "ns", []string{"ADDED b@3", "MODIFIED a@4", "DELETED b@6"}},
		{4, "", []string{"ADDED c@5", "DELETED b@6"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("from %d in %q", tt.from, tt.ns), func(t *testing.T) {
			w := mustWatch(t, s, pods, WatchOptions{Selection: Selection{Namespace: tt.ns}, ResourceVersion: tt.from})
			var got []string
			for _, ev := range nextEvents(t, w, len(tt.want)) {
				got = append(got, fmt.Sprintf("%s %s@%d", ev.Type, ev.Object.Object().GetName(), ev.RV))
				if ev.RV != ev.Object.RV() {
					t.Errorf("event RV %d differs from its object's %d", ev.RV, ev.Object.RV())
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWatchFromExpiredRVIsGone(t *testing.T) {
	s := newTestStore(t, 3)
	createPods(t, s, "a", "b", "c", "d", "e")
	tests := []struct {
		from    uint64
		wantErr bool
	}{{1, true}, {2, false}, {5, false}, {9, false}}
	for _, tt := range tests {
		t.Run(strconvU(tt.from), func(t *testing.T) {
			w, err := s.Watch(context.Background(), pods, WatchOptions{ResourceVersion: tt.from})
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("got %v, want a watch", err)
				}
				w.Stop()
				return
			}
			if !apierrors.IsResourceExpired(err) {
				t.Fatalf("got %v, want 410 Expired", err)
			}
			if want := "too old resource version: 1 (2)"; err.Error() != want {
				t.Errorf("got %q, want %q", err.Error(), want)
			}
		})
	}
}

func TestWatchFromFutureRVWaitsForIt(t *testing.T) {
	s := newTestStore(t, 0)
	w := mustWatch(t, s, pods, WatchOptions{ResourceVersion: 2})
	mustCreate(t, s, pods, newPod("ns", "a", nil, "")) // 1
	mustCreate(t, s, pods, newPod("ns", "b", nil, "")) // 2
	mustCreate(t, s, pods, newPod("ns", "c", nil, "")) // 3
	if ev := nextEvent(t, w); ev.RV != 3 || ev.Object.Object().GetName() != "c" {
		t.Errorf("got %s at RV %d, want c at 3", ev.Type, ev.RV)
	}
}

func TestWatchFromZeroStartsNow(t *testing.T) {
	s := newTestStore(t, 0)
	mustCreate(t, s, pods, newPod("ns", "a", nil, ""))
	w := mustWatch(t, s, pods, WatchOptions{})
	mustCreate(t, s, pods, newPod("ns", "b", nil, ""))
	if ev := nextEvent(t, w); ev.RV != 2 {
		t.Errorf("got first event at RV %d, want 2", ev.RV)
	}
}

func TestFiftyWatchersReceiveEveryConcurrentWriteOnce(t *testing.T) {
	const watchers, writers, perWriter = 50, 4, 500
	s := newTestStore(t, 0)
	ws := make([]*Watcher, watchers)
	for i := range ws {
		ws[i] = mustWatch(t, s, pods, WatchOptions{})
	}
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range perWriter / 2 {
				name := fmt.Sprintf("w%d-%d", g, i)
				mustCreate(t, s, pods, newPod("ns", name, nil, ""))
				mustUpdate(t, s, pods, "ns", name, func(p *corev1.Pod) { p.Spec.NodeName = "n" })
			}
		})
	}
	const total = writers * perWriter
	for i, w := range ws {
		wg.Go(func() {
			evs := nextEvents(t, w, total)
			for j, ev := range evs {
				if want := uint64(j + 1); ev.RV != want {
					t.Errorf("watcher %d: event %d has RV %d, want %d", i, j, ev.RV, want)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := s.CurrentRV(); got != total {
		t.Errorf("got RV %d, want %d", got, total)
	}
}

func TestSlowWatcherDoesNotBlockWriters(t *testing.T) {
	const history = 100
	// HistoryMax = HistorySize: a history grows for a live watcher that
	// lags, so without a cap this one would never be lapped.
	s := New(Options{HistorySize: history, HistoryMax: history, Fields: podFields})
	w := mustWatch(t, s, pods, WatchOptions{}) // never read until the writers are done
	// Enough writes that the history passes the watcher whatever it managed
	// to read before its buffer filled.
	writes := 4 * (history + watchBuffer + readBatch)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range writes / 4 {
				mustCreate(t, s, pods, newPod("ns", fmt.Sprintf("p%d-%d", g, i), nil, ""))
			}
		})
	}
	wg.Wait() // would hang if a writer waited for the watcher
	evs := endOf(t, w)
	if len(evs) == 0 {
		t.Fatal("got no event, want a final Error")
	}
	last := evs[len(evs)-1]
	if last.Type != watch.Error || !apierrors.IsResourceExpired(last.Err) {
		t.Fatalf("got last event %s (%v), want an Error with 410 Expired", last.Type, last.Err)
	}
	for i := 1; i < len(evs)-1; i++ {
		if evs[i].RV <= evs[i-1].RV {
			t.Errorf("event %d at RV %d follows RV %d", i, evs[i].RV, evs[i-1].RV)
		}
	}
	if !apierrors.IsResourceExpired(w.Err()) {
		t.Errorf("got Err() %v, want 410 Expired", w.Err())
	}
}

func TestSlowWatcherEndsOnceTheHistoryPassesIt(t *testing.T) {
	// The watcher goroutine, blocked on a full buffer, notices on its own that
	// the history dropped its next record and ends, freeing its resources.
	const history = 16
	// HistoryMax = HistorySize: without a cap the history would grow
	// rather than pass the watcher.
	s := New(Options{HistorySize: history, HistoryMax: history, Fields: podFields})
	w := mustWatch(t, s, pods, WatchOptions{})
	for i := range 2 * (watchBuffer + readBatch + history) {
		mustCreate(t, s, pods, newPod("ns", fmt.Sprintf("p%d", i), nil, ""))
	}
	timer := time.NewTimer(eventDeadline)
	defer timer.Stop()
	select {
	case <-w.done:
	case <-timer.C:
		t.Fatal("the lagging watcher did not end by itself")
	}
	if !apierrors.IsResourceExpired(w.Err()) {
		t.Errorf("got Err() %v, want 410 Expired", w.Err())
	}
}

func TestSelectorTransitionsBecomeAddedAndDeleted(t *testing.T) {
	s := newTestStore(t, 0)
	mustCreate(t, s, pods, newPod("ns", "p", map[string]string{"app": "web"}, ""))
	tests := []struct {
		name string
		opts WatchOptions
	}{
		{"field", WatchOptions{Selection: selection(t, "", "spec.nodeName=n1")}},
		{"label", WatchOptions{Selection: selection(t, "tier=front", "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := mustWatch(t, s, pods, tt.opts)
			set := func(on bool) func(p *corev1.Pod) {
				return func(p *corev1.Pod) {
					if tt.name == "field" {
						p.Spec.NodeName = map[bool]string{true: "n1", false: "n2"}[on]
					} else if on {
						p.Labels["tier"] = "front"
					} else {
						delete(p.Labels, "tier")
					}
				}
			}
			mustUpdate(t, s, pods, "ns", "p", set(true))                                   // starts matching
			mustUpdate(t, s, pods, "ns", "p", func(p *corev1.Pod) { p.Labels["v"] = "2" }) // still matches
			mustUpdate(t, s, pods, "ns", "p", set(false))                                  // stops matching
			mustUpdate(t, s, pods, "ns", "p", func(p *corev1.Pod) { p.Labels["v"] = "3" }) // still does not
			mustUpdate(t, s, pods, "ns", "p", set(true))
			gone := mustDelete(t, s, pods, "ns", "p")
			evs := nextEvents(t, w, 5)
			want := []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Added, watch.Deleted}
			for i, ev := range evs {
				if ev.Type != want[i] {
					t.Errorf("event %d: got %s, want %s", i, ev.Type, want[i])
				}
			}
			if evs[2].Object.Object().GetLabels()["v"] != "2" || evs[2].Object.RV() != evs[2].RV {
				t.Errorf("the DELETED of a transition carries %v, want the new object", evs[2].Object.Object())
			}
			if evs[4].Object != gone {
				t.Errorf("the final DELETED carries RV %d, want the deleted object at %d", evs[4].Object.RV(), gone.RV())
			}
			mustCreate(t, s, pods, newPod("ns", "p", map[string]string{"app": "web"}, ""))
		})
	}
}

func TestInitialEventsThenBookmarkThenStream(t *testing.T) {
	s := newTestStore(t, 0)
	for i := range 100 {
		mustCreate(t, s, pods, newPod("ns", fmt.Sprintf("p%03d", i), nil, ""))
	}
	const writers, perWriter = 2, 300
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			<-start
			for i := range perWriter {
				switch name := fmt.Sprintf("p%03d", (g*50+i)%100); i % 3 {
				case 0:
					mustUpdate(t, s, pods, "ns", name, func(p *corev1.Pod) { p.Spec.NodeName += "x" })
				default:
					mustCreate(t, s, pods, newPod("new", fmt.Sprintf("w%d-%d", g, i), nil, ""))
				}
			}
		})
	}
	close(start)
	w := mustWatch(t, s, pods, WatchOptions{SendInitialEvents: true})
	wg.Wait()
	final := s.CurrentRV()

	state := map[string]uint64{} // key -> RV, rebuilt from the events
	var bookmark uint64
	lastName := ""
	for {
		ev := nextEvent(t, w)
		if ev.Type == watch.Bookmark {
			if !ev.InitialEventsEnd {
				t.Fatal("got a bookmark without InitialEventsEnd before the initial events ended")
			}
			bookmark = ev.RV
			break
		}
		name := ev.Object.Object().GetNamespace() + "/" + ev.Object.Object().GetName()
		if ev.Type != watch.Added || name <= lastName {
			t.Fatalf("initial event %s %s after %s, want ADDED in key order", ev.Type, name, lastName)
		}
		lastName = name
		state[name] = ev.RV
	}
	for _, rv := range state {
		if rv > bookmark {
			t.Errorf("an initial object has RV %d after the bookmark's %d", rv, bookmark)
		}
	}
	prev := bookmark
	for prev < final {
		ev := nextEvent(t, w)
		if ev.RV != prev+1 {
			t.Fatalf("got event at RV %d after %d: a gap or a duplicate", ev.RV, prev)
		}
		prev = ev.RV
		state[ev.Object.Object().GetNamespace()+"/"+ev.Object.Object().GetName()] = ev.RV
	}
	list := mustList(t, s, pods, ListOptions{})
	if len(list.Items) != len(state) {
		t.Errorf("rebuilt %d objects, want %d", len(state), len(list.Items))
	}
	for _, st := range list.Items {
		if name := st.Object().GetNamespace() + "/" + st.Object().GetName(); state[name] != st.RV() {
			t.Errorf("%s: rebuilt RV %d, want %d", name, state[name], st.RV())
		}
	}
}

func TestBookmarkWhenIdle(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(0, 0))
	s := New(Options{Clock: clk})
	mustCreate(t, s, pods, newPod("ns", "a", nil, "")) // 1
	w := mustWatch(t, s, pods, WatchOptions{BookmarkInterval: time.Minute, SendInitialEvents: true})
	nextEvents(t, w, 2) // ADDED a, the initial-events bookmark
	bookmark := func() uint64 {
		t.Helper()
		clk.Step(time.Minute)
		ev := nextEvent(t, w)
		if ev.Type != watch.Bookmark || ev.InitialEventsEnd || ev.Object != nil {
			t.Fatalf("got %s (end %v), want a plain Bookmark", ev.Type, ev.InitialEventsEnd)
		}
		return ev.RV
	}
	if got := bookmark(); got != 1 {
		t.Errorf("got bookmark at RV %d, want 1", got)
	}
	mustCreate(t, s, pods, newPod("ns", "b", nil, "")) // 2
	nextEvent(t, w)
	if got := bookmark(); got != 2 {
		t.Errorf("got bookmark at RV %d, want 2", got)
	}
	// A write to another resource moves the bookmarks on too, once the
	// watcher has skipped it (it may tick first).
	mustCreate(t, s, nodes, newPod("", "n1", nil, "")) // 3
	for range 50 {
		got := bookmark()
		if got == 3 {
			return
		}
		if got != 2 {
			t.Fatalf("got bookmark at RV %d, want 2 or 3", got)
		}
	}
	t.Error("no bookmark reached RV 3")
}

func TestWatchEndsOnStopAndCancelWithoutLeaks(t *testing.T) {
	s := newTestStore(t, 0)
	mustCreate(t, s, pods, newPod("ns", "a", nil, ""))
	tests := []struct {
		name    string
		end     func(w *Watcher, cancel context.CancelFunc)
		wantErr error
	}{
		{"stop", func(w *Watcher, _ context.CancelFunc) { w.Stop() }, nil},
		{"stop twice", func(w *Watcher, _ context.CancelFunc) { w.Stop(); w.Stop() }, nil},
		{"cancel", func(_ *Watcher, cancel context.CancelFunc) { cancel() }, context.Canceled},
	}
	for _, tt := range tests {
		for _, opts := range []WatchOptions{{}, {SendInitialEvents: true, BookmarkInterval: time.Hour}} {
			t.Run(fmt.Sprintf("%s initial=%v", tt.name, opts.SendInitialEvents), func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				w, err := s.Watch(ctx, pods, opts)
				if err != nil {
					t.Fatal(err)
				}
				tt.end(w, cancel)
				endOf(t, w)
				<-w.done
				if !errors.Is(w.Err(), tt.wantErr) || (tt.wantErr == nil && w.Err() != nil) {
					t.Errorf("got Err() %v, want %v", w.Err(), tt.wantErr)
				}
				if n := s.liveWatchers.Load(); n != 0 {
					t.Errorf("%d watcher goroutines still run, want 0", n)
				}
			})
		}
	}
}

func TestWatchWithSelectorsSkipsOtherObjects(t *testing.T) {
	s := newTestStore(t, 0)
	sel := selection(t, "", "status.phase!=Succeeded")
	sel.Namespace = "ns"
	w := mustWatch(t, s, pods, WatchOptions{Selection: sel})
	mustCreate(t, s, nodes, newPod("", "ns", nil, ""))
	mustCreate(t, s, pods, newPod("other", "a", nil, ""))
	done := newPod("ns", "done", nil, "")
	done.Status.Phase = corev1.PodSucceeded
	mustCreate(t, s, pods, done)
	mustDelete(t, s, pods, "ns", "done")
	mustCreate(t, s, pods, newPod("ns", "b", nil, ""))
	if ev := nextEvent(t, w); ev.Type != watch.Added || ev.Object.Object().GetName() != "b" {
		t.Errorf("got %s %s, want ADDED b", ev.Type, ev.Object.Object().GetName())
	}
}

func TestInitialEventsWithFutureRVIsTooLarge(t *testing.T) {
	s := newTestStore(t, 0)
	_, err := s.Watch(context.Background(), pods, WatchOptions{SendInitialEvents: true, ResourceVersion: 5})
	if !apierrors.IsTimeout(err) {
		t.Errorf("got %v, want a Timeout (too large resource version)", err)
	}
}

// TestCloseEndsWatchesAfterTheirLastEvent: a watcher that has not read
// anything yet still gets every event written before Close, then its
// stream ends without error; new watches are refused.
func TestCloseEndsWatchesAfterTheirLastEvent(t *testing.T) {
	s := newTestStore(t, 0)
	idle := mustWatch(t, s, pods, WatchOptions{ResourceVersion: s.CurrentRV()})
	const n = 300 // more than a watcher's channel buffers
	for i := range n {
		mustCreate(t, s, pods, newPod("ns", fmt.Sprintf("p%03d", i), nil, ""))
	}
	s.Close()
	evs := endOf(t, idle)
	if len(evs) != n || evs[n-1].RV != s.CurrentRV() {
		t.Fatalf("after Close: %d events, last at RV %d; want %d, the last at RV %d", len(evs), evs[len(evs)-1].RV, n, s.CurrentRV())
	}
	if err := idle.Err(); err != nil {
		t.Errorf("a watch ended by Close reports %v, want no error", err)
	}
	if _, err := s.Watch(context.Background(), pods, WatchOptions{}); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("Watch after Close: %v, want 503 ServiceUnavailable", err)
	}
}

// TestWritesToAnotherResourceDoNotExpireAPodWatcher: every resource has a
// history of its own, so a burst of Events, 50 times the history, pushes out
// no record a pod watcher that is behind still needs: neither one blocked on
// a consumer that does not read, nor one that starts from before the burst.
func TestWritesToAnotherResourceDoNotExpireAPodWatcher(t *testing.T) {
	const history, burst = 1000, 50_000
	const podWrites = watchBuffer + readBatch + 100 // enough to block the live watcher
	s := newTestStore(t, history)
	from := mustCreate(t, s, nodes, newPod("", "n1", nil, "")).RV() // 1
	live := mustWatch(t, s, pods, WatchOptions{})                   // not read before the burst ends
	for i := range podWrites {
		mustCreate(t, s, pods, newPod("ns", fmt.Sprintf("p%03d", i), nil, ""))
	}
	writeEvents(t, s, burst)
	added := mustCreate(t, s, pods, newPod("ns", "last", nil, ""))
	late := mustWatch(t, s, pods, WatchOptions{ResourceVersion: from}) // starts behind the burst

	for name, w := range map[string]*Watcher{"live": live, "late": late} {
		evs := nextEvents(t, w, podWrites+1)
		for i, ev := range evs[:podWrites] {
			if ev.Type != watch.Added || ev.RV != from+uint64(i+1) {
				t.Fatalf("%s watcher: event %d is %s at RV %d, want ADDED at %d", name, i, ev.Type, ev.RV, from+uint64(i+1))
			}
		}
		if ev := evs[podWrites]; ev.Type != watch.Added || ev.RV != added.RV() {
			t.Errorf("%s watcher: last event is %s at RV %d, want ADDED at %d", name, ev.Type, ev.RV, added.RV())
		}
	}
	// The burst did pass its own history, which the pod watchers did not hold.
	if _, err := s.Watch(context.Background(), events, WatchOptions{ResourceVersion: from}); !apierrors.IsResourceExpired(err) {
		t.Errorf("watching events from RV %d: got %v, want 410 Expired", from, err)
	}
	if got := ringLen(s, events); got != history {
		t.Errorf("the events history grew to %d records for pod watchers, want %d", got, history)
	}
	// A resource nobody wrote has nothing to replay, from any RV.
	leases := mustWatch(t, s, schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, WatchOptions{ResourceVersion: 1})
	leases.Stop()
}

// TestHistoryGrowsForALaggingWatcher: a watcher that reads one event for every
// ten records of its resource written, 20 times the history in all, gets every
// event once and in order: the history grew rather than drop records it had
// not read. With a cap below the lag, it is lapped and gets 410.
func TestHistoryGrowsForALaggingWatcher(t *testing.T) {
	const history, writes = 1000, 20_000
	tests := []struct {
		name        string
		historyMax  int
		wantExpired bool
	}{
		{"default cap", 0, false},
		{"cap below the lag", 2 * history, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Options{HistorySize: history, HistoryMax: tt.historyMax, Fields: podFields})
			w := mustWatch(t, s, pods, WatchOptions{})
			var evs []Event
			open := true
			read := func() {
				var ev Event
				if ev, open = receive(t, w); open {
					evs = append(evs, ev)
				}
			}
			for i := range writes {
				if name := fmt.Sprintf("p%d", i/2); i%2 == 0 {
					mustCreate(t, s, pods, newPod("ns", name, nil, ""))
				} else {
					mustUpdate(t, s, pods, "ns", name, func(p *corev1.Pod) { p.Spec.NodeName = "n" })
				}
				if i%10 == 9 && open {
					read()
				}
			}
			for open && len(evs) < writes {
				read()
			}

			if tt.wantExpired {
				if got := ringLen(s, pods); got != tt.historyMax {
					t.Errorf("the history holds %d records, want the cap %d", got, tt.historyMax)
				}
				if len(evs) == 0 || evs[len(evs)-1].Type != watch.Error || !apierrors.IsResourceExpired(evs[len(evs)-1].Err) {
					t.Fatalf("got %d events ending with %v, want a final Error with 410 Expired", len(evs), names(evs[max(0, len(evs)-1):]))
				}
				if !apierrors.IsResourceExpired(w.Err()) {
					t.Errorf("got Err() %v, want 410 Expired", w.Err())
				}
				// On 410 the watcher drops what its consumer has not read
				// (racing this reader): the events before the Error are in
				// order, not necessarily all there.
				for i := 1; i < len(evs)-1; i++ {
					if evs[i].RV <= evs[i-1].RV {
						t.Fatalf("event %d at RV %d follows RV %d", i, evs[i].RV, evs[i-1].RV)
					}
				}
				return
			}
			if len(evs) != writes {
				t.Fatalf("got %d events, want %d", len(evs), writes)
			}
			for i, ev := range evs {
				wantType := map[bool]watch.EventType{true: watch.Added, false: watch.Modified}[i%2 == 0]
				if ev.RV != uint64(i+1) || ev.Type != wantType {
					t.Fatalf("event %d: got %s at RV %d, want %s at %d", i, ev.Type, ev.RV, wantType, i+1)
				}
			}
			if got := ringLen(s, pods); got <= history || got > DefaultHistoryMax {
				t.Errorf("the history holds %d records, want more than %d, at most %d", got, history, DefaultHistoryMax)
			}
		})
	}
}

// TestEndedWatchersDoNotGrowTheHistory: only live watchers hold records; nor
// does a live watcher of another resource.
func TestEndedWatchersDoNotGrowTheHistory(t *testing.T) {
	const history = 1000
	tests := []struct {
		name string
		end  func(t *testing.T, w *Watcher, cancel context.CancelFunc)
	}{
		{"stopped", func(_ *testing.T, w *Watcher, _ context.CancelFunc) { w.Stop() }},
		{"cancelled", func(t *testing.T, w *Watcher, cancel context.CancelFunc) { cancel(); endOf(t, w); <-w.done }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, history)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w, err := s.Watch(ctx, pods, WatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			mustWatch(t, s, nodes, WatchOptions{}) // live, never read
			mustCreate(t, s, pods, newPod("ns", "first", nil, ""))
			tt.end(t, w, cancel)
			for i := range 5 * history {
				mustCreate(t, s, pods, newPod("ns", fmt.Sprintf("p%d", i), nil, ""))
			}
			if got := ringLen(s, pods); got != history {
				t.Errorf("the history holds %d records, want %d", got, history)
			}
		})
	}
}

// TestProgressTellsWhenTheConsumerHasEveryWrite: a watcher's Progress
// reaches the resource's LatestRV once every write was handed over, and
// counts the events handed over; writes it skips (other objects, other
// resources) move it on too.
func TestProgressTellsWhenTheConsumerHasEveryWrite(t *testing.T) {
	s := newTestStore(t, 100)
	ctx := context.Background()
	w, err := s.Watch(ctx, pods, WatchOptions{Selection: Selection{Label: labels.SelectorFromSet(labels.Set{"app": "a"})}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mustCreate(t, s, pods, newPod("default", "a", map[string]string{"app": "a"}, ""))
	mustCreate(t, s, pods, newPod("default", "b", map[string]string{"app": "b"}, "")) // not selected
	mustCreate(t, s, events, newPod("default", "e", nil, ""))
	<-w.Events()
	latest := s.LatestRV(pods)
	if latest != 2 {
		t.Fatalf("LatestRV(pods) = %d, want 2", latest)
	}
	deadline := time.Now().Add(eventDeadline)
	for {
		delivered, sent := w.Progress()
		if delivered >= latest {
			if sent != 1 {
				t.Fatalf("sent %d events, want 1", sent)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("progress stuck at %d, want %d", delivered, latest)
		}
		runtime.Gosched()
	}
}
