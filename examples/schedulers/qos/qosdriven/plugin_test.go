package qosdriven

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/batkube/batkube/examples/schedulers/qos/internal/ledger"
	"github.com/batkube/batkube/examples/schedulers/qos/internal/simtime"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return epoch.Add(time.Duration(s * float64(time.Second))) }

// clockServer serves Batkube's clock protocol with a time the test sets,
// counting the readings (an in-process stand-in; the e2e test reads the
// real server).
type clockServer struct {
	*httptest.Server
	mu    sync.Mutex
	now   float64
	reads atomic.Int64
}

func newClockServer(t testing.TB) *clockServer {
	c := &clockServer{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != simtime.Path {
			http.NotFound(w, r)
			return
		}
		c.reads.Add(1)
		c.mu.Lock()
		now := c.now
		c.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"nanoseconds": int64(now * 1e9), "time": at(now)})
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *clockServer) set(now float64) {
	c.mu.Lock()
	c.now = now
	c.mu.Unlock()
}

// testPlugin is a plugin on a simulated clock the test sets, with stores
// standing for the scheduler's informers.
type testPlugin struct {
	*QoSDriven
	clock       *clockServer
	pods, nodes cache.Store
}

func newTestPlugin(t testing.TB, cfg config) *testPlugin {
	t.Helper()
	cs := newClockServer(t)
	clock, err := simtime.New(t.Context(), &rest.Config{Host: cs.URL}, klog.Background(), simtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.controllerLabel == "" {
		cfg, err = decodeArgs(nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	pods, nodes := cache.NewStore(cache.MetaNamespaceKeyFunc), cache.NewStore(cache.MetaNamespaceKeyFunc)
	return &testPlugin{QoSDriven: newPlugin(cfg, "default-scheduler", clock, pods, nodes, klog.Background()), clock: cs, pods: pods, nodes: nodes}
}

// pod is a pending pod of a controller with an SLO, created at a
// simulated second.
func pod(name, controller, slo string, created float64) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(at(created)),
			Labels: map[string]string{}, Annotations: map[string]string{}},
		Spec: corev1.PodSpec{SchedulerName: "default-scheduler"},
	}
	if controller != "" {
		p.Labels[DefaultControllerLabel] = controller
	}
	if slo != "" {
		p.Annotations[DefaultSLOKey] = slo
	}
	return p
}

func queued(t *testing.T, p *corev1.Pod) *framework.QueuedPodInfo {
	t.Helper()
	pi, err := framework.NewPodInfo(p)
	if err != nil {
		t.Fatal(err)
	}
	return &framework.QueuedPodInfo{PodInfo: pi}
}

// running returns p started at a simulated second.
func running(p *corev1.Pod, started float64) *corev1.Pod {
	p = p.DeepCopy()
	p.Spec.NodeName = "node0"
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &metav1.Time{Time: at(started)}
	return p
}

// finished returns p finished at a simulated second (as Batkube's watch
// hands it over; a real API server's hands over the pod before it
// finished).
func finished(p *corev1.Pod, end float64) *corev1.Pod {
	p = p.DeepCopy()
	p.Status.Phase = corev1.PodSucceeded
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(at(end))}}}}
	return p
}

// update is the informer storing a new version of a pod, then telling the
// plugin's handler.
func (tp *testPlugin) update(t *testing.T, p *corev1.Pod) {
	t.Helper()
	if err := tp.pods.Update(p); err != nil {
		t.Fatal(err)
	}
	tp.observe(t.Context(), p)
}

// remove is the informer dropping a pod (deleted, or finished: the
// scheduler's informer keeps unfinished pods only), then telling the
// plugin's handler with the object it was handed.
func (tp *testPlugin) remove(t *testing.T, p *corev1.Pod) {
	t.Helper()
	if err := tp.pods.Delete(p); err != nil {
		t.Fatal(err)
	}
	tp.forget(t.Context(), p)
}

// sortByLess orders pods with the plugin's Less at the clock's time.
func (tp *testPlugin) sortByLess(t *testing.T, pods ...*corev1.Pod) []string {
	t.Helper()
	infos := make([]fwk.QueuedEntityInfo, len(pods))
	for i, p := range pods {
		infos[i] = queued(t, p)
	}
	slices.SortFunc(infos, func(a, b fwk.QueuedEntityInfo) int {
		switch {
		case tp.Less(a, b):
			return -1
		case tp.Less(b, a):
			return 1
		}
		return 0
	})
	var names []string
	for _, e := range infos {
		names = append(names, podOf(e).Name)
	}
	return names
}

