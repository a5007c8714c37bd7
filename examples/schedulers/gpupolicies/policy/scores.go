package policy

// Scale is what DotProduct, Clustering and BestFit divide resources by:
// the largest node's cpu and GPU thousandths (the paper's MaxSpecCpu and
// MaxSpecGpu), so that both dimensions weigh alike whatever the node.
type Scale struct {
	CPU int64 // thousandths of a core
	GPU int64 // GPU thousandths
}

// DefaultScale is the largest node of the Alibaba openb cluster: 128
// cores and 8 GPUs.
var DefaultScale = Scale{CPU: 128_000, GPU: 8 * MilliPerGPU}

// DotProduct is the paper's DotProd (after Tetris): the dot product of the
// node's free (cpu, GPU thousandths) and the demand's, each coordinate
// divided by the scale's, averaged over the two dimensions; the smaller it
// is the better the node: MaxScore·(1 − product/2), truncated. A node
// without the cpu scores 0.
func DotProduct(n Node, d Demand, s Scale) int64 {
	if n.CPULeft < d.CPU {
		return 0
	}
	cpu := float64(n.CPULeft) / float64(s.CPU) * float64(d.CPU) / float64(s.CPU)
	gpu := float64(n.GPUMilliLeft()) / float64(s.GPU) * float64(d.GPUMilli()) / float64(s.GPU)
	return clamp(int64(float64(MaxScore) * (1 - (cpu+gpu)/2)))
}

// Clustering is the paper's GpuClustering: pods go where pods of their
// kind (Demand.Kind) already run. kinds counts the GPU pods on the node by
// kind (KindNone left out). The score is a band of a quarter of MaxScore,
// plus up to a quarter more the fewer GPU thousandths the node has left
// (MaxScore/4·(s.GPU − left)/s.GPU, in integers):
//
//	75 to 100: the node runs only pods of the demand's kind;
//	50 to 75:  pods of its kind and of others;
//	25 to 50:  no GPU pod;
//	 0 to 25:  only pods of other kinds.
//
// A demand without GPU scores 0 everywhere.
func Clustering(n Node, d Demand, kinds map[Kind]int, s Scale) int64 {
	if d.GPUs == 0 {
		return 0
	}
	packed := max(0, MaxScore/4*(s.GPU-n.GPUMilliLeft())/s.GPU)
	var band int64
	switch {
	case kinds[d.Kind()] > 0 && len(kinds) == 1:
		band = 3
	case kinds[d.Kind()] > 0:
		band = 2
	case len(kinds) == 0:
		band = 1
	}
	return clamp(band*MaxScore/4 + packed)
}

// Packing is the paper's GpuPacking, for the demand placed on the GPUs
// gpus of the node (as a GPUChoice returned them), from best to worst:
//
//	50 to 100: only GPUs already in use: MaxScore − (the percents left on
//	           them, summed)/10, at least MaxScore/2;
//	33 to 50:  some free GPUs of a node already in use: MaxScore/2 − the
//	           number of free GPUs taken, at least MaxScore/3;
//	 0 to 33:  a node all of whose GPUs are free: MaxScore/3 − its number
//	           of GPUs.
//
// A demand without GPU scores 0 everywhere.
func Packing(n Node, d Demand, gpus []int) int64 {
	if d.GPUs == 0 {
		return 0
	}
	free := n.FreeGPUs()
	if free == len(n.GPULeft) {
		return clamp(MaxScore/3 - int64(free))
	}
	var freeTaken, percentsLeft int64
	for _, g := range gpus {
		if n.GPULeft[g] >= MilliPerGPU {
			freeTaken++
		}
		percentsLeft += n.GPULeft[g] * 100 / MilliPerGPU
	}
	if freeTaken > 0 {
		return max(MaxScore/2-freeTaken, MaxScore/3)
	}
	return max(MaxScore-percentsLeft/10, MaxScore/2)
}

// BestFit is the paper's BestFit before normalisation: the free cpu and
// GPU thousandths the node would have left, each over the scale's and
// weighted one half, subtracted from one: MaxScore·(1 − waste), truncated
// (the tighter the fit, the higher). A node without the room scores 0.
// NormalizeMinMax then spreads the feasible nodes' scores over 0 to
// MaxScore.
func BestFit(n Node, d Demand, s Scale) int64 {
	cpu, gpu := n.CPULeft-d.CPU, n.GPUMilliLeft()-d.GPUMilli()
	if cpu < 0 || gpu < 0 {
		return 0
	}
	waste := 0.5*float64(cpu)/float64(s.CPU) + 0.5*float64(gpu)/float64(s.GPU)
	return clamp(int64(float64(MaxScore) * (1 - waste)))
}

// NormalizeMinMax maps scores linearly onto 0 to MaxScore, the lowest to
// 0 and the highest to MaxScore (in integers, rounding down); when all are
// equal, all become 0.
func NormalizeMinMax(scores []int64) {
	if len(scores) == 0 {
		return
	}
	lo, hi := scores[0], scores[0]
	for _, s := range scores {
		lo, hi = min(lo, s), max(hi, s)
	}
	for i, s := range scores {
		if hi == lo {
			scores[i] = 0
		} else {
			scores[i] = (s - lo) * MaxScore / (hi - lo)
		}
	}
}
