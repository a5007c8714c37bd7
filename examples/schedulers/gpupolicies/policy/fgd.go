package policy

import (
	"math"
	"slices"
)

// PodType is a kind of pod of the target workload FGD measures
// fragmentation against, with its popularity.
type PodType struct {
	Demand
	// Models are the GPU models the type accepts (none: any model).
	Models []string
	// Popularity is the type's share of the workload's pods (the types'
	// popularities sum to 1).
	Popularity float64
}

// Accepts reports whether pods of the type may use GPUs of a model.
func (t PodType) Accepts(model string) bool {
	return len(t.Models) == 0 || slices.Contains(t.Models, model)
}

// Workload is FGD's target workload: the pod types expected to arrive.
type Workload []PodType

// Unusable returns the GPU thousandths of the node that a pod of type t
// could not use, were it the next to arrive (the paper's F_n(m)):
//
//   - all the node's free thousandths if the pod could not run on the node
//     at all: it asks for no GPU (then every free GPU thousandth is a
//     fragment to it), for a model the node does not have, for more cpu
//     than is left, or for more GPUs with its thousandths each than the
//     node has;
//   - otherwise, the thousandths left on the GPUs that each have fewer
//     than the pod asks of one GPU.
func Unusable(n Node, t PodType) int64 {
	free := n.GPUMilliLeft()
	if t.GPUs == 0 || !t.Accepts(n.Model) || n.CPULeft < t.CPU {
		return free
	}
	holders, tooSmall := 0, int64(0)
	for _, left := range n.GPULeft {
		if left >= t.Milli {
			holders++
		} else {
			tooSmall += left
		}
	}
	if holders < t.GPUs {
		return free
	}
	return tooSmall
}

// Fragmentation is the node's expected GPU fragmentation for the target
// workload: Unusable for each pod type, weighted by its popularity.
func Fragmentation(n Node, w Workload) float64 {
	var f float64
	for _, t := range w {
		f += t.Popularity * float64(Unusable(n, t))
	}
	return f
}

// FGD is the paper's fragmentation gradient descent score of placing the
// demand on the GPUs gpus of the node: the decrease of the node's
// fragmentation, through a sigmoid: MaxScore·sigmoid((before −
// after)/1000), truncated (50 when the placement changes nothing, less
// when it fragments). A demand of nothing scores MaxScore.
func FGD(n Node, d Demand, gpus []int, w Workload) int64 {
	if d.CPU == 0 && d.GPUs == 0 {
		return MaxScore
	}
	decrease := Fragmentation(n, w) - Fragmentation(n.Place(d, gpus), w)
	return clamp(int64(float64(MaxScore) * sigmoid(decrease/float64(MilliPerGPU))))
}

// FGDGPU is the paper's GPU choice of FGD: a share goes to the GPU whose
// use scores best (the first of them on a tie); whole GPUs are the first
// free ones (which of the free GPUs does not change the fragmentation).
func FGDGPU(w Workload) GPUChoice {
	return func(n Node, d Demand) ([]int, bool) {
		if !d.IsShare() {
			return FirstFit(n, d)
		}
		best, bestScore := -1, int64(0)
		for i, left := range n.GPULeft {
			if left < d.Milli {
				continue
			}
			if score := FGD(n, d, []int{i}, w); best < 0 || score > bestScore {
				best, bestScore = i, score
			}
		}
		if best < 0 {
			return nil, false
		}
		return []int{best}, true
	}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
