package outputs

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Workload is a row of _workloads.csv: one of Kueue's Workloads. Instants
// are simulated seconds, NaN when they did not happen.
type Workload struct {
	Namespace, Name string
	// Owner is the object that owns it, "Job/NAME".
	Owner string
	// Queue is its LocalQueue (in Namespace), ClusterQueue the queue that
	// admitted it ("" if none did).
	Queue, ClusterQueue string
	// Usage is the quota its admission uses: cpu in cores, memory in
	// bytes, other resources in their units.
	Usage    map[string]float64
	Priority int64
	// Created, QuotaReserved, Admitted and Finished are when the broker
	// saw each happen (the first quota reservation and admission).
	Created, QuotaReserved, Admitted, Finished float64
	Evictions, Preemptions                     int
	State, Reason                              string
}

// LocalQueue is the Workload's LocalQueue as "namespace/name".
func (w Workload) LocalQueue() string { return w.Namespace + "/" + w.Queue }

// TimeToAdmission is the time from the Workload's creation (its Job's: the
// job reconciler creates it at once) to its first admission; NaN if it
// was never admitted.
func (w Workload) TimeToAdmission() float64 { return w.Admitted - w.Created }

// ReadWorkloads reads _workloads.csv.
func ReadWorkloads(path string) ([]Workload, error) {
	return readRows(path, WorkloadsColumns, func(c *cells) Workload {
		return Workload{Namespace: c.row["namespace"], Name: c.row["name"], Owner: c.row["owner"], Queue: c.row["queue"],
			ClusterQueue: c.row["cluster_queue"], State: c.row["final_state"], Reason: c.row["reason"],
			Created: c.instant("created"), QuotaReserved: c.instant("quota_reserved"),
			Admitted: c.instant("admitted"), Finished: c.instant("finished"),
			Priority:  parse(c, "priority", func(s string) (int64, error) { return strconv.ParseInt(cmp.Or(s, "0"), 10, 64) }),
			Evictions: c.count("evictions"), Preemptions: c.count("preemptions"), Usage: c.usage("usage")}
	})
}

// parseUsage parses "cpu=4;memory=4Gi".
func parseUsage(s string) (map[string]float64, error) {
	out := map[string]float64{}
	if s == "" {
		return out, nil
	}
	for part := range strings.SplitSeq(s, ";") {
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want name=quantity", part)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] += q.AsApproximateFloat64()
	}
	return out, nil
}

// Waits summarise waiting times (seconds).
type Waits struct {
	// Count is how many waited, Done how many of them stopped waiting
	// (were admitted, started): Mean, P95 and Max are over those.
	Count int     `json:"count"`
	Done  int     `json:"done"`
	Mean  float64 `json:"meanSeconds"`
	P95   float64 `json:"p95Seconds"`
	Max   float64 `json:"maxSeconds"`
}

// NewWaits summarises the waits, NaN meaning "still waiting".
func NewWaits(waits []float64) Waits {
	w := Waits{Count: len(waits)}
	var done []float64
	for _, v := range waits {
		if !math.IsNaN(v) {
			done = append(done, v)
		}
	}
	w.Done = len(done)
	if w.Done == 0 {
		return w
	}
	slices.Sort(done)
	var sum float64
	for _, v := range done {
		sum += v
	}
	w.Mean, w.P95, w.Max = sum/float64(w.Done), Percentile(done, 0.95), done[w.Done-1]
	return w
}

// Percentile is the nearest-rank q-quantile of sorted values (0 for none).
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// QueueWaits are the times to admission of one queue's Workloads.
type QueueWaits struct {
	Queue string `json:"queue"`
	Waits
}

// AdmissionWaits groups the Workloads' times to admission by queue (key:
// Workload.ClusterQueue, Workload.LocalQueue...), sorted by queue name; a
// Workload whose key is "" is left out.
func AdmissionWaits(ws []Workload, key func(Workload) string) []QueueWaits {
	by := map[string][]float64{}
	for _, w := range ws {
		if k := key(w); k != "" {
			by[k] = append(by[k], w.TimeToAdmission())
		}
	}
	out := make([]QueueWaits, 0, len(by))
	for _, k := range slices.Sorted(maps.Keys(by)) {
		out = append(out, QueueWaits{Queue: k, Waits: NewWaits(by[k])})
	}
	return out
}

