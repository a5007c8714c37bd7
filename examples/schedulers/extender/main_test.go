package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/batkube/batkube/pkg/server/servertest"
)

// TestUsageCountsEveryRunningPodOnce: against Batkube's API server, the
// cpu the extender counts on a node is that of the pods running there,
// whatever the order of its bindings, listings and pod ends: a pod it bound
// that ended before its next listing counts no more, and a pod whose
// binding is stored while a listing is on its way (the listing does not
// show it) counts in that listing.
func TestUsageCountsEveryRunningPodOnce(t *testing.T) {
	ts := servertest.StartDefault(t)
	cfg := ts.Config()
	var mu sync.Mutex
	var afterList func() // run once, after the next listing's answer came
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if r.Method == http.MethodGet && r.URL.Path == "/api/v1/pods" && strings.Contains(r.URL.RawQuery, "fieldSelector") {
				mu.Lock()
				f := afterList
				afterList = nil
				mu.Unlock()
				if f != nil {
					f()
				}
			}
			return resp, err
		})
	})
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	if node, err = cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	e, err := newExtender(options{Overload: 1}, cs, factory)
	if err != nil {
		t.Fatal(err)
	}
	informersCtx, stopInformers := context.WithCancel(ctx)
	factory.Start(informersCtx.Done())
	defer factory.Shutdown()
	defer stopInformers() // before Shutdown, which waits for them
	factory.WaitForCacheSync(informersCtx.Done())

	wantUsage := func(what string, want int64) {
		t.Helper()
		used, err := e.usage(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if used["n1"] != want {
			t.Errorf("%s: n1 uses %dm of cpu, want %dm", what, used["n1"], want)
		}
	}
	createPod(ctx, t, cs, "p1", "4")
	bind(t, e, "p1")
	wantUsage("p1 bound", 4000)

	createPod(ctx, t, cs, "p2", "2")
	bind(t, e, "p2")
	setPhase(ctx, t, cs, "p2", corev1.PodSucceeded)
	wantUsage("p2 bound and ended before the listing", 4000)

	createPod(ctx, t, cs, "p3", "1")
	mu.Lock()
	afterList = func() { bind(t, e, "p3") }
	mu.Unlock()
	wantUsage("p3's binding stored while the listing was on its way", 5000)
	wantUsage("p3 listed", 5000)

	setPhase(ctx, t, cs, "p1", corev1.PodSucceeded)
	wantUsage("p1 ended", 1000)
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.assumed) != 0 || len(e.inFlight) != 0 {
		t.Errorf("still assumed %v, in flight %v: every pod was listed or ended", e.assumed, e.inFlight)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func createPod(ctx context.Context, t *testing.T, cs kubernetes.Interface, name, cpu string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func setPhase(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string, phase corev1.PodPhase) {
	t.Helper()
	pod, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = phase
	if _, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// bind asks the extender to bind the pod to n1, as kube-scheduler does.
func bind(t *testing.T, e *extender, pod string) {
	t.Helper()
	body, err := json.Marshal(bindingArgs{PodName: pod, PodNamespace: "default", Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	e.bind(w, httptest.NewRequest(http.MethodPost, "/bind", bytes.NewReader(body)))
	var res bindingResult
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || res.Error != "" {
		t.Fatalf("binding %s: %q (%v)", pod, res.Error, err)
	}
}
