package report

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Figures are a run's headline numbers, from _jobs.csv (and the workloads
// and platform for utilisation). Times are simulated seconds.
type Figures struct {
	Jobs, Succeeded, Failed, WalltimeReached, Killed, Rejected int
	// Makespan is the last end of a job (Batsim's makespan).
	Makespan float64
	// Waiting and slowdown are over the jobs that started (rejected ones
	// never do); P95Waiting is the nearest-rank 95th percentile.
	MeanWaiting, P95Waiting, MaxWaiting float64
	MeanSlowdown, MaxSlowdown           float64
	// CPUUtilisation and MemoryUtilisation are the requests of the running
	// jobs integrated over [0, makespan], over the platform's allocatable
	// times the makespan (fractions); HasUtilisation is false when the
	// platform, the workloads or some job's requests are unknown.
	CPUUtilisation, MemoryUtilisation float64
	HasUtilisation                    bool
	// KubeJobs counts the batch/v1 Jobs of _controllers.csv that started;
	// MeanJobWaiting and P95JobWaiting are over them, from a Job's
	// creation to its first pod's start: the wait in a queue such as
	// Kueue's, before the Job's pods exist (Batsim's waiting counts from
	// a pod's creation).
	KubeJobs                      int
	MeanJobWaiting, P95JobWaiting float64
}

// Figures computes the run's figures.
func (r *Run) Figures() Figures {
	var f Figures
	var waits []float64
	var sumSlowdown float64
	for _, j := range r.Jobs {
		f.Jobs++
		switch j.State {
		case "COMPLETED_SUCCESSFULLY":
			f.Succeeded++
		case "COMPLETED_FAILED":
			f.Failed++
		case "COMPLETED_WALLTIME_REACHED":
			f.WalltimeReached++
		case "COMPLETED_KILLED":
			f.Killed++
		case "REJECTED":
			f.Rejected++
		}
		if !j.Started {
			continue
		}
		f.Makespan = max(f.Makespan, j.Finish)
		waits = append(waits, j.Waiting())
		s := j.Slowdown()
		sumSlowdown += s
		f.MaxSlowdown = max(f.MaxSlowdown, s)
	}
	if n := len(waits); n > 0 {
		sort.Float64s(waits)
		var sum float64
		for _, w := range waits {
			sum += w
		}
		f.MeanWaiting = sum / float64(n)
		f.P95Waiting = Percentile(waits, 0.95)
		f.MaxWaiting = waits[n-1]
		f.MeanSlowdown = sumSlowdown / float64(n)
	}
	var jobWaits []float64
	for _, c := range r.Controllers {
		created, err1 := strconv.ParseFloat(c["created"], 64)
		start, err2 := strconv.ParseFloat(c["first_start"], 64)
		if c["kind"] == "Job" && err1 == nil && err2 == nil {
			jobWaits = append(jobWaits, start-created)
		}
	}
	if n := len(jobWaits); n > 0 {
		sort.Float64s(jobWaits)
		var sum float64
		for _, w := range jobWaits {
			sum += w
		}
		f.KubeJobs, f.MeanJobWaiting, f.P95JobWaiting = n, sum/float64(n), Percentile(jobWaits, 0.95)
	}
	// Utilisation needs every job's requests: a run whose jobs include
	// dynamic ones (a controller's pods) has none (the report's charts
	// still draw what is known, with a note).
	if r.canUtilise() && r.Unknown == 0 && f.Makespan > 0 {
		cpu, mem := r.Utilisation()
		f.HasUtilisation = true
		f.CPUUtilisation = Mean(cpu, f.Makespan)
		f.MemoryUtilisation = Mean(mem, f.Makespan)
	}
	return f
}

// canUtilise says whether the run has what utilisation needs.
func (r *Run) canUtilise() bool { return r.HasRequests && len(r.Nodes) > 0 }

// Percentile is the nearest-rank q-quantile of sorted values (0 for none).
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Step is a point of a step function: the value V holds from T until the
// next step's T.
type Step struct{ T, V float64 }

