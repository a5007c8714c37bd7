package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// expectedSchedulerErrors are error lines an unmodified scheduler logs against
// any API server in this setup (no kubelet, no TLS serving) or when it is
// stopped at the end of a test.
var expectedSchedulerErrors = regexp.MustCompile(strings.Join([]string{
	`context canceled`,
	`leaderelection lost`,
	`error retrieving resource lock .*context canceled`,
	`Failed to update lock`,
	`http: Server closed`,
	`The manifest file is empty, ignoring`, // kube-scheduler 1.37 at start, with no component manifest
	`broadcaster already stopped`,          // events recorded while the scheduler stops
	// Bindings in flight when the test stops the scheduler fail with
	// "context canceled" on its side after the server bound the pod; the
	// scheduler then cannot forget the pod it had already confirmed. The
	// test checks below that no binding got an error from the server.
	`ForgetPod failed.*is not assumed`,
}, "|"))

func TestKubeScheduler137BindsEveryPod(t *testing.T) { testSchedulerBindsEveryPod(t, "kube-scheduler") }

func TestKubeScheduler118BindsEveryPod(t *testing.T) {
	testSchedulerBindsEveryPod(t, "kube-scheduler-1.18")
}

// testSchedulerBindsEveryPod starts an unmodified kube-scheduler with its
// defaults (protobuf, leader election) against 20 nodes and 200 pending
// pods, and checks it binds every pod without over-committing a node and
// without unexpected errors in its log.
func testSchedulerBindsEveryPod(t *testing.T, name string) {
	const nodes, pods = 20, 200
	bin := binary(t, name)
	c := startCluster(t)
	ctx := testContext(t, 3*time.Minute)
	for i := range nodes {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%02d", i), Labels: map[string]string{corev1.LabelHostname: fmt.Sprintf("node-%02d", i)}},
			Status: corev1.NodeStatus{
				Capacity:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			}}
		if _, err := c.client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range pods {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%03d", i)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("350m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
		if _, err := c.client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := c.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	config := filepath.Join(c.dir, "scheduler.yaml")
	writeFile(t, config, schedulerConfig(name, c.kubeconfig))
	logPath := filepath.Join(c.dir, name+".log")
	schedCtx, stop := context.WithCancel(ctx)
	defer stop()
	cmd := command(schedCtx, t, logPath, bin, "--config", config, "--secure-port", "0", "--v", "2")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	bound := map[string]string{}
	for len(bound) < pods {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed with %d/%d pods bound", len(bound), pods)
			}
			if p, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type == watch.Modified && p.Spec.NodeName != "" {
				bound[p.Name] = p.Spec.NodeName
			}
		case err := <-exited:
			log, _ := os.ReadFile(logPath)
			t.Fatalf("%s exited (%v) with %d/%d pods bound; log:\n%s", name, err, len(bound), pods, tail(string(log), 60))
		case <-ctx.Done():
			log, _ := os.ReadFile(logPath)
			t.Fatalf("%d/%d pods bound before the deadline; log:\n%s", len(bound), pods, tail(string(log), 60))
		}
	}
	for _, r := range c.Requests() {
		if strings.HasSuffix(strings.Split(r.URI, "?")[0], "/binding") && r.Code != 201 {
			if r.Code != 409 {
				t.Errorf("binding %s answered %d", r.URI, r.Code)
			} else {
				t.Logf("kube-scheduler bound an already bound pod (409): %s", r.URI)
			}
		}
	}
	perNode := map[string]int{}
	for _, n := range bound {
		perNode[n]++
	}
	for n, count := range perNode {
		if count > 11 { // 4 cores / 350m
			t.Errorf("node %s got %d pods, more than its 4 cores allow", n, count)
		}
	}
	stop()
	<-exited
	log := readFile(t, logPath)
	lines := strings.Split(string(log), "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "E") && !expectedSchedulerErrors.MatchString(line) {
			t.Errorf("unexpected error in the %s log: %s\ncontext:\n%s", name, line, strings.Join(lines[max(0, i-8):i], "\n"))
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
