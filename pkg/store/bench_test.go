package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func BenchmarkCreate(b *testing.B) {
	createEachLoop(b, newTestStore(b, 0))
}

// createEachLoop creates a new pod in each iteration of b's loop, and
// returns how many it created.
func createEachLoop(b *testing.B, s *Store) int {
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.Create(ctx, pods, newPod("ns", fmt.Sprintf("p%d", i), nil, "")); err != nil {
			b.Fatal(err)
		}
		i++
	}
	return i
}

// BenchmarkCreateWithSubscriber is BenchmarkCreate with a subscription to
// pods whose consumer takes the changes as they come; the creations of
// BenchmarkCreate pay nothing for the subscriptions to other resources here.
func BenchmarkCreateWithSubscriber(b *testing.B) {
	for _, subscribed := range []schema.GroupResource{pods, nodes} {
		b.Run(subscribed.Resource, func(b *testing.B) {
			s := newTestStore(b, 0)
			sub := s.Subscribe(subscribed)
			defer sub.Close()
			done := make(chan struct{})
			taken := make(chan int)
			go func() {
				var buf []Change
				n := 0
				for {
					select {
					case <-sub.Ready():
						buf = sub.Take(buf[:0])
						n += len(buf)
						clear(buf)
					case <-done:
						taken <- n + len(sub.Take(nil))
						return
					}
				}
			}()
			want := createEachLoop(b, s)
			close(done)
			if subscribed != pods {
				want = 0
			}
			if got := <-taken; got != want {
				b.Fatalf("the subscriber took %d changes, want %d", got, want)
			}
		})
	}
}

func BenchmarkUpdate(b *testing.B) {
	s := newTestStore(b, 0)
	mustCreate(b, s, pods, newPod("ns", "p", nil, ""))
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_, err := s.Update(ctx, pods, "ns", "p", func(cur Object) (Object, error) {
			cur.(*corev1.Pod).Spec.NodeName = fmt.Sprintf("n%d", i)
			return cur, nil
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkList5000Pods(b *testing.B) {
	s := newTestStore(b, 0)
	for i := range 5000 {
		pod := newPod(fmt.Sprintf("ns%d", i%10), fmt.Sprintf("p%04d", i), map[string]string{"app": fmt.Sprint(i % 4)}, "")
		if i%2 == 0 {
			pod.Spec.NodeName = fmt.Sprintf("n%d", i%50)
		}
		mustCreate(b, s, pods, pod)
	}
	tests := []struct {
		name string
		opts ListOptions
		want int
	}{
		{"all", ListOptions{}, 5000},
		{"fieldSelector", ListOptions{Selection: Selection{Field: fields.OneTermEqualSelector("spec.nodeName", "")}}, 2500},
		{"labelSelector", ListOptions{Selection: Selection{Label: labels.SelectorFromSet(labels.Set{"app": "1"})}}, 1250},
		{"namespace", ListOptions{Selection: Selection{Namespace: "ns3"}}, 500},
		{"page500", ListOptions{Limit: 500}, 500},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := s.List(pods, tt.opts)
				if err != nil || len(res.Items) != tt.want {
					b.Fatalf("got %d items, %v; want %d", len(res.Items), err, tt.want)
				}
			}
		})
	}
	b.Run("exactRVAfter1000Writes", func(b *testing.B) {
		rv := s.CurrentRV()
		for i := range 1000 {
			mustUpdate(b, s, pods, "ns0", fmt.Sprintf("p%04d", (i%500)*10), func(p *corev1.Pod) { p.Spec.NodeName = fmt.Sprint("moved-", rv) })
		}
		b.ReportAllocs()
		for b.Loop() {
			res, err := s.List(pods, ListOptions{ResourceVersion: rv, Exact: true})
			if err != nil || len(res.Items) != 5000 {
				b.Fatalf("got %d items, %v; want 5000", len(res.Items), err)
			}
		}
	})
}

// BenchmarkWatchFanOut100Watchers measures events delivered to 100 watchers
// that all see every write. Writes go in windows smaller than the history so
// that no watcher falls behind.
func BenchmarkWatchFanOut100Watchers(b *testing.B) {
	const watchers, window = 100, 1024
	s := newTestStore(b, 4*window)
	for i := range 64 {
		mustCreate(b, s, pods, newPod("ns", fmt.Sprintf("p%d", i), nil, ""))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := make(chan struct{}, watchers)
	for range watchers {
		w, err := s.Watch(ctx, pods, WatchOptions{Selection: Selection{Namespace: "ns"}})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		go func() {
			n := 0
			for ev := range w.Events() {
				if ev.Type == "ERROR" {
					b.Errorf("watcher fell behind: %v", ev.Err)
					return
				}
				if n++; n%window == 0 {
					progress <- struct{}{}
				}
			}
		}()
	}
	b.ReportAllocs()
	start := time.Now()
	written := 0
	for b.Loop() {
		mustUpdate(b, s, pods, "ns", fmt.Sprintf("p%d", written%64), func(p *corev1.Pod) { p.Spec.NodeName = fmt.Sprint(written) })
		if written++; written%window == 0 {
			for range watchers {
				<-progress
			}
		}
	}
	delivered := float64(watchers * (written - written%window))
	b.ReportMetric(delivered/time.Since(start).Seconds(), "events/s")
}
