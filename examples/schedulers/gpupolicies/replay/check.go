package replay

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/batkube/batkube/examples/schedulers/gpupolicies/policy"
)

// Observed is what a kube-scheduler run did with a pod at its arrival:
// placed it (Started) on a node (its Kubernetes name) and GPUs (indices
// of its devices gpu-0, gpu-1...), or not.
type Observed struct {
	Started bool
	Node    string
	GPUs    []int
}

// ReadRun reads what a run did with each arrival from its _pods.csv: a pod
// started at its arrival instant was placed then (its node and the
// devices of its claims, the devices column); one started later, or
// never, waited.
func ReadRun(runDir string, arrivals []Arrival) (map[string]Observed, error) {
	path := filepath.Join(runDir, "_pods.csv")
	t, err := openTable(path, "job_id", "node", "started", "devices")
	if err != nil {
		return nil, err
	}
	at := make(map[string]float64, len(arrivals))
	for _, a := range arrivals {
		at[a.Name] = a.At
	}
	out := make(map[string]Observed, len(t.rows))
	for i, row := range t.rows {
		job := t.cell(row, "job_id")
		name := job[strings.LastIndex(job, "!")+1:]
		arrived, ok := at[name]
		if !ok {
			return nil, fmt.Errorf("%s: line %d: pod %s did not arrive (not this experiment's run?)", path, i+2, name)
		}
		var o Observed
		if s := t.cell(row, "started"); s != "" {
			started, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d: started %q: want seconds", path, i+2, s)
			}
			o.Started = math.Abs(started-arrived) < 1e-6
		}
		if o.Started {
			o.Node = t.cell(row, "node")
			if o.GPUs, err = deviceIndices(t.cell(row, "devices"), o.Node); err != nil {
				return nil, fmt.Errorf("%s: line %d: %w", path, i+2, err)
			}
		}
		out[name] = o
	}
	return out, nil
}

// deviceIndices reads the GPUs of a devices cell ("node/gpu-1:milli=460;
// node/gpu-2"): their indices, in the cell's order.
func deviceIndices(cell, node string) ([]int, error) {
	if cell == "" {
		return nil, nil
	}
	var gpus []int
	for dev := range strings.SplitSeq(cell, ";") {
		name, _, _ := strings.Cut(dev, ":")
		pool, device, ok := strings.Cut(name, "/")
		index, err := strconv.Atoi(strings.TrimPrefix(device, "gpu-"))
		if !ok || pool != node || !strings.HasPrefix(device, "gpu-") || err != nil || index < 0 {
			return nil, fmt.Errorf("devices %q: %q is not a GPU gpu-N of node %s", cell, name, node)
		}
		gpus = append(gpus, index)
	}
	return gpus, nil
}

// Report is the outcome of Check.
type Report struct {
	// Placed pods started at their arrival, Waited did not; Decisive is
	// the placements where the policy preferred some of the nodes with
	// room over others (where it decided anything).
	Placed, Waited, Decisive int
	// Problems lists each disagreement with the model, by arrival.
	Problems []string
}

// Check replays the arrivals with the policy (in FirstFitGPUs mode), in
// the state the run's own placements make, and reports every decision of
// the run the model disagrees with: a pod placed on a node without room,
// or not among those the policy scores best (Random: not the node drawn),
// or on other GPUs than the first with room; a pod that waited while a
// node had room; a pod the run does not list.
func Check(nodes []Node, arrivals []Arrival, observed map[string]Observed, opts Options) (Report, error) {
	if opts.Mode != FirstFitGPUs {
		return Report{}, fmt.Errorf("replay: check: a run of kube-scheduler takes the first GPUs with room, not mode %s", opts.Mode)
	}
	d, err := newDecider(opts)
	if err != nil {
		return Report{}, err
	}
	c := NewCluster(nodes)
	var r Report
	problem := func(i int, a Arrival, format string, args ...any) {
		r.Problems = append(r.Problems, fmt.Sprintf("arrival %d (pod %s, t=%g): ", i+1, a.Name, a.At)+fmt.Sprintf(format, args...))
	}
	for i, a := range arrivals {
		feasible, best, top := d.best(c, a.Pod)
		o, ok := observed[a.Name]
		if !ok {
			problem(i, a, "not in the run")
			continue
		}
		if !o.Started {
			r.Waited++
			if len(feasible) > 0 {
				problem(i, a, "waited while %d node(s) had room (%s first)", len(feasible), c.nodes[feasible[0]].Name)
			}
			continue
		}
		r.Placed++
		if len(best) < len(feasible) {
			r.Decisive++
		}
		n, ok := c.index[o.Node]
		if !ok {
			problem(i, a, "placed on node %s, not in the node list", o.Node)
			continue
		}
		if !c.fits(n, a.Pod) {
			problem(i, a, "placed on node %s, which has no room for it", o.Node)
			continue
		}
		if !slices.Contains(best, n) {
			names := make([]string, len(best))
			for j, b := range best {
				names[j] = c.nodes[b].Name
			}
			score := "drawn"
			if d.score != nil {
				score = fmt.Sprintf("scored %d", top)
				var gpus []int
				if a.Demand.GPUs > 0 {
					gpus, _ = d.choose(c.view(n), a.Demand)
				}
				problem(i, a, "placed on node %s (score %d), not among the best, %v (%s)", o.Node, d.score(c, n, a.Pod, gpus), names, score)
			} else {
				problem(i, a, "placed on node %s, not on the node %v (%s)", o.Node, names, score)
			}
		}
		want, _ := policy.FirstFit(c.view(n), a.Demand)
		if a.Demand.GPUs == 0 {
			want = nil
		}
		if !slices.Equal(o.GPUs, want) {
			problem(i, a, "on GPUs %v of node %s, the first with room are %v", o.GPUs, o.Node, want)
		}
		for _, g := range o.GPUs {
			if g >= len(c.nodes[n].gpuLeft) || c.nodes[n].gpuLeft[g] < a.Demand.Milli {
				problem(i, a, "GPU %d of node %s has no room for it", g, o.Node)
				o.GPUs = want // go on with the model's
				break
			}
		}
		c.place(n, a.Pod, o.GPUs)
	}
	return r, nil
}
