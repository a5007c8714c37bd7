package policy

import (
	"math/rand/v2"
	"strconv"
)

// MilliPerGPU is one whole GPU, in thousandths.
const MilliPerGPU int64 = 1000

// MaxScore is the highest node score (kube-scheduler's MaxNodeScore).
const MaxScore int64 = 100

// Node is what the policies see of a node.
type Node struct {
	// CPUCapacity and CPULeft are the node's allocatable cpu and what its
	// pods leave of it, in thousandths of a core.
	CPUCapacity, CPULeft int64
	// Model is the model of its GPUs ("" for a node without GPUs).
	Model string
	// GPULeft holds the thousandths left of each GPU (0 to MilliPerGPU),
	// in the order in which the DRA allocator visits the devices.
	GPULeft []int64
}

// GPUMilliLeft is the sum of what the node's GPUs have left.
func (n Node) GPUMilliLeft() int64 {
	var sum int64
	for _, left := range n.GPULeft {
		sum += left
	}
	return sum
}

// FreeGPUs is the number of the node's GPUs nothing uses.
func (n Node) FreeGPUs() int {
	free := 0
	for _, left := range n.GPULeft {
		if left >= MilliPerGPU {
			free++
		}
	}
	return free
}

// Place returns the node once d is placed on it, on the GPUs gpus
// (indices into GPULeft, as a GPUChoice returns them). n is left as is.
func (n Node) Place(d Demand, gpus []int) Node {
	out := n
	out.CPULeft -= d.CPU
	out.GPULeft = append([]int64(nil), n.GPULeft...)
	for _, g := range gpus {
		out.GPULeft[g] -= d.Milli
	}
	return out
}

// Demand is what a pod asks for.
type Demand struct {
	// CPU is the pod's cpu request, in thousandths of a core.
	CPU int64
	// GPUs is the number of GPUs it asks for, each for Milli thousandths:
	// MilliPerGPU for whole GPUs, less for a share of one GPU.
	GPUs  int
	Milli int64
}

// GPUMilli is the demand's GPU thousandths in all.
func (d Demand) GPUMilli() int64 { return int64(d.GPUs) * d.Milli }

// IsShare reports whether the demand is a share of one GPU.
func (d Demand) IsShare() bool { return d.GPUs == 1 && d.Milli < MilliPerGPU }

// Kind is the kind of GPU request GpuClustering groups pods by: a share of
// a GPU (whatever its size), or a number of whole GPUs.
type Kind string

// The kinds of a pod without GPU and of a share.
const (
	KindNone  Kind = ""
	KindShare Kind = "share"
)

// Kind returns the demand's kind: KindNone, KindShare, or "k-gpu" for k
// whole GPUs.
func (d Demand) Kind() Kind {
	switch {
	case d.GPUs == 0:
		return KindNone
	case d.IsShare():
		return KindShare
	default:
		return Kind(strconv.Itoa(d.GPUs) + "-gpu")
	}
}

// A GPUChoice returns the GPUs (indices into n.GPULeft) a demand takes on
// a node, and false when the node cannot hold it. A demand without GPU
// takes none and fits (its cpu is not checked: the filters did).
type GPUChoice func(n Node, d Demand) ([]int, bool)

// FirstFit is what kube-scheduler's DRA allocator does with one request
// of d.GPUs devices: the first GPUs, in the order of the node's devices,
// with d.Milli left (a whole GPU's request consumes the whole device, so
// it needs a GPU nothing uses).
func FirstFit(n Node, d Demand) ([]int, bool) {
	if d.GPUs == 0 {
		return nil, true
	}
	gpus := make([]int, 0, d.GPUs)
	for i, left := range n.GPULeft {
		if left >= d.Milli {
			gpus = append(gpus, i)
			if len(gpus) == d.GPUs {
				return gpus, true
			}
		}
	}
	return nil, false
}

// BestFitGPU is the paper's default GPU choice ("best"): a share goes to
// the GPU with the fewest thousandths left that still holds it (the first
// of them on a tie); whole GPUs are the first free ones, as FirstFit.
func BestFitGPU(n Node, d Demand) ([]int, bool) {
	if !d.IsShare() {
		return FirstFit(n, d)
	}
	best := -1
	for i, left := range n.GPULeft {
		if left >= d.Milli && (best < 0 || left < n.GPULeft[best]) {
			best = i
		}
	}
	if best < 0 {
		return nil, false
	}
	return []int{best}, true
}

// RandomGPU returns the paper's GPU choice of its Random policy: a share
// goes to a GPU drawn uniformly among those that hold it; whole GPUs are
// the first free ones. rng is not safe for concurrent use.
func RandomGPU(rng *rand.Rand) GPUChoice {
	return func(n Node, d Demand) ([]int, bool) {
		if !d.IsShare() {
			return FirstFit(n, d)
		}
		var fit []int
		for i, left := range n.GPULeft {
			if left >= d.Milli {
				fit = append(fit, i)
			}
		}
		if len(fit) == 0 {
			return nil, false
		}
		return []int{fit[rng.IntN(len(fit))]}, true
	}
}

// clamp keeps a score within [0, MaxScore].
func clamp(score int64) int64 {
	return max(0, min(MaxScore, score))
}
