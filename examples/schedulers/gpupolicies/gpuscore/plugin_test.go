package gpuscore

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/batkube/batkube/examples/schedulers/gpupolicies/policy"
)

// fakeDRA is the scheduler's DRA state as the plugins read it: claims by
// namespace/name, ResourceSlices, and the allocated state DynamicResources
// would allocate from.
type fakeDRA struct {
	claims map[string]*resourcev1.ResourceClaim
	slices []*resourcev1.ResourceSlice
	state  *structured.AllocatedState
}

func (f *fakeDRA) ResourceClaims() fwk.ResourceClaimTracker { return fakeClaims{dra: f} }
func (f *fakeDRA) ResourceSlices() fwk.ResourceSliceLister  { return fakeSlices{f} }
func (f *fakeDRA) DeviceClasses() fwk.DeviceClassLister     { return nil }
func (f *fakeDRA) DeviceClassResolver() fwk.DeviceClassResolver {
	return nil
}

// fakeClaims implements the two methods of the claim tracker the plugins
// call; the others panic (nil embedded interface).
type fakeClaims struct {
	fwk.ResourceClaimTracker
	dra *fakeDRA
}

func (f fakeClaims) Get(namespace, name string) (*resourcev1.ResourceClaim, error) {
	if c, ok := f.dra.claims[namespace+"/"+name]; ok {
		return c, nil
	}
	return nil, os.ErrNotExist
}

func (f fakeClaims) GatherAllocatedState() (*structured.AllocatedState, error) {
	return f.dra.state, nil
}

type fakeSlices struct{ *fakeDRA }

func (f fakeSlices) ListWithDeviceTaintRules() ([]*resourcev1.ResourceSlice, error) {
	return f.slices, nil
}

// cluster is the test's: nodes a (32 cores, 2 T4: 600 of GPU 0 held by
// a share), b (16 cores, 1 T4, idle), c (64 cores, 4 V100M16, GPU 0
// held whole by a pod of 8 cores), d (8 cores, no GPU).
type cluster struct {
	dra   *fakeDRA
	infos map[string]*framework.NodeInfo
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{dra: &fakeDRA{claims: map[string]*resourcev1.ResourceClaim{}, state: &structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.ConsumedCapacityCollection{},
	}}, infos: map[string]*framework.NodeInfo{}}
	for _, n := range []struct {
		name, model string
		cores, gpus int
	}{{"a", "T4", 32, 2}, {"b", "T4", 16, 1}, {"c", "V100M16", 64, 4}, {"d", "", 8, 0}} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: *resource.NewQuantity(int64(n.cores), resource.DecimalSI), corev1.ResourcePods: resource.MustParse("110")}}}
		info := framework.NewNodeInfo()
		info.SetNode(node)
		c.infos[n.name] = info
		if n.gpus == 0 {
			continue
		}
		slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: n.name + "-gpu"}, Spec: resourcev1.ResourceSliceSpec{
			Driver: DefaultDriver, Pool: resourcev1.ResourcePool{Name: n.name}, NodeName: ptr.To(n.name)}}
		for i := range n.gpus {
			slice.Spec.Devices = append(slice.Spec.Devices, resourcev1.Device{
				Name:                     "gpu-" + string(rune('0'+i)),
				Attributes:               map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: ptr.To(n.model)}},
				AllowMultipleAllocations: ptr.To(true),
				Capacity:                 map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"milli": {Value: resource.MustParse("1000")}},
			})
		}
		c.dra.slices = append(c.dra.slices, slice)
	}
	c.run(t, "a", "share", 4000, 1, 600, "gpu-0")
	c.run(t, "c", "whole", 8000, 1, 1000, "gpu-0")
	return c
}

// pod returns a pod of cpu thousandths whose claim asks for gpus GPUs of
// milli each (no claim without GPUs), and records the claim.
func (c *cluster) pod(name string, cpu int64, gpus int, milli int64) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(cpu, resource.DecimalSI)}}}}}}
	if gpus == 0 {
		return pod
	}
	pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("tpl")}}
	pod.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To(name + "-gpu")}}
	req := &resourcev1.ExactDeviceRequest{DeviceClassName: DefaultDeviceClass, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: int64(gpus)}
	if milli < policy.MilliPerGPU {
		req.Capacity = &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{"milli": *resource.NewQuantity(milli, resource.DecimalSI)}}
	}
	c.dra.claims["default/"+name+"-gpu"] = &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name + "-gpu"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: req}}}}}
	return pod
}

