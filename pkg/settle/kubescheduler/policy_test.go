package kubescheduler

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/store"
)

// fakeMetrics serves a kube-scheduler's metrics as the test sets them.
type fakeMetrics struct {
	mu      sync.Mutex
	body    string
	code    int
	queries []string
}

func (f *fakeMetrics) set(body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.body, f.code = body, http.StatusOK
}

func (f *fakeMetrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, r.URL.RawQuery)
	if r.Header.Get("Authorization") != "Bearer T" {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	w.WriteHeader(f.code)
	fmt.Fprint(w, f.body)
}

// metrics137 renders a kube-scheduler 1.37 exposition.
func metrics137(active, backoff, unschedulable, gated, binding float64, handled map[string]float64) string {
	var b strings.Builder
	b.WriteString("# HELP scheduler_pending_pods [STABLE] Number of pending pods\n# TYPE scheduler_pending_pods gauge\n")
	for q, n := range map[string]float64{"active": active, "backoff": backoff, "unschedulable": unschedulable, "gated": gated, "incomplete": 0, "pending": 0} {
		fmt.Fprintf(&b, "scheduler_pending_pods{queue=%q} %g\n", q, n)
	}
	fmt.Fprintf(&b, "scheduler_goroutines{operation=\"binding\"} %g\n", binding)
	b.WriteString("scheduler_pending_async_api_calls{call_type=\"pod_status_patch\"} 0\n")
	for ev, n := range handled {
		fmt.Fprintf(&b, "scheduler_event_handling_duration_seconds_bucket{event=%q,le=\"0.0001\"} %g\n", ev, n)
		fmt.Fprintf(&b, "scheduler_event_handling_duration_seconds_sum{event=%q} 0.01\n", ev)
		fmt.Fprintf(&b, "scheduler_event_handling_duration_seconds_count{event=%q} %g\n", ev, n)
	}
	b.WriteString(`kubernetes_build_info{build_date="",compiler="gc",git_commit="",git_tree_state="clean",git_version="v1.37.1",go_version="go1.26.8",major="1",minor="37",platform="linux/amd64"} 1` + "\n")
	b.WriteString("process_start_time_seconds 1.7e+09\n")
	return b.String()
}

var (
	podsGR  = schema.GroupResource{Resource: "pods"}
	nodesGR = schema.GroupResource{Resource: "nodes"}
)

func pod(name, node string, phase corev1.PodPhase) *store.Stored {
	return store.NewStored(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{SchedulerName: "default-scheduler", NodeName: node}, Status: corev1.PodStatus{Phase: phase}})
}

// node is a node of 8 cores and 110 pods.
func node(name string) *store.Stored {
	return nodeOfCPU(name, "8")
}

func nodeOfCPU(name, cpu string) *store.Stored {
	return store.NewStored(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")}}})
}

// withCPU returns a pod of st asking for cpu.
func withCPU(st *store.Stored, cpu string) *store.Stored {
	p := podOf(st).DeepCopy()
	p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}
	return store.NewStored(p)
}

// serveMetrics serves a fake kube-scheduler's metrics over TLS until the
// test ends.
func serveMetrics(t *testing.T) (*fakeMetrics, *httptest.Server) {
	t.Helper()
	fm := &fakeMetrics{}
	srv := httptest.NewTLSServer(fm)
	t.Cleanup(srv.Close)
	return fm, srv
}

// newFakeScheduler is a policy on a fake kube-scheduler's metrics.
func newFakeScheduler(t *testing.T) (*fakeMetrics, *Policy) {
	t.Helper()
	fm, srv := serveMetrics(t)
	return fm, newPolicy(t, srv)
}

func newPolicy(t *testing.T, srv *httptest.Server) *Policy {
	t.Helper()
	p, err := New(Options{MetricsURL: srv.URL + "/metrics", Token: "T", Client: srv.Client(), MinGap: time.Nanosecond, MaxGap: time.Nanosecond,
		Version: func() string { return "v1.37.1" }})
	if err != nil {
		t.Fatal(err)
	}
	p.proc = newProcess("", p.log) // the fake "scheduler" is this test process, always running
	return p
}

