package server_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
)

type seen struct {
	typ  watch.EventType
	name string
	rv   string
}

func TestWatchFromOldRVReplaysMissedEventsInOrder(t *testing.T) {
	ts := servertest.StartDefault(t)
	eachClient(t, ts, func(t *testing.T, ctx context.Context, name string, cs kubernetes.Interface) {
		cms := cs.CoreV1().ConfigMaps("default")
		first, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "first-" + name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var want []seen
		for i := range 5 {
			cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i)}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, seen{watch.Added, cm.Name, cm.ResourceVersion})
			cm.Data = map[string]string{"k": "v"}
			if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			want = append(want, seen{watch.Modified, cm.Name, cm.ResourceVersion})
		}
		if err := cms.Delete(ctx, first.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		list, _ := cms.List(ctx, metav1.ListOptions{})
		want = append(want, seen{watch.Deleted, first.Name, list.ResourceVersion})

		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		var got []seen
		for len(got) < len(want) {
			ev, ok := <-w.ResultChan()
			if !ok {
				t.Fatalf("watch closed after %d events", len(got))
			}
			cm, isCM := ev.Object.(*corev1.ConfigMap)
			if !isCM {
				t.Fatalf("event %d: got %T (%v)", len(got), ev.Object, ev.Object)
			}
			got = append(got, seen{ev.Type, cm.Name, cm.ResourceVersion})
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("event %d: got %+v, want %+v", i, got[i], want[i])
			}
		}
	})
}

func TestWatchFromTooOldRVIsGone(t *testing.T) {
	ts := servertest.Start(t, server.Options{WatchHistory: 10})
	cs := ts.Clientset()
	ctx := ctxT(t)
	for i := range 30 {
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: strconv.Itoa(i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: "2"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev, ok := <-w.ResultChan()
	if !ok || ev.Type != watch.Error {
		t.Fatalf("got %v %v, want an ERROR event", ev.Type, ok)
	}
	if err := apierrors.FromObject(ev.Object); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("got %v, want 410 Expired", err)
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Error("the watch stays open after the 410 event")
	}
}

// TestFiftyWatchersReceiveEveryConcurrentWriteOnce: 50 watchers (half JSON,
// half protobuf) each receive every one of 2,000 concurrent creates exactly
// once, in resourceVersion order.
func TestFiftyWatchersReceiveEveryConcurrentWriteOnce(t *testing.T) {
	const watchers, writes, writers = 50, 2000, 8
	ts := servertest.Start(t, server.Options{WatchHistory: 5000})
	cl := clients(t, ts)
	ctx := ctxT(t)
	start, err := cl["json"].CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	results := make([][]seen, watchers)
	var wg sync.WaitGroup
	ready := make(chan struct{}, watchers)
	for i := range watchers {
		cs := cl["json"]
		if i%2 == 1 {
			cs = cl["protobuf"]
		}
		w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			ready <- struct{}{}
			for len(results[i]) < writes {
				ev, ok := <-w.ResultChan()
				if !ok {
					return
				}
				if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
					results[i] = append(results[i], seen{ev.Type, cm.Name, cm.ResourceVersion})
				}
			}
		}()
	}
	for range watchers {
		<-ready
	}
	var wwg sync.WaitGroup
	errs := make(chan error, writers)
	for wr := range writers {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for i := wr; i < writes; i += writers {
				_, err := cl["protobuf"].CoreV1().ConfigMaps("default").Create(context.Background(),
					&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i)}}, metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wwg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("write: %v", err)
	}
	wg.Wait()
	for i, evs := range results {
		if len(evs) != writes {
			t.Errorf("watcher %d: got %d events, want %d", i, len(evs), writes)
			continue
		}
		names := map[string]bool{}
		var last uint64
		for j, ev := range evs {
			rv, _ := strconv.ParseUint(ev.rv, 10, 64)
			if ev.typ != watch.Added || rv <= last || names[ev.name] {
				t.Errorf("watcher %d event %d: %+v after rv %d (duplicate %v)", i, j, ev, last, names[ev.name])
				break
			}
			last = rv
			names[ev.name] = true
		}
	}
}

func TestObjectLeavingAFieldSelectorArrivesAsDeleted(t *testing.T) {
	ts := servertest.StartDefault(t)
	eachClient(t, ts, func(t *testing.T, ctx context.Context, name string, cs kubernetes.Interface) {
		pods := cs.CoreV1().Pods("default")
		p, err := pods.Create(ctx, newPod("leaver-"+name), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed,metadata.name=" + p.Name, ResourceVersion: p.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		p.Status.Phase = corev1.PodSucceeded
		if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		ev := <-w.ResultChan()
		got, _ := ev.Object.(*corev1.Pod)
		if ev.Type != watch.Deleted || got == nil || got.Status.Phase != corev1.PodSucceeded {
			t.Fatalf("got %v %v, want DELETED with the Succeeded pod", ev.Type, ev.Object)
		}
	})
}

// TestWatchEndsAtItsTimeoutWithABookmark: a watch that allows bookmarks
// gets one at the resourceVersion it has reached just before its timeout
// (MaxWatchTimeout here) ends it, as kube-apiserver sends one before a
// watch's deadline: client-go resumes from there, and does not take a
// short watch without events for a failure. Without bookmarks it just
// ends.
func TestWatchEndsAtItsTimeoutWithABookmark(t *testing.T) {
	ts := servertest.Start(t, server.Options{MaxWatchTimeout: 200 * time.Millisecond})
	eachClient(t, ts, func(t *testing.T, ctx context.Context, name string, cs kubernetes.Interface) {
		cms := cs.CoreV1().ConfigMaps("default")
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before-" + name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, bookmarks := range []bool{true, false} {
			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion, AllowWatchBookmarks: bookmarks, TimeoutSeconds: ptr.To[int64](3600)})
			if err != nil {
				t.Fatal(err)
			}
			var types []watch.EventType
			var last string
			for ev := range w.ResultChan() {
				types = append(types, ev.Type)
				if o, err := meta.Accessor(ev.Object); err == nil {
					last = o.GetResourceVersion()
				}
			}
			switch {
			case bookmarks && (len(types) != 1 || types[0] != watch.Bookmark || last != cm.ResourceVersion):
				t.Errorf("with bookmarks: events %v, last at %s; want one bookmark at %s, then the end", types, last, cm.ResourceVersion)
			case !bookmarks && len(types) != 0:
				t.Errorf("without bookmarks: events %v, want none before the end", types)
			}
		}
	})
}