// run puts a running pod on a node, its one GPU request consuming milli
// of the device.
func (c *cluster) run(t *testing.T, node, name string, cpu int64, gpus int, milli int64, device string) {
	t.Helper()
	pod := c.pod(name, cpu, gpus, milli)
	pod.Spec.NodeName = node
	c.infos[node].AddPod(pod)
	id := structured.MakeDeviceID(DefaultDriver, node, device)
	c.dra.state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, map[resourcev1.QualifiedName]resource.Quantity{
		"milli": *resource.NewQuantity(milli, resource.DecimalSI)}))
}

func (c *cluster) nodes(names ...string) []fwk.NodeInfo {
	var out []fwk.NodeInfo
	for _, n := range names {
		out = append(out, c.infos[n])
	}
	return out
}

// scores runs a plugin's PreScore, Score on each node and NormalizeScore
// (if any), as the framework does; skipped reports a PreScore Skip.
func (c *cluster) scores(t *testing.T, pl *Plugin, pod *corev1.Pod, names ...string) (scores map[string]int64, skipped bool) {
	t.Helper()
	ctx := context.Background()
	cs := framework.NewCycleState()
	nodes := c.nodes(names...)
	if st := pl.PreScore(ctx, cs, pod, nodes); st.IsSkip() {
		return nil, true
	} else if !st.IsSuccess() {
		t.Fatalf("%s PreScore: %v", pl.Name(), st.AsError())
	}
	list := make(fwk.NodeScoreList, len(nodes))
	for i, ni := range nodes {
		s, st := pl.Score(ctx, cs, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("%s Score %s: %v", pl.Name(), ni.Node().Name, st.AsError())
		}
		list[i] = fwk.NodeScore{Name: ni.Node().Name, Score: s}
	}
	if ext := pl.ScoreExtensions(); ext != nil {
		if st := ext.NormalizeScore(ctx, cs, pod, list); !st.IsSuccess() {
			t.Fatalf("%s NormalizeScore: %v", pl.Name(), st.AsError())
		}
	}
	scores = map[string]int64{}
	for _, s := range list {
		scores[s.Name] = s.Score
	}
	return scores, false
}

func newTestPlugin(t *testing.T, c *cluster, name string, args string) *Plugin {
	t.Helper()
	var obj runtime.Object
	if args != "" {
		obj = &runtime.Unknown{Raw: []byte(args), ContentType: runtime.ContentTypeJSON}
	}
	cfg, err := decodeArgs(name, obj)
	if err != nil {
		t.Fatal(err)
	}
	pl := newPlugin(name, cfg, c.dra, klog.Background())
	if pl.score == nil {
		t.Fatalf("no plugin %s", name)
	}
	return pl
}

// What PreScore must read of the cluster for the pod of the tests (2
// cores, 300 of one GPU).
var wantNodes = map[string]policy.Node{
	"a": {CPUCapacity: 32000, CPULeft: 28000, Model: "T4", GPULeft: []int64{400, 1000}},
	"b": {CPUCapacity: 16000, CPULeft: 16000, Model: "T4", GPULeft: []int64{1000}},
	"c": {CPUCapacity: 64000, CPULeft: 56000, Model: "V100M16", GPULeft: []int64{0, 1000, 1000, 1000}},
}

func TestPreScoreReadsTheDemandAndTheNodesAsTheAllocatorSeesThem(t *testing.T) {
	c := newCluster(t)
	pl := newTestPlugin(t, c, DotProductName, "")
	cs := framework.NewCycleState()
	if st := pl.PreScore(context.Background(), cs, c.pod("p", 2000, 1, 300), c.nodes("a", "b", "c")); !st.IsSuccess() {
		t.Fatal(st.AsError())
	}
	data, err := cs.Read(pl.stateKey())
	if err != nil {
		t.Fatal(err)
	}
	s := data.(*cycleState)
	if want := (policy.Demand{CPU: 2000, GPUs: 1, Milli: 300}); s.demand != want {
		t.Errorf("demand %+v, want %+v", s.demand, want)
	}
	if len(s.nodes) != len(wantNodes) {
		t.Errorf("%d nodes read, want %d", len(s.nodes), len(wantNodes))
	}
	for name, want := range wantNodes {
		got := s.nodes[name]
		if got.CPUCapacity != want.CPUCapacity || got.CPULeft != want.CPULeft || got.Model != want.Model || !slices.Equal(got.GPULeft, want.GPULeft) {
			t.Errorf("node %s: %+v, want %+v", name, got, want)
		}
	}
}