func check(t *testing.T, p *Policy) settle.Verdict {
	t.Helper()
	v, err := p.Check(context.Background(), settle.State{LastActivity: time.Now().Add(-time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestIdleOnlyWhenStateAndClusterAgree walks a step: a node and two pods
// appear, one is bound and finishes; at each point the verdict follows
// what the scheduler has shown of its state against the cluster's.
func TestIdleOnlyWhenStateAndClusterAgree(t *testing.T) {
	fm, p := newFakeScheduler(t)

	p.Observe(store.Change{Type: watch.Added, GR: nodesGR, Object: node("n0"), RV: 1})
	p.Observe(store.Change{Type: watch.Added, GR: podsGR, Object: pod("a", "", corev1.PodPending), RV: 2})
	p.Observe(store.Change{Type: watch.Added, GR: podsGR, Object: pod("b", "", corev1.PodPending), RV: 3})
	steps := []struct {
		what    string
		metrics string
		idle    bool
	}{
		{"node not handled yet", metrics137(0, 0, 2, 0, 0, nil), false},
		{"pods not seen yet", metrics137(0, 0, 0, 0, 0, map[string]float64{"NodeAdd": 1}), false},
		{"one pod in a scheduling cycle", metrics137(0, 0, 1, 0, 0, map[string]float64{"NodeAdd": 1}), false},
		{"pods queued", metrics137(1, 1, 0, 0, 0, map[string]float64{"NodeAdd": 1}), false},
		{"both unschedulable", metrics137(0, 0, 2, 0, 0, map[string]float64{"NodeAdd": 1}), true},
	}
	for _, s := range steps {
		fm.set(s.metrics)
		if v := check(t, p); v.Done != s.idle || (v.Done && !v.Exact) {
			t.Errorf("%s: verdict %+v, want done=%t (exact)", s.what, v, s.idle)
		}
	}
	// a is bound (its binding goroutine still runs), then finishes.
	p.Observe(store.Change{Type: watch.Modified, GR: podsGR, Prev: pod("a", "", corev1.PodPending), Object: pod("a", "n0", corev1.PodPending), RV: 4})
	fm.set(metrics137(0, 0, 1, 0, 1, map[string]float64{"NodeAdd": 1}))
	if v := check(t, p); v.Done {
		t.Errorf("binding goroutine at work: done")
	}
	fm.set(metrics137(0, 0, 1, 0, 0, map[string]float64{"NodeAdd": 1}))
	if v := check(t, p); !v.Done {
		t.Errorf("a bound, b unschedulable: %+v, want done", v)
	}
	p.Observe(store.Change{Type: watch.Modified, GR: podsGR, Prev: pod("a", "n0", corev1.PodRunning), Object: pod("a", "n0", corev1.PodSucceeded), RV: 5})
	if v := check(t, p); v.Done {
		t.Errorf("a finished but its deletion not handled (b may fit now): done")
	}
	fm.set(metrics137(0, 0, 1, 0, 0, map[string]float64{"NodeAdd": 1, "AssignedPodDelete": 1}))
	if v := check(t, p); v.Done {
		t.Errorf("deletion handled as the scrape that shows it read the queues: %+v, want a second look", v)
	}
	if v := check(t, p); !v.Done {
		t.Errorf("deletion handled, b unschedulable again: %+v, want done", v)
	}
	// A pod deleted while pending leaves the queues.
	p.Observe(store.Change{Type: watch.Deleted, GR: podsGR, Prev: pod("b", "", corev1.PodPending), Object: pod("b", "", corev1.PodPending), RV: 6})
	if v := check(t, p); v.Done {
		t.Errorf("b deleted but still queued: done")
	}
	if q := fm.queries[0]; !strings.Contains(q, "name%5B%5D=scheduler_pending_pods") {
		t.Errorf("scrape query %q does not filter the families", q)
	}
}

func TestCordonAndUncordonAreHandledEvents(t *testing.T) {
	fm, p := newFakeScheduler(t)
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n0"}}
	cordoned := n.DeepCopy()
	cordoned.Spec.Unschedulable = true
	cordoned.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}
	p.Observe(store.Change{Type: watch.Added, GR: nodesGR, Object: store.NewStored(n), RV: 1})
	p.Observe(store.Change{Type: watch.Modified, GR: nodesGR, Prev: store.NewStored(n), Object: store.NewStored(cordoned), RV: 2})
	p.Observe(store.Change{Type: watch.Modified, GR: nodesGR, Prev: store.NewStored(cordoned), Object: store.NewStored(n), RV: 3})
	// Cordon: one taint change; uncordon: a taint change and a node made
	// schedulable again, both recorded as NodeUpdateNodeTaint by 1.37.
	for _, tc := range []struct {
		handled float64
		idle    bool
	}{{1, false}, {2, false}, {3, false}, {3, true}} {
		fm.set(metrics137(0, 0, 0, 0, 0, map[string]float64{"NodeAdd": 1, "NodeUpdateNodeTaint": tc.handled}))
		if v := check(t, p); v.Done != tc.idle {
			t.Errorf("%g taint events handled: done=%t, want %t", tc.handled, v.Done, tc.idle)
		}
	}
}

// A node tainted before the scheduler's first watch of nodes started
// reaches the scheduler folded into the node it lists, not as a
// NodeUpdateNodeTaint it handles: once the watch's start is known (after
// the taint), the policy takes that event back; a taint after the start
// is an event to wait for.
func TestChangesBeforeTheSchedulersWatchAreFoldedIntoItsList(t *testing.T) {
	fm, p := newFakeScheduler(t)
	var start uint64
	watched := false
	p.opts.WatchStart = func(resource string) (uint64, bool) { return start, watched && resource == "nodes" }
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n0"}}
	tainted := n.DeepCopy()
	tainted.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}}
	p.Observe(store.Change{Type: watch.Added, GR: nodesGR, Object: store.NewStored(n), RV: 1})
	p.Observe(store.Change{Type: watch.Modified, GR: nodesGR, Prev: store.NewStored(n), Object: store.NewStored(tainted), RV: 2})
	fm.set(metrics137(0, 0, 0, 0, 0, map[string]float64{"NodeAdd": 1}))
	check(t, p)
	if v := check(t, p); v.Done {
		t.Fatal("the scheduler's watch not started yet: done (the taint may still come as an event)")
	}
	start, watched = 2, true // its list came after the taint
	check(t, p)
	if v := check(t, p); !v.Done {
		t.Errorf("the taint folded into the scheduler's list: not done (%s)", v.Waiting)
	}
	p.Observe(store.Change{Type: watch.Modified, GR: nodesGR, Prev: store.NewStored(tainted), Object: store.NewStored(n), RV: 3})
	check(t, p)
	if v := check(t, p); v.Done {
		t.Error("a taint removed after the watch started, not handled: done")
	}
	fm.set(metrics137(0, 0, 0, 0, 0, map[string]float64{"NodeAdd": 1, "NodeUpdateNodeTaint": 1}))
	check(t, p)
	if v := check(t, p); !v.Done {
		t.Errorf("the later taint handled: not done (%s)", v.Waiting)
	}
}

func TestRefusedScrapesAreAnErrorThatSaysWhatToDo(t *testing.T) {
	_, srv := serveMetrics(t)
	p, err := New(Options{MetricsURL: srv.URL + "/metrics", Token: "wrong", Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	p.proc = newProcess("", p.log)
	_, err = p.Check(context.Background(), settle.State{LastActivity: time.Now().Add(-time.Second)})
	if err == nil || !strings.Contains(err.Error(), "--authentication-kubeconfig") {
		t.Fatalf("Check: %v, want an error naming the flags to set", err)
	}
}

func TestScrapesWaitForAQuietGap(t *testing.T) {
	fm, srv := serveMetrics(t)
	p, err := New(Options{MetricsURL: srv.URL + "/metrics", Token: "T", Client: srv.Client(), MinGap: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Check(context.Background(), settle.State{LastActivity: time.Now()})
	if err != nil || v.Done || v.RetryAfter <= 0 || len(fm.queries) != 0 {
		t.Fatalf("right after a write: %+v %v, %d scrapes; want a retry later and no scrape", v, err, len(fm.queries))
	}
}

func TestParseReadsTheExposition(t *testing.T) {
	s, err := parse([]byte(metrics137(1, 2, 3, 4, 5, map[string]float64{"AssignedPodDelete": 7})))
	if err != nil {
		t.Fatal(err)
	}
	if s.queues["active"] != 1 || s.queues["backoff"] != 2 || s.queues["unschedulable"] != 3 || s.queues["gated"] != 4 ||
		s.goroutines != 5 || s.handled["AssignedPodDelete"] != 7 || s.started != 1.7e9 {
		t.Errorf("parsed %+v", s)
	}
	old, err := parse([]byte("scheduler_pending_pods{queue=\"active\"} 0\nscheduler_scheduler_goroutines{work=\"binding\"} 2\n"))
	if err != nil || old.goroutines != 2 {
		t.Errorf("1.18 exposition: %+v %v, want no handled counts and 2 goroutines", old, err)
	}
	for _, bad := range []string{"scheduler_pending_pods{queue=\"active} 0", "scheduler_pending_pods{queue=\"active\"}", "nothing_useful 1"} {
		if _, err := parse([]byte(bad)); err == nil {
			t.Errorf("parse(%q): no error", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(metrics137(0, 0, 1, 0, 0, map[string]float64{"NodeAdd": 1})))
	f.Add([]byte("a{b=\"\\\"\\\\\\n\"} 1 123\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = parse(data) // never panics
	})
}

// TestOlderSchedulersNeedTheirEventsDelivered: a scheduler that does not
// count the events it handles (1.18) is never found idle while events are
// still on their way to it.
func TestOlderSchedulersNeedTheirEventsDelivered(t *testing.T) {
	fm, srv := serveMetrics(t)
	delivered := false
	p, err := New(Options{MetricsURL: srv.URL + "/metrics", Token: "T", Client: srv.Client(), MinGap: time.Nanosecond, MaxGap: time.Nanosecond,
		Version: func() string { return "v1.18.19" }, Delivered: func() bool { return delivered }})
	if err != nil {
		t.Fatal(err)
	}
	fm.set("scheduler_pending_pods{queue=\"active\"} 0\nscheduler_pending_pods{queue=\"backoff\"} 0\nscheduler_pending_pods{queue=\"unschedulable\"} 0\n")
	for i := range 3 {
		if v := check(t, p); v.Done {
			t.Fatalf("check %d: done while events are undelivered: %+v", i, v)
		}
	}
	// One scrape finds the scheduler up (its process is looked for only
	// then); it gives no verdict. Then the barrier holds the scrapes back.
	if got := len(fm.queries); got != 1 {
		t.Errorf("%d scrapes while events are undelivered, want only the first (the scheduler is up)", got)
	}
}

// gangPod is a pending pod of pod group group, asking for 4 cores.
func gangPod(name, group, node string) *store.Stored {
	p := podOf(withCPU(pod(name, node, corev1.PodPending), "4")).DeepCopy()
	p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
	return store.NewStored(p)
}

// metricsGroups renders a kube-scheduler 1.37 exposition with
// GenericWorkload on: pods by queue, queued entities by "queue/type", the
// handled events.
func metricsGroups(queues, entities, handled map[string]float64) string {
	var b strings.Builder
	for _, q := range []string{"active", "backoff", "unschedulable", "gated", "incomplete", "pending"} {
		fmt.Fprintf(&b, "scheduler_pending_pods{queue=%q} %g\n", q, queues[q])
	}
	for _, q := range []string{"active", "backoff", "unschedulable", "gated"} {
		for _, typ := range []string{"pod", "podgroup"} {
			fmt.Fprintf(&b, "scheduler_queued_entities{queue=%q,type=%q} %g\n", q, typ, entities[q+"/"+typ])
		}
	}
	for ev, n := range handled {
		fmt.Fprintf(&b, "scheduler_event_handling_duration_seconds_count{event=%q} %g\n", ev, n)
	}
	b.WriteString(`kubernetes_feature_enabled{name="GenericWorkload",stage="BETA"} 1` + "\n")
	b.WriteString(`kubernetes_feature_enabled{name="SchedulerAsyncPreemption",stage="BETA"} 1` + "\n")
	b.WriteString("scheduler_goroutines{operation=\"binding\"} 0\nprocess_start_time_seconds 1.7e+09\n")
	return b.String()
}

// podGroup is a PodGroup object of a gang of minCount; with a reason,
// its last attempt's condition.
func podGroup(name string, minCount int32, reason, message string) *store.Stored {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}}}}
	if reason != "" {
		pg.Status.Conditions = []metav1.Condition{{Type: schedulingv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionFalse, Reason: reason, Message: message}}
	}
	return store.NewStored(pg)
}

var podGroupsGR = schema.GroupResource{Group: "scheduling.k8s.io", Resource: "podgroups"}

// settleUntil checks until the verdict is done or acts on groups (at most
// a few checks: the first scrape after events only proves them handled).
func settleUntil(t *testing.T, p *Policy) settle.Verdict {
	t.Helper()
	var v settle.Verdict
	for range 3 {
		if v = check(t, p); v.Done || len(v.Groups) > 0 {
			return v
		}
	}
	return v
}

func releases(names ...string) []settle.GroupAction { return groupActions(false, names) }
func renewals(names ...string) []settle.GroupAction { return groupActions(true, names) }

func groupActions(renew bool, names []string) []settle.GroupAction {
	var out []settle.GroupAction
	for _, n := range names {
		out = append(out, settle.GroupAction{Group: settle.GroupRef{Namespace: "default", Name: n}, Renew: renew})
	}
	return out
}

// groupSim plays Batkube's and kube-scheduler's parts around a policy:
// the changes it observes, and what the scheduler's metrics say.
type groupSim struct {
	t       *testing.T
	p       *Policy
	fm      *fakeMetrics
	rv      uint64
	handled map[string]float64
	groups  map[string]*store.Stored
}

func (g *groupSim) observe(typ watch.EventType, gr schema.GroupResource, prev, obj *store.Stored) {
	g.rv++
	g.p.Observe(store.Change{Type: typ, GR: gr, Prev: prev, Object: obj, RV: g.rv})
}

// setGroup writes a pod group as the broker would, and counts the event
// as handled by the scheduler.
func (g *groupSim) setGroup(name string, minCount int32, reason, message string) {
	next := podGroup(name, minCount, reason, message)
	if prev := g.groups[name]; prev == nil {
		g.observe(watch.Added, podGroupsGR, nil, next)
		g.handled[eventPodGroupAdd]++
	} else {
		g.observe(watch.Modified, podGroupsGR, prev, next)
		g.handled[eventPodGroupUpdate]++
	}
	g.groups[name] = next
}

// renew deletes a group, creates it held (of two pods) and releases it,
// as the broker does.
func (g *groupSim) renew(name string) {
	prev := g.groups[name]
	g.observe(watch.Deleted, podGroupsGR, prev, prev)
	g.handled[eventPodGroupDelete]++
	delete(g.groups, name)
	g.setGroup(name, 3, "", "")
	g.setGroup(name, 2, "", "")
}

// scheduler sets the metrics: pods by queue, pod-group entities in
// back-off, pods of no group in back-off.
func (g *groupSim) scheduler(queues map[string]float64, groupsInBackoff, podsInBackoff float64) {
	queues = maps.Clone(queues)
	queues["backoff"] += podsInBackoff
	g.fm.set(metricsGroups(queues, map[string]float64{"backoff/podgroup": groupsInBackoff, "backoff/pod": podsInBackoff}, g.handled))
}

func (g *groupSim) want(what string, done bool, actions []settle.GroupAction) settle.Verdict {
	g.t.Helper()
	v := settleUntil(g.t, g.p)
	if v.Done != done || !slices.Equal(v.Groups, actions) || (done && !v.Exact) {
		g.t.Fatalf("%s: verdict %+v, want done=%t (exact) with actions %v", what, v, done, actions)
	}
	return v
}

// TestPodGroupsReleasedAtTheInstantTheyMayFit: kube-scheduler 1.37 keeps a
// pod group it could not place in its back-off queue and retries it on its
// own clock only (no cluster event moves it), and may attempt a group that
// appears before all its pods have joined it. So Batkube creates its gangs
// held (minCount one more than their pods: kube-scheduler gates them, with
// every pod it is given), releases a held gang (minCount lowered to its
// size: kube-scheduler attempts it at once, with all its pods) once the
// scheduler is otherwise idle and the gang may fit, and renews a released
// gang (deleted, created held, released) when a change may let it fit
// since its last release: room freed, or an attempt that ended in an
// error before the fit was known.
func TestPodGroupsReleasedAtTheInstantTheyMayFit(t *testing.T) {
	fm, srv := serveMetrics(t)
	g := &groupSim{t: t, p: newPolicy(t, srv), fm: fm, handled: map[string]float64{}, groups: map[string]*store.Stored{}}
	g.observe(watch.Added, nodesGR, nil, node("n0"))
	g.handled["NodeAdd"] = 1
	for _, name := range []string{"g1", "g2"} {
		g.p.Hold(settle.GroupRef{Namespace: "default", Name: name})
		g.setGroup(name, 3, "", "")
	}
	for _, name := range []string{"g1-0", "g1-1", "g2-0", "g2-1"} {
		g.observe(watch.Added, podsGR, nil, gangPod(name, name[:2], ""))
	}
	g.scheduler(map[string]float64{"gated": 3, "incomplete": 1}, 0, 0)
	g.want("a pod not in its group yet", false, nil)
	g.scheduler(map[string]float64{"gated": 4}, 0, 0)
	g.want("both gangs gated, whole", false, releases("g1", "g2"))
	g.setGroup("g1", 2, "", "")
	g.setGroup("g2", 2, "", "")
	g.scheduler(map[string]float64{"backoff": 4}, 2, 0)
	g.want("both attempted, neither fits", true, nil)

	// A running pod leaves n0: room freed, both gangs (two pods of 4
	// cores each) may fit on its 8 cores: held again, then released.
	g.observe(watch.Added, podsGR, nil, withCPU(pod("r", "n0", corev1.PodRunning), "8"))
	g.observe(watch.Modified, podsGR, withCPU(pod("r", "n0", corev1.PodRunning), "8"), withCPU(pod("r", "n0", corev1.PodSucceeded), "8"))
	g.handled[eventAssignedPodDelete] = 1
	g.scheduler(map[string]float64{"backoff": 4}, 2, 0)
	g.want("room freed", false, renewals("g1", "g2"))
	g.renew("g1")
	g.renew("g2")
	g.scheduler(map[string]float64{"backoff": 2, "active": 2}, 1, 0)
	g.want("one renewed and attempted, the other not yet", false, nil)
	g.scheduler(map[string]float64{"backoff": 4}, 2, 0)
	g.want("both attempted again", true, nil)

	// g1 is bound: room only shrinks, nothing to do.
	for _, name := range []string{"g1-0", "g1-1"} {
		g.observe(watch.Modified, podsGR, gangPod(name, "g1", ""), gangPod(name, "g1", "n0"))
	}
	g.scheduler(map[string]float64{"backoff": 2}, 1, 0)
	g.want("g1 bound", true, nil)

	// A small pod leaves a small node: room freed, but not enough for g2's
	// two pods of 4 cores (n0 is full of g1's): nothing to do.
	g.observe(watch.Added, nodesGR, nil, nodeOfCPU("n1", "2"))
	g.handled[eventNodeAdd] = 2
	g.observe(watch.Added, podsGR, nil, withCPU(pod("s", "n1", corev1.PodRunning), "1"))
	g.observe(watch.Modified, podsGR, withCPU(pod("s", "n1", corev1.PodRunning), "1"), withCPU(pod("s", "n1", corev1.PodSucceeded), "1"))
	g.handled[eventAssignedPodDelete] = 2
	g.scheduler(map[string]float64{"backoff": 2}, 1, 0)
	g.want("room freed that g2 cannot fit in", true, nil)
	if got := g.p.want.actions(false); !slices.Equal(got, renewals("g2")) {
		t.Errorf("without the requests' bound: actions %v, want g2 renewed", got)
	}

	// A pod of no group in the back-off queue is work to do (about to be
	// popped, or waiting out an error's back-off).
	g.observe(watch.Added, podsGR, nil, pod("single", "", corev1.PodPending))
	g.scheduler(map[string]float64{"backoff": 2}, 1, 1)
	g.want("a pod of no group in back-off beside the group's", false, nil)
	g.observe(watch.Deleted, podsGR, pod("single", "", corev1.PodPending), pod("single", "", corev1.PodPending))
	g.scheduler(map[string]float64{"backoff": 2}, 1, 0)
	g.want("the single pod gone", true, nil)

	// g1 ends: its room on n0 lets g2 fit.
	for _, name := range []string{"g1-0", "g1-1"} {
		running := podOf(gangPod(name, "g1", "n0")).DeepCopy()
		running.Status.Phase = corev1.PodRunning
		done := running.DeepCopy()
		done.Status.Phase = corev1.PodSucceeded
		g.observe(watch.Modified, podsGR, store.NewStored(running), store.NewStored(done))
	}
	g.handled[eventAssignedPodDelete] = 4
	g.scheduler(map[string]float64{"backoff": 2}, 1, 0)
	g.want("g1 ended", false, renewals("g2"))
	g.renew("g2")

	// An error in a PodGroupPostFilter plugin comes after the group was
	// found not to fit: nothing to do. Another error is retried (held
	// again, released), up to maxErrorReleases times at one state of the
	// nodes; after that the step is not proven.
	g.setGroup("g2", 2, "SchedulerError", `error in "DynamicResources" PodGroupPostFilter plugins: not found`)
	g.scheduler(map[string]float64{"backoff": 2}, 1, 0)
	g.want("a PodGroupPostFilter error", true, nil)
	for i := range maxErrorReleases + 1 {
		g.setGroup("g2", 2, "SchedulerError", fmt.Sprintf("extender: 500 (%d)", i))
		g.scheduler(map[string]float64{"backoff": 2}, 1, 0)
		if i == maxErrorReleases {
			if v := settleUntil(t, g.p); !v.Done || v.Exact || v.Unproven == "" {
				t.Fatalf("error %d at the same state of the nodes: %+v, want done, unproven", i+1, v)
			}
			break
		}
		g.want(fmt.Sprintf("error %d", i+1), false, renewals("g2"))
		g.renew("g2")
	}
}

// TestAsyncPreemptionWaitedFor: kube-scheduler deletes a preemption's
// victims in a goroutine that no gauge counts, the preemptor back in its
// queue: the step is not done until as many preemption goroutines have
// ended as preemptions have started.
func TestAsyncPreemptionWaitedFor(t *testing.T) {
	fm, p := newFakeScheduler(t)
	p.Observe(store.Change{Type: watch.Added, GR: nodesGR, Object: node("n0"), RV: 1})
	p.Observe(store.Change{Type: watch.Added, GR: podsGR, Object: pod("preemptor", "", corev1.PodPending), RV: 2})
	handled := map[string]float64{"NodeAdd": 1}
	preemption := func(started, ended float64) string {
		return metricsGroups(map[string]float64{"unschedulable": 1}, map[string]float64{"unschedulable/pod": 1}, handled) +
			fmt.Sprintf("scheduler_preemption_victims_bucket{le=\"+Inf\"} %g\nscheduler_preemption_victims_sum 2\nscheduler_preemption_victims_count %g\n", started, started) +
			fmt.Sprintf("scheduler_preemption_goroutines_execution_total{result=\"success\"} %g\n", ended)
	}
	fm.set(preemption(1, 0))
	for range 3 {
		if v := check(t, p); v.Done {
			t.Fatalf("a preemption started, its goroutine not ended: %+v, want a wait", v)
		}
	}
	fm.set(preemption(1, 1))
	if v := settleUntil(t, p); !v.Done || !v.Exact {
		t.Fatalf("the preemption's goroutine ended: %+v, want done", v)
	}
}

// TestRestartedSchedulerStepIsUnproven: a step during which kube-scheduler
// restarted is reported as not proven (the events it missed are forgiven,
// not proven handled), and the next ones are exact again.
func TestRestartedSchedulerStepIsUnproven(t *testing.T) {
	fm, p := newFakeScheduler(t)
	p.Observe(store.Change{Type: watch.Added, GR: nodesGR, Object: node("n0"), RV: 1})
	p.Observe(store.Change{Type: watch.Added, GR: podsGR, Object: pod("a", "", corev1.PodPending), RV: 2})
	body := metrics137(0, 0, 1, 0, 0, map[string]float64{"NodeAdd": 1})
	fm.set(body)
	if v := settleUntil(t, p); !v.Done || !v.Exact {
		t.Fatalf("before the restart: %+v, want done, exact", v)
	}
	fm.set(strings.Replace(body, "process_start_time_seconds 1.7e+09", "process_start_time_seconds 1.8e+09", 1))
	if v := settleUntil(t, p); !v.Done || v.Exact || !strings.Contains(v.Unproven, "restarted") {
		t.Fatalf("the step of the restart: %+v, want done, unproven", v)
	}
	if v := settleUntil(t, p); !v.Done || !v.Exact {
		t.Fatalf("after the restart: %+v, want done, exact", v)
	}
}
