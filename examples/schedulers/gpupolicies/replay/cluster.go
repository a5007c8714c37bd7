package replay

import (
	"slices"

	"github.com/batkube/batkube/examples/schedulers/gpupolicies/policy"
)

// Cluster is the state of the nodes as pods are placed (none leaves).
type Cluster struct {
	nodes     []nodeState
	index     map[string]int // by Kubernetes node name (NodeName)
	capacity  int64          // GPU thousandths
	allocated int64          // GPU thousandths held
}

type nodeState struct {
	Node
	cpuLeft, memLeft int64
	gpuLeft          []int64
	kinds            map[policy.Kind]int
}

// NewCluster returns the nodes, empty.
func NewCluster(nodes []Node) *Cluster {
	c := &Cluster{nodes: make([]nodeState, len(nodes)), index: make(map[string]int, len(nodes))}
	for i, n := range nodes {
		c.nodes[i] = nodeState{Node: n, cpuLeft: n.CPU, memLeft: n.MemMiB, gpuLeft: slices.Repeat([]int64{policy.MilliPerGPU}, n.GPUs),
			kinds: map[policy.Kind]int{}}
		c.index[NodeName(n.Name)] = i
		c.capacity += int64(n.GPUs) * policy.MilliPerGPU
	}
	return c
}

// view is what the policies see of node i (its GPU slice shared: the
// policies do not modify it).
func (c *Cluster) view(i int) policy.Node {
	n := &c.nodes[i]
	return policy.Node{CPUCapacity: n.CPU, CPULeft: n.cpuLeft, Model: n.Model, GPULeft: n.gpuLeft}
}

// fits reports whether node i has the cpu, the memory and the GPUs (of
// a model the pod accepts, each with room) for the pod.
func (c *Cluster) fits(i int, p Pod) bool {
	n := &c.nodes[i]
	if n.cpuLeft < p.Demand.CPU || n.memLeft < p.MemMiB {
		return false
	}
	if p.Demand.GPUs == 0 {
		return true
	}
	if len(p.Models) > 0 && !slices.Contains(p.Models, n.Model) {
		return false
	}
	_, ok := policy.FirstFit(c.view(i), p.Demand)
	return ok
}

// feasible returns the nodes that fit the pod, in the list's order.
func (c *Cluster) feasible(p Pod) []int {
	var out []int
	for i := range c.nodes {
		if c.fits(i, p) {
			out = append(out, i)
		}
	}
	return out
}

// place puts the pod on node i, on the GPUs gpus.
func (c *Cluster) place(i int, p Pod, gpus []int) {
	n := &c.nodes[i]
	n.cpuLeft -= p.Demand.CPU
	n.memLeft -= p.MemMiB
	for _, g := range gpus {
		n.gpuLeft[g] -= p.Demand.Milli
		c.allocated += p.Demand.Milli
	}
	if k := p.Demand.Kind(); k != policy.KindNone {
		n.kinds[k]++
	}
}
