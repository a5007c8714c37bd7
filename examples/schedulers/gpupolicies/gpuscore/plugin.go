package gpuscore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/batkube/batkube/examples/schedulers/gpupolicies/policy"
)

// The plugins' names in the scheduler configuration: those of the paper's
// simulator.
const (
	RandomName     = "RandomScore"
	DotProductName = "DotProductScore"
	ClusteringName = "GpuClusteringScore"
	PackingName    = "GpuPackingScore"
	BestFitName    = "BestFitScore"
	FGDName        = "FGDScore"
)

// Names returns the six plugins' names, in the paper's order.
func Names() []string {
	return []string{RandomName, DotProductName, ClusteringName, PackingName, BestFitName, FGDName}
}

// Factory returns the factory of the plugin of a name (one of Names), for
// app.WithPlugin(name, Factory(name)).
func Factory(name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		pl, err := New(ctx, name, obj, h)
		if err != nil {
			return nil, err
		}
		return pl, nil
	}
}

// Plugin is one policy's PreScore and Score plugin.
type Plugin struct {
	name   string
	cfg    config
	dra    fwk.SharedDRAManager
	logger klog.Logger
	// score scores one node for the cycle's pod.
	score func(s *cycleState, n policy.Node, ni fwk.NodeInfo) int64

	mu    sync.Mutex    // guards draws
	draws *policy.Draws // RandomScore's
}

var (
	_ fwk.PreScorePlugin  = (*Plugin)(nil)
	_ fwk.ScorePlugin     = (*Plugin)(nil)
	_ fwk.ScoreExtensions = (*Plugin)(nil)
)

// New returns the plugin of a policy (name, one of Names), configured by
// its args (Args).
func New(ctx context.Context, name string, obj runtime.Object, h fwk.Handle) (*Plugin, error) {
	cfg, err := decodeArgs(name, obj)
	if err != nil {
		return nil, err
	}
	dra := h.SharedDRAManager()
	if dra == nil {
		return nil, fmt.Errorf("%s: the framework gives no DRA state (DynamicResourceAllocation disabled?)", name)
	}
	pl := newPlugin(name, cfg, dra, klog.FromContext(ctx).WithName(name))
	if pl.score == nil {
		return nil, fmt.Errorf("no GPU policy named %q (want one of %v)", name, Names())
	}
	pl.logger.Info("GPU placement policy", "driver", cfg.driver, "deviceClass", cfg.deviceClass, "capacity", cfg.capacity,
		"maxNodeCPUMilli", cfg.scale.CPU, "maxNodeGPUMilli", cfg.scale.GPU, "targetWorkloadTypes", len(cfg.workload))
	return pl, nil
}

// newPlugin returns the plugin of a policy; its score is nil for an
// unknown name.
func newPlugin(name string, cfg config, dra fwk.SharedDRAManager, logger klog.Logger) *Plugin {
	pl := &Plugin{name: name, cfg: cfg, dra: dra, logger: logger}
	switch name {
	case RandomName:
		pl.draws = policy.NewDraws(cfg.seed)
		pl.score = func(s *cycleState, _ policy.Node, ni fwk.NodeInfo) int64 {
			if ni.Node().Name == s.drawn {
				return policy.MaxScore
			}
			return 0
		}
	case DotProductName:
		pl.score = func(s *cycleState, n policy.Node, _ fwk.NodeInfo) int64 {
			return policy.DotProduct(n, s.demand, cfg.scale)
		}
	case ClusteringName:
		pl.score = func(s *cycleState, n policy.Node, ni fwk.NodeInfo) int64 {
			return policy.Clustering(n, s.demand, pl.kinds(ni), cfg.scale)
		}
	case PackingName:
		pl.score = func(s *cycleState, n policy.Node, _ fwk.NodeInfo) int64 {
			gpus, ok := policy.FirstFit(n, s.demand)
			if !ok {
				return 0
			}
			return policy.Packing(n, s.demand, gpus)
		}
	case BestFitName:
		pl.score = func(s *cycleState, n policy.Node, _ fwk.NodeInfo) int64 {
			return policy.BestFit(n, s.demand, cfg.scale)
		}
	case FGDName:
		pl.score = func(s *cycleState, n policy.Node, _ fwk.NodeInfo) int64 {
			gpus, ok := policy.FirstFit(n, s.demand)
			if !ok {
				return 0
			}
			return policy.FGD(n, s.demand, gpus, cfg.workload)
		}
	}
	return pl
}

// Name implements fwk.Plugin.
func (pl *Plugin) Name() string { return pl.name }

// cycleState is what PreScore reads for Score, once per scheduling cycle;
// read-only afterwards.
type cycleState struct {
	demand policy.Demand
	nodes  map[string]policy.Node // the feasible nodes, by name
	drawn  string                 // RandomScore's node
}