// enqueue is what the scheduler does with a new pod: PreEnqueue at the
// instant the test's clock says, after its informer stored the pod.
func (tp *testPlugin) enqueue(t *testing.T, p *corev1.Pod, now float64) {
	t.Helper()
	tp.clock.set(now)
	if err := tp.pods.Add(p); err != nil {
		t.Fatal(err)
	}
	if s := tp.PreEnqueue(t.Context(), p); !s.IsSuccess() {
		t.Fatalf("PreEnqueue(%s) = %v: it must never gate a pod", p.Name, s)
	}
}

// newTestPluginWithPod returns a test plugin of the default configuration
// and a pod p of controller web with the given SLO, created and enqueued at
// t=0.
func newTestPluginWithPod(t *testing.T, slo string) (*testPlugin, *corev1.Pod) {
	t.Helper()
	tp := newTestPlugin(t, config{})
	p := pod("p", "web", slo, 0)
	tp.enqueue(t, p, 0)
	return tp, p
}

// TestLessServesTheSmallestTTVFirst: pods come out in the order of their
// controllers' time to violation at the current simulated instant (the
// most urgent first), whatever their own ages, and the order follows the
// instant as waiting accumulates; equal TTVs go by priority, then age,
// then name.
func TestLessServesTheSmallestTTVFirst(t *testing.T) {
	tp := newTestPlugin(t, config{})
	// History up to t=100: gold (SLO 0.95) waited 5 s and ran 90 s: TTV
	// 90/0.95 − 95 = −0.26; bronze (0.5) waited 40 s and ran 60 s: TTV
	// 60/0.5 − 100 = 20; silver (0.8) is new: TTV 0.
	for _, h := range []struct {
		ctrl, slo           string
		created, start, end float64
	}{
		{"gold", "0.95", 5, 10, 100}, {"bronze", "0.5", 0, 40, 100},
	} {
		p := pod(h.ctrl+"-old", h.ctrl, h.slo, h.created)
		tp.enqueue(t, p, h.created)
		tp.clock.set(h.start)
		tp.PreBind(t.Context(), nil, p, "node0")
		tp.update(t, running(p, h.start))
		tp.remove(t, finished(running(p, h.start), h.end))
	}
	pending := []*corev1.Pod{
		pod("silver-new", "silver", "0.8", 100),
		pod("bronze-new-c", "bronze", "0.5", 100),
		pod("gold-new", "gold", "0.95", 100),
		pod("bronze-new-a", "bronze", "0.5", 100),
		pod("gold-new-2", "gold", "0.95", 100),
		pod("bronze-new-b", "bronze", "0.5", 100),
	}
	pending[4].Spec.Priority = new(int32(10))
	for _, p := range pending {
		tp.enqueue(t, p, 100)
	}
	for _, tc := range []struct {
		now  float64
		want []string
	}{
		// gold −0.26 < silver 0 < bronze 20.
		{100, []string{"gold-new-2", "gold-new", "silver-new", "bronze-new-a", "bronze-new-b", "bronze-new-c"}},
		// 10 s later: gold −20.26 (two pods waiting), silver −10, bronze
		// 20 − 30 = −10 (three pods): a tie, by name.
		{110, []string{"gold-new-2", "gold-new", "bronze-new-a", "bronze-new-b", "bronze-new-c", "silver-new"}},
		// At 200: bronze −280 < gold −200.26 < silver −100.
		{200, []string{"bronze-new-a", "bronze-new-b", "bronze-new-c", "gold-new-2", "gold-new", "silver-new"}},
	} {
		if tc.now > 100 {
			// A change reaches the informer at that instant.
			tp.enqueue(t, pod(fmt.Sprintf("other-%g", tc.now), "", "", tc.now), tc.now)
		}
		if got := tp.sortByLess(t, pending...); !slices.Equal(got, tc.want) {
			t.Errorf("order at t=%g: %v, want %v", tc.now, got, tc.want)
		}
	}
}