// NodeCounts are the nodes an autoscaler launched that exist over time
// (_nodes.csv: from their creation to their deletion), a step function
// per instance type, and one named "all nodes" when there are several
// types. Nil for a run without launched nodes.
func (r *Run) NodeCounts() map[string][]Step {
	if len(r.launched) == 0 {
		return nil
	}
	byType := map[string][]Step{}
	var all []Step
	for _, n := range r.launched {
		changes := []Step{{n.Created, 1}}
		if !math.IsNaN(n.Deleted) {
			changes = append(changes, Step{n.Deleted, -1})
		}
		byType[n.InstanceType] = append(byType[n.InstanceType], changes...)
		all = append(all, changes...)
	}
	counts := map[string][]Step{}
	for name, changes := range byType {
		counts[name] = steps(changes)
	}
	if len(byType) > 1 {
		counts["all nodes"] = steps(all)
	}
	return counts
}

// steps turns changes (at T, add V) into the step function of their
// running sum, a step at each instant where it changes, starting at 0 from
// time 0.
func steps(changes []Step) []Step {
	sort.SliceStable(changes, func(a, b int) bool { return changes[a].T < changes[b].T })
	out := []Step{{T: 0, V: 0}}
	var v float64
	for i := 0; i < len(changes); {
		t := changes[i].T
		for ; i < len(changes) && changes[i].T == t; i++ {
			v += changes[i].V
		}
		if math.Abs(v) < 1e-9 {
			v = 0 // no residue of float additions
		}
		switch last := &out[len(out)-1]; {
		case last.T == t:
			last.V = v
		case last.V != v: // a step only where the value changes
			out = append(out, Step{T: t, V: v})
		}
	}
	return out
}

// Mean is the time average of a step function over [0, end].
func Mean(s []Step, end float64) float64 {
	if end <= 0 {
		return 0
	}
	var area float64
	for i, st := range s {
		if st.T >= end {
			break
		}
		next := end
		if i+1 < len(s) {
			next = min(s[i+1].T, end)
		}
		area += st.V * (next - max(st.T, 0))
	}
	return area / end
}

// Allocatable is the platform's total allocatable cpu and memory.
func (r *Run) Allocatable() Request {
	var sum Request
	for _, n := range r.Nodes {
		sum.CPU += n.Allocatable.CPU
		sum.Memory += n.Allocatable.Memory
	}
	return sum
}

// Utilisation is the cpu and memory the running jobs request over the
// platform's allocatable, as fractions over time (nil when the platform or
// the workloads are unknown).
func (r *Run) Utilisation() (cpu, mem []Step) {
	if !r.canUtilise() {
		return nil, nil
	}
	total := r.Allocatable()
	var dc, dm []Step
	for _, j := range r.Jobs {
		if !j.Started || j.Finish <= j.Start {
			continue
		}
		if total.CPU > 0 {
			dc = append(dc, Step{j.Start, j.Request.CPU / total.CPU}, Step{j.Finish, -j.Request.CPU / total.CPU})
		}
		if total.Memory > 0 {
			dm = append(dm, Step{j.Start, j.Request.Memory / total.Memory}, Step{j.Finish, -j.Request.Memory / total.Memory})
		}
	}
	return steps(dc), steps(dm)
}

// Queue is the number of jobs pending over time: submitted, not started.
// A rejected job leaves the queue when its pods ended (_pods.csv), or at
// the makespan when that is unknown.
func (r *Run) Queue() []Step {
	rejectedAt := map[string]float64{}
	for _, p := range r.Pods {
		if !math.IsNaN(p.Finished) {
			rejectedAt[p.JobID] = max(rejectedAt[p.JobID], p.Finished)
		}
	}
	var end float64 // the makespan
	for _, j := range r.Jobs {
		if j.Started {
			end = max(end, j.Finish)
		}
	}
	var d []Step
	for _, j := range r.Jobs {
		left := j.Start
		if !j.Started {
			t, ok := rejectedAt[j.ID]
			if !ok {
				t = max(end, j.Submit)
			}
			left = t
		}
		if left > j.Submit {
			d = append(d, Step{j.Submit, 1}, Step{left, -1})
		}
	}
	return steps(d)
}

