package outputs

import (
	"cmp"
	"maps"
	"slices"
)

// ClusterQueueSample is a row of _clusterqueues.csv: what a ClusterQueue's
// status said from Time on (simulated seconds) until its next sample.
type ClusterQueueSample struct {
	Time                         float64
	ClusterQueue                 string
	Nominal, Usage               map[string]float64
	Reserving, Admitted, Pending int
}

// ReadClusterQueues reads _clusterqueues.csv, in time order.
func ReadClusterQueues(path string) ([]ClusterQueueSample, error) {
	out, err := readRows(path, ClusterQueuesColumns, func(c *cells) ClusterQueueSample {
		return ClusterQueueSample{ClusterQueue: c.row["cluster_queue"], Time: c.number("time"),
			Nominal: c.usage("nominal"), Usage: c.usage("usage"),
			Reserving: c.whole("reserving"), Admitted: c.whole("admitted"), Pending: c.whole("pending")}
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b ClusterQueueSample) int { return cmp.Compare(a.Time, b.Time) })
	return out, nil
}

// ByClusterQueue splits samples by ClusterQueue, each in time order.
func ByClusterQueue(samples []ClusterQueueSample) map[string][]ClusterQueueSample {
	out := map[string][]ClusterQueueSample{}
	for _, s := range samples {
		out[s.ClusterQueue] = append(out[s.ClusterQueue], s)
	}
	return out
}

// QueueUsage is how much of its nominal quota of one resource a
// ClusterQueue's admitted Workloads used, on average over a time window.
type QueueUsage struct {
	ClusterQueue string  `json:"clusterQueue"`
	Nominal      float64 `json:"nominal"`
	// Mean is the time average of the usage over the window, Max its
	// largest value; Fraction is Mean over Nominal.
	Mean     float64 `json:"mean"`
	Max      float64 `json:"max"`
	Fraction float64 `json:"fraction"`
}

// AverageUsage is each ClusterQueue's use of resource (cpu...), averaged
// over [from, to] (a queue's usage before its first sample counts as 0),
// sorted by ClusterQueue.
func AverageUsage(samples []ClusterQueueSample, resource string, from, to float64) []QueueUsage {
	by := ByClusterQueue(samples)
	out := make([]QueueUsage, 0, len(by))
	for _, name := range slices.Sorted(maps.Keys(by)) {
		ss := by[name]
		u := QueueUsage{ClusterQueue: name, Nominal: ss[len(ss)-1].Nominal[resource]}
		var area float64
		for i, s := range ss {
			start, end := max(s.Time, from), to
			if i+1 < len(ss) {
				end = min(ss[i+1].Time, to)
			}
			if end > start {
				area += s.Usage[resource] * (end - start)
			}
			if s.Time <= to {
				u.Max = max(u.Max, s.Usage[resource])
			}
		}
		if to > from {
			u.Mean = area / (to - from)
		}
		if u.Nominal > 0 {
			u.Fraction = u.Mean / u.Nominal
		}
		out = append(out, u)
	}
	return out
}