// TestSafetyMarginServesHigherSLOFirst: with a safety margin, two
// controllers both below it go by SLO (the higher first) rather than TTV,
// as the authors' prototype does; one above it goes by TTV.
func TestSafetyMarginServesHigherSLOFirst(t *testing.T) {
	margin := 30.0
	pl := &QoSDriven{cfg: config{hasMargin: true, safetyMargin: margin}}
	for _, tc := range []struct {
		a, b ledger.Urgency
		want int
	}{
		{ledger.Urgency{TTV: -50, SLO: 0.5}, ledger.Urgency{TTV: 10, SLO: 0.9}, 1},   // both below: SLO
		{ledger.Urgency{TTV: -50, SLO: 0.5}, ledger.Urgency{TTV: 40, SLO: 0.9}, -1},  // b above: TTV
		{ledger.Urgency{TTV: -50, SLO: 0.9}, ledger.Urgency{TTV: -60, SLO: 0.9}, 1},  // same SLO: TTV
		{ledger.Urgency{TTV: 100, SLO: 0.5}, ledger.Urgency{TTV: 200, SLO: 0.9}, -1}, // both above: TTV
		{ledger.Urgency{TTV: 5, SLO: 0.8}, ledger.Urgency{TTV: 5, SLO: 0.8}, 0},
	} {
		if got := pl.compareUrgency(tc.a, tc.b); got != tc.want {
			t.Errorf("compare(%+v, %+v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := pl.compareUrgency(tc.b, tc.a); got != -tc.want {
			t.Errorf("compare(%+v, %+v) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

// TestCompareUrgencyIsAStrictWeakOrder: with and without a margin, the
// order is irreflexive, asymmetric and transitive (a heap needs it), over
// random urgencies.
func TestCompareUrgencyIsAStrictWeakOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	us := make([]ledger.Urgency, 40)
	for i := range us {
		us[i] = ledger.Urgency{TTV: float64(rng.IntN(9) - 4), SLO: []float64{0.5, 0.8, 0.95}[rng.IntN(3)]}
	}
	for _, pl := range []*QoSDriven{{cfg: config{}}, {cfg: config{hasMargin: true, safetyMargin: 1}}} {
		less := func(a, b ledger.Urgency) bool { return pl.compareUrgency(a, b) < 0 }
		for _, a := range us {
			if less(a, a) {
				t.Fatalf("margin %v: %+v < itself", pl.cfg.hasMargin, a)
			}
			for _, b := range us {
				if less(a, b) && less(b, a) {
					t.Fatalf("margin %v: %+v and %+v each before the other", pl.cfg.hasMargin, a, b)
				}
				for _, c := range us {
					if less(a, b) && less(b, c) && !less(a, c) {
						t.Fatalf("margin %v: %+v < %+v < %+v but not %+v < %+v", pl.cfg.hasMargin, a, b, c, a, c)
					}
					// Incomparability is transitive too.
					eq := func(x, y ledger.Urgency) bool { return !less(x, y) && !less(y, x) }
					if eq(a, b) && eq(b, c) && !eq(a, c) {
						t.Fatalf("margin %v: %+v ~ %+v ~ %+v but not %+v ~ %+v", pl.cfg.hasMargin, a, b, c, a, c)
					}
				}
			}
		}
	}
}

// TestPreEnqueueReadsTheClockOncePerStoreChange: PreEnqueue reads the
// simulated clock when the informers' stores have changed since the last
// reading, and not otherwise; Less uses that reading without asking.
func TestPreEnqueueReadsTheClockOncePerStoreChange(t *testing.T) {
	tp := newTestPlugin(t, config{})
	a, b := pod("a", "c", "0.5", 0), pod("b", "c", "0.5", 0)
	a.ResourceVersion, b.ResourceVersion = "10", "11"
	reads := tp.clock.reads.Load()
	tp.enqueue(t, a, 5)
	if got := tp.clock.reads.Load() - reads; got != 1 {
		t.Errorf("first PreEnqueue made %d readings, want 1", got)
	}
	tp.clock.set(7) // time moved, but no change reached the stores yet
	if s := tp.PreEnqueue(t.Context(), a); !s.IsSuccess() {
		t.Fatal(s)
	}
	tp.Less(queued(t, a), queued(t, a))
	if got := tp.clock.reads.Load() - reads; got != 1 || !tp.QoSDriven.clock.Now().Equal(at(5)) {
		t.Errorf("after a second PreEnqueue with the stores unchanged and a Less: %d readings, now %v; want 1 reading, t=5",
			got, tp.QoSDriven.clock.Now().Sub(epoch))
	}
	tp.enqueue(t, b, 7)
	if got := tp.clock.reads.Load() - reads; got != 2 || !tp.QoSDriven.clock.Now().Equal(at(7)) {
		t.Errorf("after a store change: %d readings, now %v; want 2 readings, t=7", got, tp.QoSDriven.clock.Now().Sub(epoch))
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "12"}}
	if err := tp.nodes.Add(node); err != nil {
		t.Fatal(err)
	}
	tp.clock.set(9)
	tp.PreEnqueue(t.Context(), b)
	if got := tp.clock.reads.Load() - reads; got != 3 {
		t.Errorf("after a node change: %d readings, want 3", got)
	}
}

// TestPreBindReadsTheClockOnce: PreBind is given the scheduler's assumed
// pod, its node set; the binding starts at the one instant it reads.
func TestPreBindReadsTheClockOnce(t *testing.T) {
	tp, p := newTestPluginWithPod(t, "0.9")
	tp.clock.set(10)
	assumed := p.DeepCopy()
	assumed.Spec.NodeName = "node0"
	reads := tp.clock.reads.Load()
	tp.PreBind(t.Context(), nil, assumed, "node0")
	if got := tp.clock.reads.Load() - reads; got != 1 {
		t.Errorf("PreBind read the clock %d times, want 1", got)
	}
	if phase, _ := tp.ledger.PhaseOf(p.UID); phase != ledger.Binding {
		t.Errorf("after PreBind the pod is %v, want binding", phase)
	}
}

// TestBookkeepingFollowsThePod: a pod waits from its creation to PreBind,
// binds until its start, runs until it finishes; a failed binding
// (Unreserve) makes it wait again; a pod of another scheduler is ignored.
func TestBookkeepingFollowsThePod(t *testing.T) {
	tp, p := newTestPluginWithPod(t, "0.9")
	tp.clock.set(10)
	tp.PreBind(t.Context(), nil, p, "node0")
	tp.clock.set(12)
	tp.Unreserve(t.Context(), nil, p, "node0") // binding failed at 12
	tp.clock.set(20)
	tp.PreBind(t.Context(), nil, p, "node0")
	tp.PostBind(t.Context(), nil, p, "node0")
	tp.update(t, running(p, 25))
	tp.remove(t, finished(running(p, 25), 65))
	other := pod("other", "web", "0.9", 0)
	other.Spec.SchedulerName = "another-scheduler"
	tp.observePod(t.Context(), other)
	accounts := tp.ledger.Accounts(at(100))
	if len(accounts) != 1 {
		t.Fatalf("accounts: %+v, want one, web", accounts)
	}
	got := accounts[0]
	want := ledger.Times{Waiting: 10*time.Second + 8*time.Second, Binding: 2*time.Second + 5*time.Second, Running: 40 * time.Second}
	if got.Controller != "default/web" || got.Times != want || got.Pods != [ledger.Ended]int{} {
		t.Errorf("account: %+v, want default/web %+v and no pod left", got, want)
	}
}

// TestEndWithoutFinishTimeReadsTheClock: a pod handed over without its
// finishing instant (a real API server's watch, which drops finished pods
// from kube-scheduler's informer with their last content) ends at the
// clock's reading.
func TestEndWithoutFinishTimeReadsTheClock(t *testing.T) {
	tp, p := newTestPluginWithPod(t, "0.9")
	tp.update(t, running(p, 5))
	tp.clock.set(30)
	if err := tp.pods.Delete(p); err != nil {
		t.Fatal(err)
	}
	tp.forget(t.Context(), cache.DeletedFinalStateUnknown{Key: "default/p", Obj: running(p, 5)})
	if got := tp.ledger.Accounts(at(100))[0]; got.Running != 25*time.Second || got.Waiting != 5*time.Second {
		t.Errorf("account: %+v, want 5 s waiting, 25 s running", got)
	}
}

// TestCatchUpFollowsTheStore: when the plugin's handler has not yet heard
// of changes its informer has stored (it runs beside the scheduler's), the
// next PreEnqueue at a new store state brings the ledger up to the store:
// a pod started is running since its start time.
func TestCatchUpFollowsTheStore(t *testing.T) {
	tp, p := newTestPluginWithPod(t, "0.5")
	tp.clock.set(10)
	tp.PreBind(t.Context(), nil, p, "node0")
	if err := tp.pods.Update(running(p, 12)); err != nil { // stored; the handler not told
		t.Fatal(err)
	}
	q := pod("q", "web", "0.5", 20)
	tp.enqueue(t, q, 20)
	if phase, _ := tp.ledger.PhaseOf(p.UID); phase != ledger.Running {
		t.Fatalf("after PreEnqueue at a new store state, p is %v, want Running", phase)
	}
	got := tp.ledger.Accounts(at(20))[0]
	if want := (ledger.Times{Waiting: 10 * time.Second, Binding: 2 * time.Second, Running: 8 * time.Second}); got.Times != want {
		t.Errorf("account at 20: %+v, want %+v", got.Times, want)
	}
}

// TestCatchUpWaitsForDeletions: a pod gone from the store ends at the
// instant its deletion says, once the handler has it, even when
// PreEnqueue looks before the handler does; a deletion that never comes
// is given up after a while, the pod ending at the clock's reading.
func TestCatchUpWaitsForDeletions(t *testing.T) {
	tp, p := newTestPluginWithPod(t, "0.5")
	tp.update(t, running(p, 0))
	done := finished(running(p, 0), 30)
	if err := tp.pods.Delete(done); err != nil {
		t.Fatal(err)
	}
	q := pod("q", "web", "0.5", 40)
	tp.clock.set(40)
	if err := tp.pods.Add(q); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { tp.PreEnqueue(t.Context(), q) })
	tp.forget(t.Context(), done) // the handler's turn, before or during the wait
	wg.Wait()
	if got := tp.ledger.Accounts(at(40))[0]; got.Running != 30*time.Second {
		t.Errorf("account at 40: %+v, want 30 s running (p ended at 30)", got)
	}

	tp.catchUpTimeout = 10 * time.Millisecond
	r := pod("r", "web", "0.5", 40)
	tp.enqueue(t, r, 40)
	tp.update(t, running(r, 40))
	if err := tp.pods.Delete(r); err != nil { // and the handler never told
		t.Fatal(err)
	}
	tp.enqueue(t, pod("s", "web", "0.5", 50), 50)
	if phase, known := tp.ledger.PhaseOf(r.UID); known {
		t.Errorf("r, gone from the store and never deleted for the handler, is still %v", phase)
	}
	if got := tp.ledger.Accounts(at(60))[0]; got.Running != (30+10)*time.Second {
		t.Errorf("account at 60: %+v, want 40 s running (r ended at the reading, 50)", got)
	}
}

// TestIdentify: a pod's controller is its label, else its controlling
// owner, else itself; its SLO its annotation, else label, else the default.
func TestIdentify(t *testing.T) {
	cfg, err := decodeArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	owned := pod("owned", "", "", 0)
	owned.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: "batch-7", Controller: new(true)}}
	sloLabel := pod("l", "", "", 0)
	sloLabel.Labels[DefaultSLOKey] = "0.7"
	for _, tc := range []struct {
		pod    *corev1.Pod
		want   ledger.Identity
		badSLO bool
	}{
		{pod("p", "web", "0.95", 0), ledger.Identity{Controller: "default/web", SLO: 0.95}, false},
		{owned, ledger.Identity{Controller: "default/Job/batch-7", SLO: DefaultSLO}, false},
		{pod("alone", "", "", 0), ledger.Identity{Controller: "default/pod/alone", SLO: DefaultSLO, Ephemeral: true}, false},
		{sloLabel, ledger.Identity{Controller: "default/pod/l", SLO: 0.7, Ephemeral: true}, false},
		{pod("bad", "web", "1.5", 0), ledger.Identity{Controller: "default/web", SLO: DefaultSLO}, true},
		{pod("nan", "web", "fast", 0), ledger.Identity{Controller: "default/web", SLO: DefaultSLO}, true},
	} {
		id, bad := cfg.identify(tc.pod)
		if id != tc.want || bad != tc.badSLO {
			t.Errorf("%s: %+v (bad SLO %v), want %+v (%v)", tc.pod.Name, id, bad, tc.want, tc.badSLO)
		}
	}
}

