package openb

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
)

// The FGD paper's experiment (its repository's scripts: -tune 1.3
// -tuneseed 42 --shuffle-pod) has no departures: pods arrive one after the
// other, each placed at once or never, until their GPU requests reach a
// share of the cluster's GPUs (130 %), and the share of the GPUs'
// thousandths allocated is read as the arrivals grow. Arrivals builds that
// list of pods for a Batkube run: the trace's pods (those Convert would
// keep, whatever their times), more drawn from them at random (with
// replacement) while their requests fall short of the target, the whole
// shuffled, then cut where the requests reach the target. Each arrives
// ArrivalOptions.Interval seconds after the one before and holds what it
// is given until after the last arrival: no pod leaves while pods arrive,
// and a pod that does not fit at its arrival never fits later (the cluster
// only fills), as in the paper, where it fails.

// ArrivalOptions are the arrival-only experiment's settings.
type ArrivalOptions struct {
	// Percent: pods arrive until their GPU requests reach Percent % of
	// the cluster's GPU thousandths (the paper: 130).
	Percent float64
	// Seed seeds the draws and the shuffle: the same seed, the same list.
	Seed uint64
	// Interval is the simulated time between two arrivals (seconds, > 0).
	Interval float64
	// ExclusiveGPUs: as Options.ExclusiveGPUs (a share asks for a whole
	// GPU), for the requests counted and the pods that fit.
	ExclusiveGPUs bool
}

// Arrival is one pod of the experiment: its trace pod (renamed when drawn
// again: name-r1, name-r2...) and what its GPU request counts towards
// the arrivals (thousandths of a GPU).
type Arrival struct {
	Pod       Pod
	GPUMilli  int64
	ArrivedAt float64
}

// Arrivals returns the arrival-only experiment's pods, in arrival order,
// with their creation, scheduled and deletion times set for Convert: they
// arrive at 0, Interval, 2·Interval... and run until one Interval after the
// last arrival, whenever they start.
func Arrivals(nodes []Node, pods []Pod, opts ArrivalOptions) ([]Arrival, error) {
	if !(opts.Percent > 0) || !(opts.Interval > 0) {
		return nil, fmt.Errorf("openb: arrivals: want a percent and an interval above 0, got %g %% every %g s", opts.Percent, opts.Interval)
	}
	capacity := GPUCapacity(nodes)
	if capacity == 0 {
		return nil, errors.New("openb: arrivals: the cluster has no GPU")
	}
	var pool []Arrival
	var requested int64
	for _, p := range pods {
		gpu, reason := gpuRequest(p, opts.ExclusiveGPUs)
		if reason != reasonNone || !fitsSomeNode(p, gpu, nodes, !opts.ExclusiveGPUs) {
			continue
		}
		a := Arrival{Pod: p, GPUMilli: int64(gpu.Count) * 1000}
		if gpu.Milli > 0 {
			a.GPUMilli = gpu.Milli
		}
		pool = append(pool, a)
		requested += a.GPUMilli
	}
	if requested == 0 {
		return nil, errors.New("openb: arrivals: no pod that fits a node asks for a GPU")
	}
	target := opts.Percent / 100 * float64(capacity)
	rng := rand.New(rand.NewPCG(opts.Seed, 0x6f70656e62)) // "openb"
	list := slices.Clone(pool)                            // the draws and the shuffle leave pool as read
	draws := map[string]int{}
	for float64(requested) < target {
		a := pool[rng.IntN(len(pool))]
		draws[a.Pod.Name]++
		a.Pod.Name += "-r" + strconv.Itoa(draws[a.Pod.Name])
		list = append(list, a)
		requested += a.GPUMilli
	}
	rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	var arrived int64
	for i := range list {
		if float64(arrived) >= target {
			list = list[:i]
			break
		}
		arrived += list[i].GPUMilli
	}
	end := float64(len(list)) * opts.Interval
	for i := range list {
		at := float64(i) * opts.Interval
		p := &list[i].Pod
		p.Created, p.Scheduled, p.Deleted = at, &at, &end
		list[i].ArrivedAt = at
	}
	return list, nil
}

// GPUCapacity is the cluster's GPUs in thousandths.
func GPUCapacity(nodes []Node) int64 {
	var n int64
	for _, node := range nodes {
		n += int64(node.GPUs) * 1000
	}
	return n
}

// fitsSomeNode reports whether some node has the cpu, the memory and the
// GPUs a pod asks for, empty.
func fitsSomeNode(p Pod, gpu GPURequest, nodes []Node, sharedGPUs bool) bool {
	for _, n := range nodes {
		if n.CPUMilli >= p.CPUMilli && n.MemMiB >= p.MemMiB && gpu.fits(n, sharedGPUs) {
			return true
		}
	}
	return false
}

// ArrivalPods are the pods of the arrivals, for Convert.
func ArrivalPods(arrivals []Arrival) []Pod {
	out := make([]Pod, len(arrivals))
	for i, a := range arrivals {
		out[i] = a.Pod
	}
	return out
}