// Point is a point of a curve.
type Point struct{ X, Y float64 }

// WaitingCDF is the empirical distribution of the started jobs' waiting
// times: for each distinct waiting time w, the fraction of jobs that waited
// w or less.
func (r *Run) WaitingCDF() []Point {
	var waits []float64
	for _, j := range r.Jobs {
		if j.Started {
			waits = append(waits, j.Waiting())
		}
	}
	sort.Float64s(waits)
	var out []Point
	n := float64(len(waits))
	for i, w := range waits {
		if i+1 < len(waits) && waits[i+1] == w {
			continue
		}
		out = append(out, Point{X: w, Y: float64(i+1) / n})
	}
	return out
}

// Bar is a pod (or a job's share of a resource) on a node for a while: a
// bar of the Gantt chart. Lane is its row within the node's band, out of
// the band's Lanes (pods that run at once on a node get distinct lanes).
type Bar struct {
	Node        int // index in GanttNodes
	Lane, Lanes int
	Start, End  float64
	Job         string
}

// Gantt returns the nodes (band names, in platform order) and the bars of
// the run's pods: from _pods.csv when the run has it, else from _jobs.csv's
// allocated resources.
func (r *Run) Gantt() (nodes []string, bars []Bar) {
	index := map[string]int{}
	for i, n := range r.Nodes {
		nodes = append(nodes, n.Name)
		index[n.Name] = i
	}
	node := func(name string) int {
		if i, ok := index[name]; ok {
			return i
		}
		index[name] = len(nodes)
		nodes = append(nodes, name)
		return len(nodes) - 1
	}
	if r.Pods != nil {
		for _, p := range r.Pods {
			if p.Node == "" || math.IsNaN(p.Started) || math.IsNaN(p.Finished) || p.Finished <= p.Started {
				continue
			}
			bars = append(bars, Bar{Node: node(p.Node), Start: p.Started, End: p.Finished, Job: p.JobID})
		}
	} else {
		for _, j := range r.Jobs {
			if !j.Started || j.Finish <= j.Start {
				continue
			}
			for _, id := range j.Resource {
				name := "resource " + strconv.Itoa(id)
				if id < len(r.Nodes) {
					name = r.Nodes[id].Name
				}
				bars = append(bars, Bar{Node: node(name), Start: j.Start, End: j.Finish, Job: j.ID})
			}
		}
	}
	nodes, bars = naturalOrder(nodes, bars)
	assignLanes(bars, len(nodes))
	return nodes, bars
}

// naturalOrder sorts the nodes in natural order (node-2 before node-10:
// runs of digits compare as numbers) and renumbers the bars' nodes.
func naturalOrder(nodes []string, bars []Bar) ([]string, []Bar) {
	order := make([]int, len(nodes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return compareNatural(nodes[a], nodes[b]) })
	sorted := make([]string, len(nodes))
	renumber := make([]int, len(nodes))
	for to, from := range order {
		sorted[to] = nodes[from]
		renumber[from] = to
	}
	for i := range bars {
		bars[i].Node = renumber[bars[i].Node]
	}
	return sorted, bars
}

// compareNatural compares two names with their runs of decimal digits
// compared as numbers.
func compareNatural(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digitPrefix is the length of the run of decimal digits s starts with.
func digitPrefix(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// assignLanes gives each bar the lowest lane of its node free at its start;
// every bar of a node then gets the node's number of lanes.
func assignLanes(bars []Bar, nodes int) {
	order := make([]int, len(bars))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return bars[order[a]].Start < bars[order[b]].Start })
	busyUntil := make([][]float64, nodes) // per node, per lane
	for _, i := range order {
		b := &bars[i]
		lanes := busyUntil[b.Node]
		b.Lane = len(lanes)
		for l, until := range lanes {
			if until <= b.Start {
				b.Lane = l
				break
			}
		}
		if b.Lane == len(lanes) {
			busyUntil[b.Node] = append(lanes, b.End)
		} else {
			lanes[b.Lane] = b.End
		}
	}
	for i := range bars {
		bars[i].Lanes = len(busyUntil[bars[i].Node])
	}
}