// TestDecodeArgs: JSON and YAML args, defaults, and clear errors for an
// unknown field or an SLO out of (0, 1].
func TestDecodeArgs(t *testing.T) {
	for _, tc := range []struct {
		name, raw, contentType string
		want                   config
		err                    string
	}{
		{name: "none", want: config{controllerLabel: DefaultControllerLabel, sloKey: DefaultSLOKey, defaultSLO: DefaultSLO}},
		{name: "json", raw: `{"debugAddress":"127.0.0.1:1","defaultSLO":0.6,"safetyMargin":"30s","controllerLabel":"app"}`,
			want: config{debugAddress: "127.0.0.1:1", controllerLabel: "app", sloKey: DefaultSLOKey, defaultSLO: 0.6, safetyMargin: 30, hasMargin: true}},
		{name: "yaml", raw: "sloKey: slo\ndefaultSLO: 1\n", contentType: runtime.ContentTypeYAML,
			want: config{controllerLabel: DefaultControllerLabel, sloKey: "slo", defaultSLO: 1}},
		{name: "unknown field", raw: `{"debugAdress":"x"}`, err: `unknown field "debugAdress"`},
		{name: "unknown yaml field", raw: "slo: 0.5\n", contentType: runtime.ContentTypeYAML, err: `unknown field "slo"`},
		{name: "bad SLO", raw: `{"defaultSLO":0}`, err: "want a fraction in (0, 1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var obj runtime.Object
			if tc.raw != "" {
				obj = &runtime.Unknown{Raw: []byte(tc.raw), ContentType: tc.contentType}
			}
			got, err := decodeArgs(obj)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestDebugTable: the table served is every controller's account at the
// time read when asked, as text and as JSON, in simulated seconds.
func TestDebugTable(t *testing.T) {
	tp := newTestPlugin(t, config{})
	p := pod("p", "web", "0.5", 0)
	p.ResourceVersion = "5"
	tp.enqueue(t, p, 0)
	tp.clock.set(10)
	tp.PreBind(t.Context(), nil, p, "node0")
	p = running(p, 10)
	p.ResourceVersion = "6"
	tp.update(t, p)
	q := pod("q", "web", "0.5", 20)
	q.ResourceVersion = "7"
	tp.enqueue(t, q, 20)
	tp.clock.set(40) // web: ran 30, waited 10 + 20: QoS 0.5, TTV 60−60 = 0
	srv := httptest.NewServer(tp.debugHandler())
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	text := readAll(t, resp)
	want := []string{
		"# simulated time 40.000 s (2026-01-01T00:00:40Z); TTV, RUNNING, WAITING, BINDING in simulated seconds; pods and nodes seen up to resourceVersion 7 and (none)",
		"CONTROLLER  QOS/SLO    TTV  RUNNING  WAITING  BINDING  PODS(P/B/R)",
		"default/web  0.500/0.500  0.000   30.000   30.000    0.000        1/0/1",
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 3 || lines[0] != want[0] || strings.Join(strings.Fields(lines[1]), " ") != strings.Join(strings.Fields(want[1]), " ") ||
		strings.Join(strings.Fields(lines[2]), " ") != strings.Join(strings.Fields(want[2]), " ") {
		t.Errorf("table:\n%s\nwant:\n%s", text, strings.Join(want, "\n"))
	}

	resp, err = http.Get(srv.URL + "/?output=json")
	if err != nil {
		t.Fatal(err)
	}
	var tab Table
	if err := json.Unmarshal([]byte(readAll(t, resp)), &tab); err != nil {
		t.Fatal(err)
	}
	if !tab.Simulated || tab.Seconds != 40 || len(tab.Rows) != 1 || tab.Rows[0].QoS == nil || *tab.Rows[0].QoS != 0.5 ||
		tab.Rows[0].Running != 30 || tab.Rows[0].Waiting != 30 || tab.Rows[0].Pending != 1 || tab.Rows[0].RunningPods != 1 {
		t.Errorf("JSON table: %+v", tab)
	}
	if resp, err := http.Get(srv.URL + "/?output=xml"); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("?output=xml: %v %v, want 400", resp.StatusCode, err)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// BenchmarkLess: the cost of one comparison of two queued pods of a
// thousand in ten controllers (the queue calls it O(n log n) times per
// operation).
func BenchmarkLess(b *testing.B) {
	tp := newTestPlugin(b, config{})
	var infos []fwk.QueuedEntityInfo
	for i := range 1000 {
		p := pod(fmt.Sprint(i), fmt.Sprint(i%10), "0.8", float64(i%50))
		tp.observePod(b.Context(), p)
		pi, _ := framework.NewPodInfo(p)
		infos = append(infos, &framework.QueuedPodInfo{PodInfo: pi})
	}
	b.ResetTimer()
	for i := range b.N {
		tp.Less(infos[i%1000], infos[(i*7+3)%1000])
	}
}
