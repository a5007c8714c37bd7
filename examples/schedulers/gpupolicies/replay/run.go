package replay

import (
	"fmt"
	"math/rand/v2"

	"github.com/batkube/batkube/examples/schedulers/gpupolicies/policy"
)

// The policies, by the names of their configurations
// (examples/schedulers/gpupolicies/config/NAME.yaml).
const (
	Random     = "random"
	DotProd    = "dotprod"
	Clustering = "clustering"
	Packing    = "packing"
	BestFit    = "bestfit"
	FGD        = "fgd"
)

// Policies returns the policies' names, in the paper's order.
func Policies() []string { return []string{Random, DotProd, Clustering, Packing, BestFit, FGD} }

// Mode says which GPUs of a node a pod takes.
type Mode int

// The modes.
const (
	// FirstFitGPUs: the first GPUs with room, as DRA's allocator (and so
	// bin/gpu-scheduler) does; the scores of GpuPacking and FGD are those
	// of these GPUs.
	FirstFitGPUs Mode = iota
	// PaperGPUs: each policy's own choice, as the paper's simulator
	// makes it (best fit; random for Random; the least fragmenting for
	// FGD), its scores computed for those GPUs.
	PaperGPUs
)

func (m Mode) String() string {
	if m == PaperGPUs {
		return "paper"
	}
	return "first-fit"
}

// Options configure a policy's decisions.
type Options struct {
	Policy   string
	Mode     Mode
	Workload policy.Workload // FGD's target workload
	Scale    policy.Scale    // zero: policy.DefaultScale
	// Seed seeds Random's draws of a node (its plugin's seed); TieSeed
	// the draws among equally good nodes and Random's GPU in PaperGPUs.
	Seed, TieSeed uint64
	// FirstOfTies takes the first (in the node list's order) of the
	// equally good nodes instead of drawing one: the paper's simulator's
	// rule on its ranked nodes, and a fixed choice, as
	// kube-scheduler 1.37 without extenders makes one (it draws a
	// tie-breaker only when extenders scored; its order is its heap's,
	// not the list's). FGD's and GpuPacking's allocations depend on it
	// (see the README).
	FirstOfTies bool
}

// decider makes a policy's decisions.
type decider struct {
	opts   Options
	score  func(c *Cluster, i int, p Pod, gpus []int) int64 // nil for Random
	choose policy.GPUChoice
	draws  *policy.Draws
	ties   *rand.Rand
}

func newDecider(opts Options) (*decider, error) {
	if opts.Scale == (policy.Scale{}) {
		opts.Scale = policy.DefaultScale
	}
	d := &decider{opts: opts, choose: policy.FirstFit, draws: policy.NewDraws(opts.Seed), ties: rand.New(rand.NewPCG(opts.TieSeed, 0x74696573))} // "ties"
	paperChoice := policy.BestFitGPU
	s := opts.Scale
	switch opts.Policy {
	case Random:
		paperChoice = policy.RandomGPU(d.ties)
	case DotProd:
		d.score = func(c *Cluster, i int, p Pod, _ []int) int64 { return policy.DotProduct(c.view(i), p.Demand, s) }
	case Clustering:
		d.score = func(c *Cluster, i int, p Pod, _ []int) int64 {
			return policy.Clustering(c.view(i), p.Demand, c.nodes[i].kinds, s)
		}
	case Packing:
		d.score = func(c *Cluster, i int, p Pod, gpus []int) int64 { return policy.Packing(c.view(i), p.Demand, gpus) }
	case BestFit:
		d.score = func(c *Cluster, i int, p Pod, _ []int) int64 { return policy.BestFit(c.view(i), p.Demand, s) }
	case FGD:
		if len(opts.Workload) == 0 {
			return nil, fmt.Errorf("replay: %s needs a target workload", FGD)
		}
		paperChoice = policy.FGDGPU(opts.Workload)
		d.score = func(c *Cluster, i int, p Pod, gpus []int) int64 {
			return policy.FGD(c.view(i), p.Demand, gpus, opts.Workload)
		}
	default:
		return nil, fmt.Errorf("replay: no policy %q (want one of %v)", opts.Policy, Policies())
	}
	if opts.Mode == PaperGPUs {
		d.choose = paperChoice
	}
	return d, nil
}

// best returns the nodes that fit the pod and, among them, those the
// policy prefers: for Random the one drawn (when at least two fit; as
// kube-scheduler, which scores only then), for the others those of the
// highest score (BestFit's normalisation keeps the order).
func (d *decider) best(c *Cluster, p Pod) (feasible, best []int, top int64) {
	feasible = c.feasible(p)
	if len(feasible) < 2 {
		return feasible, feasible, 0
	}
	if d.score == nil {
		names := make([]string, len(feasible))
		byName := make(map[string]int, len(feasible))
		for j, i := range feasible {
			names[j] = NodeName(c.nodes[i].Name)
			byName[names[j]] = i
		}
		return feasible, []int{byName[d.draws.Pick(names)]}, policy.MaxScore
	}
	top = -1
	for _, i := range feasible {
		var gpus []int
		if p.Demand.GPUs > 0 {
			gpus, _ = d.choose(c.view(i), p.Demand)
		}
		switch s := d.score(c, i, p, gpus); {
		case s > top:
			top, best = s, append(best[:0], i)
		case s == top:
			best = append(best, i)
		}
	}
	return feasible, best, top
}

// Placement is where a pod went: a node (index into the node list; -1
// when it fit none) and its GPUs (indices into the node's).
type Placement struct {
	Node int
	GPUs []int
}

// Result is a run of the arrivals: each pod's placement, and the GPU
// thousandths allocated after each arrival.
type Result struct {
	Placements []Placement
	Allocated  []int64
	Capacity   int64
}

// Run places the arrivals in order, each on a node of the policy's best
// (one drawn on a tie), on the GPUs of the mode, or nowhere.
func Run(nodes []Node, arrivals []Arrival, opts Options) (Result, error) {
	d, err := newDecider(opts)
	if err != nil {
		return Result{}, err
	}
	c := NewCluster(nodes)
	res := Result{Capacity: c.capacity}
	for _, a := range arrivals {
		_, best, _ := d.best(c, a.Pod)
		pl := Placement{Node: -1}
		if len(best) > 0 {
			pl.Node = best[0]
			if !opts.FirstOfTies {
				pl.Node = best[d.ties.IntN(len(best))]
			}
			if a.Demand.GPUs > 0 {
				pl.GPUs, _ = d.choose(c.view(pl.Node), a.Demand)
			}
			c.place(pl.Node, a.Pod, pl.GPUs)
		}
		res.Placements = append(res.Placements, pl)
		res.Allocated = append(res.Allocated, c.allocated)
	}
	return res, nil
}

// Point is the allocation when the arrivals' GPU requests first reach
// Arrived % of the cluster's GPUs.
type Point struct {
	Arrived, Allocated float64 // percents of the cluster's GPU thousandths
}

// Curve returns the allocation at every step percent of arrivals, from 0
// up to the last arrival, as batkube-openb allocation reads a run.
func Curve(arrivals []Arrival, res Result, step float64) []Point {
	var out []Point
	var arrived int64
	next := 0.0
	for i, a := range arrivals {
		arrived += a.Demand.GPUMilli()
		pct := 100 * float64(arrived) / float64(res.Capacity)
		for next <= pct+1e-9 {
			out = append(out, Point{Arrived: next, Allocated: 100 * float64(res.Allocated[i]) / float64(res.Capacity)})
			next += step
		}
	}
	return out
}