func TestEachPolicyScoresWhatTheAllocatorWillDo(t *testing.T) {
	c := newCluster(t)
	share := c.pod("p", 2000, 1, 300)
	d := policy.Demand{CPU: 2000, GPUs: 1, Milli: 300}
	workload := filepath.Join(t.TempDir(), "target-workload.csv")
	if err := os.WriteFile(workload, []byte("cpu_milli,num_gpu,gpu_milli,gpu_spec,popularity\n4000,1,500,,0.5\n8000,1,1000,,0.3\n2000,0,0,,0.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := policy.ReadWorkloadFile(workload)
	if err != nil {
		t.Fatal(err)
	}
	firstFit := func(n policy.Node) []int {
		gpus, _ := policy.FirstFit(n, d)
		return gpus
	}
	for _, tc := range []struct {
		name, args string
		want       map[string]int64
	}{
		// a: onto the used GPU 0 (400 left): 100 − 40/10; b: an idle node of
		// 1 GPU: 33 − 1; c: first fit takes the free GPU 1: 50 − 1.
		{PackingName, "", map[string]int64{"a": 96, "b": 32, "c": 49}},
		// a runs a share: 75 + 25·6600/8000; b no GPU pod: 25 + 25·7000/8000;
		// c only a whole GPU: 25·5000/8000.
		{ClusteringName, "", map[string]int64{"a": 95, "b": 46, "c": 15}},
		// before normalising: a 82.97, b 90.16, c 62.03 (see policy's tests
		// for the arithmetic); then (s − 62)·100/28.
		{BestFitName, "", map[string]int64{"a": 71, "b": 100, "c": 0}},
		{DotProductName, "", map[string]int64{
			"a": policy.DotProduct(wantNodes["a"], d, policy.DefaultScale),
			"b": policy.DotProduct(wantNodes["b"], d, policy.DefaultScale),
			"c": policy.DotProduct(wantNodes["c"], d, policy.DefaultScale)}},
		{FGDName, `{"targetWorkload": "` + workload + `"}`, map[string]int64{
			"a": policy.FGD(wantNodes["a"], d, firstFit(wantNodes["a"]), w),
			"b": policy.FGD(wantNodes["b"], d, firstFit(wantNodes["b"]), w),
			"c": policy.FGD(wantNodes["c"], d, firstFit(wantNodes["c"]), w)}},
	} {
		got, skipped := c.scores(t, newTestPlugin(t, c, tc.name, tc.args), share, "a", "b", "c")
		if skipped {
			t.Errorf("%s skipped a GPU pod", tc.name)
			continue
		}
		for node, want := range tc.want {
			if got[node] != want {
				t.Errorf("%s: node %s scores %d, want %d (all: %v)", tc.name, node, got[node], want, got)
			}
		}
	}
	// FGD on a: first fit puts the share on GPU 0 (400 left → 100), while
	// the paper's FGD would weigh GPU 1 too: the plugin scores GPU 0.
	if gpus := firstFit(wantNodes["a"]); !slices.Equal(gpus, []int{0}) {
		t.Errorf("first fit on a: %v", gpus)
	}
}

func TestRandomDrawsOneFeasibleNodeReproducibly(t *testing.T) {
	c := newCluster(t)
	pod := c.pod("p", 1000, 0, 0)
	draw := func(pl *Plugin, names ...string) string {
		scores, skipped := c.scores(t, pl, pod, names...)
		if skipped {
			t.Fatal("Random skipped")
		}
		var top []string
		for n, s := range scores {
			switch s {
			case policy.MaxScore:
				top = append(top, n)
			case 0:
			default:
				t.Fatalf("score %d", s)
			}
		}
		if len(top) != 1 {
			t.Fatalf("%d nodes at the top: %v", len(top), scores)
		}
		return top[0]
	}
	one, two := newTestPlugin(t, c, RandomName, `{"seed": 7}`), newTestPlugin(t, c, RandomName, `{"seed": 7}`)
	seen := map[string]bool{}
	for range 40 {
		first := draw(one, "a", "b", "c", "d")
		if second := draw(two, "d", "c", "b", "a"); second != first {
			t.Fatalf("the same seed drew %s, then %s (the nodes in another order)", first, second)
		}
		seen[first] = true
	}
	if len(seen) != 4 {
		t.Errorf("40 draws among 4 nodes gave %v", seen)
	}
}

func TestPodsWithoutGPUSkipTheGPUOnlyPolicies(t *testing.T) {
	c := newCluster(t)
	cpuOnly := c.pod("p", 1000, 0, 0)
	for _, name := range []string{ClusteringName, PackingName} {
		if _, skipped := c.scores(t, newTestPlugin(t, c, name, ""), cpuOnly, "a", "d"); !skipped {
			t.Errorf("%s scored a pod without GPU", name)
		}
	}
	// BestFit still prefers the tightest node: d (8 cores, no GPU) over a.
	scores, _ := c.scores(t, newTestPlugin(t, c, BestFitName, ""), cpuOnly, "a", "d")
	if scores["d"] != policy.MaxScore || scores["a"] != 0 {
		t.Errorf("BestFit for a cpu-only pod: %v, want d first", scores)
	}
}

func TestUnsupportedRequestsAreNotScored(t *testing.T) {
	c := newCluster(t)
	pod := c.pod("p", 1000, 1, 300)
	claim := c.dra.claims["default/p-gpu"]
	second := claim.Spec.Devices.Requests[0]
	second.Name = "more"
	second.Exactly = second.Exactly.DeepCopy()
	second.Exactly.Capacity = nil // a whole GPU beside a share
	claim.Spec.Devices.Requests = append(claim.Spec.Devices.Requests, second)
	if _, skipped := c.scores(t, newTestPlugin(t, c, PackingName, ""), pod, "a", "b"); !skipped {
		t.Error("a share and a whole GPU in one pod were scored")
	}
	missing := c.pod("q", 1000, 1, 300)
	delete(c.dra.claims, "default/q-gpu")
	pl := newTestPlugin(t, c, PackingName, "")
	if st := pl.PreScore(context.Background(), framework.NewCycleState(), missing, c.nodes("a", "b")); st.IsSuccess() || st.IsSkip() {
		t.Errorf("a claim not found: PreScore %v, want an error", st)
	}
}

func TestScoresInParallel(t *testing.T) {
	c := newCluster(t)
	pod := c.pod("p", 2000, 1, 300)
	for _, name := range []string{ClusteringName, PackingName, BestFitName, DotProductName} {
		pl := newTestPlugin(t, c, name, "")
		cs := framework.NewCycleState()
		nodes := c.nodes("a", "b", "c")
		if st := pl.PreScore(context.Background(), cs, pod, nodes); !st.IsSuccess() {
			t.Fatal(st.AsError())
		}
		var wg sync.WaitGroup
		for range 8 {
			for _, ni := range nodes {
				wg.Go(func() {
					if _, st := pl.Score(context.Background(), cs, pod, ni); !st.IsSuccess() {
						t.Error(st.AsError())
					}
				})
			}
		}
		wg.Wait()
	}
}

func TestArgs(t *testing.T) {
	workload := filepath.Join(t.TempDir(), "w.csv")
	if err := os.WriteFile(workload, []byte("cpu_milli,num_gpu,gpu_milli,popularity\n1000,1,500,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yamlArgs := func(s string) runtime.Object {
		return &runtime.Unknown{Raw: []byte(s), ContentType: runtime.ContentTypeYAML}
	}
	cfg, err := decodeArgs(BestFitName, yamlArgs("maxNodeCPU: \"96\"\nmaxNodeGPUs: 4\ndriver: gpu.example.com\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.scale != (policy.Scale{CPU: 96000, GPU: 4000}) || cfg.driver != "gpu.example.com" || cfg.deviceClass != DefaultDeviceClass || cfg.capacity != DefaultCapacity {
		t.Errorf("config %+v", cfg)
	}
	if cfg, err := decodeArgs(FGDName, yamlArgs("targetWorkload: "+workload)); err != nil || len(cfg.workload) != 1 {
		t.Errorf("FGD: %+v, %v", cfg, err)
	}
	for _, bad := range []struct{ name, args string }{
		{FGDName, ""},
		{FGDName, "targetWorkload: " + workload + ".missing"},
		{BestFitName, "targetWorkload: " + workload},
		{BestFitName, "seed: 3"},
		{BestFitName, "unknownField: 1"},
		{BestFitName, "maxNodeGPUs: -1"},
		{BestFitName, "maxNodeCPU: \"0\""},
	} {
		var obj runtime.Object
		if bad.args != "" {
			obj = yamlArgs(bad.args)
		}
		if _, err := decodeArgs(bad.name, obj); err == nil {
			t.Errorf("%s %q: no error", bad.name, bad.args)
		} else if !strings.Contains(err.Error(), bad.name) {
			t.Errorf("%s %q: the error does not name the plugin: %v", bad.name, bad.args, err)
		}
	}
}
