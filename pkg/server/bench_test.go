package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
)

// BenchmarkListPods5000 measures a client-go list of 5,000 pods over HTTP.
func BenchmarkListPods5000(b *testing.B) {
	ts := servertest.StartDefault(b)
	ctx := context.Background()
	for i := range 5000 {
		p := newPod(fmt.Sprintf("pod-%05d", i))
		p.Namespace = "default"
		if _, err := ts.API.Create(ctx, corev1.SchemeGroupVersion.WithResource("pods"), p); err != nil {
			b.Fatal(err)
		}
	}
	for name, cs := range map[string]*kubernetes.Clientset{"json": ts.Clientset(), "protobuf": ts.ProtobufClientset()} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				l, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
				if err != nil || len(l.Items) != 5000 {
					b.Fatalf("list: %v, %d items", err, len(l.Items))
				}
			}
		})
	}
}

// BenchmarkWatchFanOut100 measures the events per second delivered to 100
// client-go watchers (protobuf), one create per iteration.
func BenchmarkWatchFanOut100(b *testing.B) {
	const watchers = 100
	ts := servertest.Start(b, server.Options{WatchHistory: 100000})
	cs := ts.ProtobufClientset()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	list, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	counts := make(chan int, watchers)
	start := make(chan int)
	for range watchers {
		w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			want := <-start
			got := 0
			for got < want {
				if _, ok := <-w.ResultChan(); !ok {
					break
				}
				got++
			}
			counts <- got
		}()
	}
	b.ResetTimer()
	begin := time.Now()
	n := b.N
	for i := range n {
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for range watchers {
		start <- n
	}
	wg.Wait()
	elapsed := time.Since(begin)
	close(counts)
	for c := range counts {
		if c != n {
			b.Fatalf("a watcher got %d events, want %d", c, n)
		}
	}
	b.ReportMetric(float64(watchers*n)/elapsed.Seconds(), "events/s")
}

// BenchmarkCreateAndBind measures creating and binding pods with client-go
// (protobuf, as kube-scheduler speaks), from 8 goroutines.
func BenchmarkCreateAndBind(b *testing.B) {
	ts := servertest.StartDefault(b)
	cs := ts.ProtobufClientset()
	ctx := context.Background()
	var mu sync.Mutex
	next := 0
	begin := time.Now()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			i := next
			next++
			mu.Unlock()
			name := fmt.Sprintf("p-%d", i)
			if _, err := cs.CoreV1().Pods("default").Create(ctx, newPod(name), metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			if err := cs.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name},
				Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "pods/s")
}