// ClusterQueueOf returns the ClusterQueue each Workload waited in: the
// one that admitted it, or, for one never admitted, the one that admitted
// the other Workloads of its LocalQueue ("" if none did).
func ClusterQueueOf(ws []Workload) func(Workload) string {
	byLocal := map[string]string{}
	for _, w := range ws {
		if w.ClusterQueue != "" {
			byLocal[w.LocalQueue()] = w.ClusterQueue
		}
	}
	return func(w Workload) string { return cmp.Or(w.ClusterQueue, byLocal[w.LocalQueue()]) }
}

// Controller is a row of _controllers.csv: an object that owned pods (a
// Job, a ReplicaSet...). Instants are simulated seconds, NaN when they did
// not happen.
type Controller struct {
	Kind, Namespace, Name           string
	Created, FirstStart, LastEnd    float64
	Pods, Succeeded, Failed, Killed int
	State, Reason                   string
}

// Wait is the time from the object's creation to its first pod's start
// (NaN if none started): for a Job, what its user waited.
func (c Controller) Wait() float64 { return c.FirstStart - c.Created }

// ReadControllers reads _controllers.csv.
func ReadControllers(path string) ([]Controller, error) {
	return readRows(path, ControllersColumns, func(c *cells) Controller {
		return Controller{Kind: c.row["kind"], Namespace: c.row["namespace"], Name: c.row["name"], State: c.row["final_state"], Reason: c.row["reason"],
			Created: c.instant("created"), FirstStart: c.instant("first_start"), LastEnd: c.instant("last_end"),
			Pods: c.count("pods"), Succeeded: c.count("succeeded"), Failed: c.count("failed"), Killed: c.count("killed")}
	})
}

// Queues summarises how a run's batch/v1 Jobs waited, from each Job's
// creation: in all, and in Kueue's queues.
type Queues struct {
	// Jobs are the waits of the Jobs (creation to first pod start).
	Jobs Waits `json:"jobs"`
	// ClusterQueues and LocalQueues are the Workloads' times to
	// admission (creation to admission) by queue; empty without Kueue.
	ClusterQueues []QueueWaits `json:"clusterQueues,omitempty"`
	LocalQueues   []QueueWaits `json:"localQueues,omitempty"`
	// JobsByClusterQueue are the Jobs' waits (creation to first pod
	// start) by the ClusterQueue of their Workload.
	JobsByClusterQueue []QueueWaits `json:"jobsByClusterQueue,omitempty"`
	// Evictions is how many times Kueue evicted the Workloads in all
	// (preempted or otherwise), Evicted how many Workloads it evicted, and
	// MostEvicted the one it evicted most often ("namespace/name", the
	// first in _workloads.csv's order among equals), MostEvictions how
	// often: one Workload evicted thousands of times is a preemption loop
	// that kept the controllers busy for as long.
	Evictions     int    `json:"evictions,omitempty"`
	Evicted       int    `json:"evicted,omitempty"`
	MostEvicted   string `json:"mostEvicted,omitempty"`
	MostEvictions int    `json:"mostEvictions,omitempty"`
}

// SummariseQueues computes Queues from _controllers.csv's and
// _workloads.csv's rows (either may be nil).
func SummariseQueues(controllers []Controller, workloads []Workload) Queues {
	var q Queues
	var jobWaits []float64
	jobWait := map[string]float64{} // namespace/name of a Job → its wait
	for _, c := range controllers {
		if c.Kind == "Job" {
			jobWaits = append(jobWaits, c.Wait())
			jobWait[c.Namespace+"/"+c.Name] = c.Wait()
		}
	}
	q.Jobs = NewWaits(jobWaits)
	if len(workloads) == 0 {
		return q
	}
	cq := ClusterQueueOf(workloads)
	q.ClusterQueues = AdmissionWaits(workloads, cq)
	q.LocalQueues = AdmissionWaits(workloads, Workload.LocalQueue)
	byCQ := map[string][]float64{}
	for _, w := range workloads {
		name, ok := strings.CutPrefix(w.Owner, "Job/")
		wait, known := jobWait[w.Namespace+"/"+name]
		if k := cq(w); ok && known && k != "" {
			byCQ[k] = append(byCQ[k], wait)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(byCQ)) {
		q.JobsByClusterQueue = append(q.JobsByClusterQueue, QueueWaits{Queue: k, Waits: NewWaits(byCQ[k])})
	}
	for _, w := range workloads {
		if w.Evictions == 0 {
			continue
		}
		q.Evictions += w.Evictions
		q.Evicted++
		if w.Evictions > q.MostEvictions {
			q.MostEvicted, q.MostEvictions = w.Namespace+"/"+w.Name, w.Evictions
		}
	}
	return q
}