// Clone implements fwk.StateData: the state is never modified.
func (s *cycleState) Clone() fwk.StateData { return s }

func (pl *Plugin) stateKey() fwk.StateKey { return fwk.StateKey("gpupolicies/" + pl.name) }

// PreScore implements fwk.PreScorePlugin: it reads the pod's demand and
// what the feasible nodes have left (cpu and GPUs), or draws RandomScore's
// node. Pods the policy has no preference for skip its Score.
func (pl *Plugin) PreScore(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	d, err := pl.cfg.demand(pod, pl.dra.ResourceClaims())
	if errors.Is(err, errUnsupported) {
		pl.logger.V(2).Info("Not scoring", "pod", klog.KObj(pod), "reason", err)
		return fwk.NewStatus(fwk.Skip)
	}
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("%s: %w", pl.name, err))
	}
	s := &cycleState{demand: d}
	switch {
	case pl.name == RandomName:
		names := make([]string, len(nodes))
		for i, ni := range nodes {
			names[i] = ni.Node().Name
		}
		pl.mu.Lock()
		s.drawn = pl.draws.Pick(names)
		pl.mu.Unlock()
	case d.GPUs == 0 && (pl.name == ClusteringName || pl.name == PackingName):
		return fwk.NewStatus(fwk.Skip) // 0 for every node
	default:
		s.nodes = make(map[string]policy.Node, len(nodes))
		byName := make(map[string]*policy.Node, len(nodes))
		for _, ni := range nodes {
			n := &policy.Node{CPUCapacity: ni.GetAllocatable().GetMilliCPU()}
			n.CPULeft = n.CPUCapacity - ni.GetRequested().GetMilliCPU()
			byName[ni.Node().Name] = n
		}
		if err := pl.cfg.addGPUs(pl.dra, byName); err != nil {
			return fwk.AsStatus(fmt.Errorf("%s: %w", pl.name, err))
		}
		for name, n := range byName {
			s.nodes[name] = *n
		}
	}
	if v := pl.logger.V(5); v.Enabled() {
		v.Info("Scoring", "pod", klog.KObj(pod), "cpuMilli", d.CPU, "gpus", d.GPUs, "gpuMilli", d.Milli, "nodes", len(nodes), "drawn", s.drawn)
	}
	cs.Write(pl.stateKey(), s)
	return nil
}

// Score implements fwk.ScorePlugin: the policy's score of the node, from
// the cycle's state.
func (pl *Plugin) Score(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	data, err := cs.Read(pl.stateKey())
	if err != nil {
		return 0, fwk.AsStatus(fmt.Errorf("%s: reading the cycle state: %w", pl.name, err))
	}
	s, ok := data.(*cycleState)
	if !ok {
		return 0, fwk.AsStatus(fmt.Errorf("%s: cycle state of type %T", pl.name, data))
	}
	n, ok := s.nodes[ni.Node().Name]
	if !ok && pl.name != RandomName {
		return 0, fwk.AsStatus(fmt.Errorf("%s: node %s was not prescored", pl.name, ni.Node().Name))
	}
	score := pl.score(s, n, ni)
	if v := pl.logger.V(6); v.Enabled() {
		v.Info("Score", "pod", klog.KObj(pod), "node", ni.Node().Name, "cpuLeft", n.CPULeft, "gpuLeft", n.GPULeft, "score", score)
	}
	return score, nil
}

// ScoreExtensions implements fwk.ScorePlugin: BestFitScore normalises its
// scores over the feasible nodes, as the paper's does; the others' are
// final.
func (pl *Plugin) ScoreExtensions() fwk.ScoreExtensions {
	if pl.name == BestFitName {
		return pl
	}
	return nil
}

// NormalizeScore implements fwk.ScoreExtensions (BestFitScore's): the
// scores spread over 0 to MaxNodeScore (policy.NormalizeMinMax).
func (pl *Plugin) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *corev1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	values := make([]int64, len(scores))
	for i, s := range scores {
		values[i] = s.Score
	}
	policy.NormalizeMinMax(values)
	for i := range scores {
		scores[i].Score = values[i]
	}
	return nil
}

// kinds counts the GPU pods on a node by kind (GpuClustering's affinity),
// assumed pods included; pods whose claims cannot be read are left out.
func (pl *Plugin) kinds(ni fwk.NodeInfo) map[policy.Kind]int {
	kinds := map[policy.Kind]int{}
	for _, pi := range ni.GetPods() {
		gpus, milli, err := pl.cfg.podGPUs(pi.GetPod(), pl.dra.ResourceClaims())
		if err != nil {
			continue
		}
		if kind := (policy.Demand{GPUs: gpus, Milli: milli}).Kind(); kind != policy.KindNone {
			kinds[kind]++
		}
	}
	return kinds
}
