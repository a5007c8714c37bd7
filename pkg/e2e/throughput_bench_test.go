package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/batkube/batkube/pkg/gcpace"
	"github.com/batkube/batkube/pkg/store"
)

// BenchmarkKubeSchedulerThroughput measures how many pods per second an
// unmodified kube-scheduler 1.37 (client QPS raised) binds through Batkube:
// 334 nodes and 10,000 pending pods, the setting measured against a real
// kube-apiserver + etcd (544 pods/s on this kind of machine). It reports
// pods/s, the CPU time per pod of the scheduler process and of Batkube's
// server (the benchmark's process, from the scheduler's start to the last
// binding; the benchmark counts the bindings on an in-process watch of the
// store, which costs next to nothing, not over HTTP), and the server's CPU
// as a share of the scheduler's.
func BenchmarkKubeSchedulerThroughput(b *testing.B) {
	const nodes, pods = 334, 10000
	// The server paces its garbage collector and runs its Go code on one
	// thread, as kubernetes-server does (--gc-headroom's and --gomaxprocs'
	// defaults); kube-scheduler, another process, keeps Go's default.
	defer gcpace.Start(64 << 20).Stop()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for b.Loop() {
		bin := binary(b, "kube-scheduler")
		c := startCluster(b)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		for i := range nodes {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%03d", i)},
				Status: corev1.NodeStatus{
					Capacity:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"), corev1.ResourcePods: resource.MustParse("110")},
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				}}
			if _, err := c.API.Create(ctx, corev1.SchemeGroupVersion.WithResource("nodes"), n); err != nil {
				b.Fatal(err)
			}
		}
		for i := range pods {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i), Namespace: "default"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}
			if _, err := c.API.Create(ctx, corev1.SchemeGroupVersion.WithResource("pods"), p); err != nil {
				b.Fatal(err)
			}
		}
		w, err := c.Store.Watch(ctx, corev1.SchemeGroupVersion.WithResource("pods").GroupResource(), store.WatchOptions{ResourceVersion: c.Store.CurrentRV()})
		if err != nil {
			b.Fatal(err)
		}
		config := filepath.Join(c.dir, "scheduler.yaml")
		writeFile(b, config, schedulerConfig("kube-scheduler", c.kubeconfig))
		cmd := command(ctx, b, filepath.Join(c.dir, "scheduler.log"), bin, "--config", config, "--secure-port", "0")
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		var before syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var first time.Time
		bound := 0
		for bound < pods {
			ev, ok := <-w.Events()
			if !ok {
				b.Fatalf("watch closed after %d bindings: %v", bound, w.Err())
			}
			if p, isPod := ev.Object.Object().(*corev1.Pod); isPod && ev.Type == watch.Modified && p.Spec.NodeName != "" {
				if bound == 0 {
					first = time.Now()
				}
				bound++
			}
		}
		elapsed := time.Since(first)
		var after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		w.Stop()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		cancel()
		sched := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		b.ReportMetric(float64(pods)/elapsed.Seconds(), "pods/s")
		b.ReportMetric(time.Since(start).Seconds(), "s_total")
		b.ReportMetric(sched.Seconds()/float64(pods)*1e6, "sched_cpu_us/pod")
		// The test process: Batkube's server (and an in-process watch).
		own := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
		b.ReportMetric(own.Seconds()/float64(pods)*1e6, "batkube_cpu_us/pod")
		b.ReportMetric(100*own.Seconds()/sched.Seconds(), "server/sched-cpu-%")
		b.Logf("kube-scheduler 1.37 bound %d pods on %d nodes at %.0f pods/s: kube-scheduler CPU %s (%.0f µs/pod), Batkube's server %s (%.0f µs/pod, %.0f %% of the scheduler's); %d requests on the fast path, %d connections",
			pods, nodes, float64(pods)/elapsed.Seconds(), sched.Round(time.Millisecond), sched.Seconds()/float64(pods)*1e6,
			own.Round(time.Millisecond), own.Seconds()/float64(pods)*1e6, 100*own.Seconds()/sched.Seconds(), c.API.FastPathRequests(), c.Connections())
	}
}
