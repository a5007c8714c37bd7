package broker

import (
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/store"
)

// workloadsGR are Kueue's Workloads (kueue.x-k8s.io), one per Job it
// queues.
var workloadsGR = schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "workloads"}

// The workloads' log (_workloads.csv): one row per Kueue Workload seen
// during the run, written at the end: the object that owns it (its Job),
// its LocalQueue and the ClusterQueue and flavors that admitted it, the
// quota its admission uses (Kueue's resourceUsage, summed over its pod
// sets), the simulated instants at which it was
// created, got its quota reserved, was admitted and finished (as the
// broker saw each condition turn true: exact instants, where a condition's
// lastTransitionTime has whole seconds), how many times it was evicted and
// preempted, and its final state. An empty cell is an instant that did not
// happen.

var workloadsColumns = columns[*workloadRecord]{
	{"namespace", func(r *workloadRecord) string { return r.namespace }},
	{"name", func(r *workloadRecord) string { return r.name }},
	{"owner", func(r *workloadRecord) string { return r.owner }},
	{"queue", func(r *workloadRecord) string { return r.queue }},
	{"cluster_queue", func(r *workloadRecord) string { return r.clusterQueue }},
	{"flavors", func(r *workloadRecord) string { return r.flavors }},
	{"usage", func(r *workloadRecord) string { return r.usage }},
	{"priority", func(r *workloadRecord) string { return strconv.FormatInt(r.priority, 10) }},
	{"created", func(r *workloadRecord) string { return seconds(r.created) }},
	{"quota_reserved", func(r *workloadRecord) string { return seconds(r.quotaReserved) }},
	{"admitted", func(r *workloadRecord) string { return seconds(r.admitted) }},
	{"finished", func(r *workloadRecord) string { return seconds(r.finished) }},
	{"evictions", func(r *workloadRecord) string { return strconv.Itoa(r.evictions) }},
	{"preemptions", func(r *workloadRecord) string { return strconv.Itoa(r.preemptions) }},
	{"final_state", func(r *workloadRecord) string { return r.state }},
	{"reason", func(r *workloadRecord) string { return r.reason }},
}

// Kueue's Workload conditions the log follows.
const (
	workloadQuotaReserved = "QuotaReserved"
	workloadAdmitted      = "Admitted"
	workloadFinished      = "Finished"
	workloadEvicted       = "Evicted"
	workloadPreempted     = "Preempted"
)

// workloadRecord is what the log gathers of one Workload.
type workloadRecord struct {
	namespace, name, owner, queue, clusterQueue, flavors, usage string
	priority                                                    int64
	created, quotaReserved, admitted, finished                  float64 // -1: not yet
	evictions, preemptions                                      int
	// conditions are the conditions true when last seen.
	conditions    map[string]bool
	state, reason string
}

// workloadLog gathers the records, and counts them by state; nil when the
// log is off.
type workloadLog struct {
	recordLog[workloadRecord]
	states WorkloadStates
}

// WorkloadStates counts Kueue's Workloads by the state they were last seen
// in (_workloads.csv's final_state).
type WorkloadStates struct {
	Pending       int `json:"pending"`
	QuotaReserved int `json:"quotaReserved"`
	Admitted      int `json:"admitted"`
	Finished      int `json:"finished"`
}

// count adds n to the count of state ("" counts nothing: a Workload not
// seen before).
func (s *WorkloadStates) count(state string, n int) {
	switch state {
	case "Pending":
		s.Pending += n
	case workloadQuotaReserved:
		s.QuotaReserved += n
	case workloadAdmitted:
		s.Admitted += n
	case workloadFinished:
		s.Finished += n
	}
}

func newWorkloadLog(w io.Writer) *workloadLog {
	if w == nil {
		return nil
	}
	return &workloadLog{recordLog: newRecordLog[workloadRecord](w)}
}

// counts returns the Workloads seen, by state (nil when the log is off).
func (l *workloadLog) counts() *WorkloadStates {
	if l == nil || len(l.records) == 0 {
		return nil
	}
	s := l.states
	return &s
}

// changed records a Workload's state, seen at now. It reads the object in
// place (the store's copy, never modified).
func (l *workloadLog) changed(c *store.Change, now float64) {
	if l == nil {
		return
	}
	u, ok := c.Object.Object().(*unstructured.Unstructured)
	if !ok || u.GetNamespace() == probeNamespace {
		return
	}
	r := l.records[u.GetUID()]
	if r == nil {
		r = &workloadRecord{namespace: u.GetNamespace(), name: u.GetName(), created: now,
			quotaReserved: -1, admitted: -1, finished: -1}
		l.records[u.GetUID()] = r
	}
	r.queue, _ = field[string](u.Object, "spec", "queueName")
	r.priority, _ = field[int64](u.Object, "spec", "priority")
	if ref := metav1.GetControllerOfNoCopy(u); ref != nil {
		r.owner = ref.Kind + "/" + ref.Name
	}
	if admission, ok := field[map[string]any](u.Object, "status", "admission"); ok {
		r.clusterQueue, _ = field[string](admission, "clusterQueue")
		r.flavors = admittedFlavors(admission)
		r.usage = admittedUsage(admission)
	}
	conditions, _ := field[[]any](u.Object, "status", "conditions")
	trueNow := map[string]bool{}
	for _, c := range conditions {
		cm, _ := c.(map[string]any)
		typ, _ := cm["type"].(string)
		if status, _ := cm["status"].(string); status != "True" {
			continue
		}
		trueNow[typ] = true
		if r.conditions[typ] {
			continue // still true: not a new transition
		}
		switch typ {
		case workloadQuotaReserved:
			if r.quotaReserved < 0 {
				r.quotaReserved = now
			}
		case workloadAdmitted:
			if r.admitted < 0 {
				r.admitted = now
			}
		case workloadFinished:
			r.finished = now
			r.reason, _ = cm["reason"].(string)
		case workloadEvicted:
			r.evictions++
		case workloadPreempted:
			r.preemptions++
		}
	}
	r.conditions = trueNow
	before := r.state
	switch {
	case trueNow[workloadFinished]:
		r.state = workloadFinished // its reason set at the transition
	case trueNow[workloadAdmitted]:
		r.state, r.reason = workloadAdmitted, ""
	case trueNow[workloadQuotaReserved]:
		r.state, r.reason = workloadQuotaReserved, ""
	default:
		r.state, r.reason = "Pending", ""
	}
	if r.state != before {
		l.states.count(before, -1)
		l.states.count(r.state, 1)
	}
}

// field reads the value at path in obj without copying it (unlike
// unstructured.Nested*, which copy what they return).
func field[T any](obj map[string]any, path ...string) (T, bool) {
	v, ok, err := unstructured.NestedFieldNoCopy(obj, path...)
	t, isT := v.(T)
	return t, ok && err == nil && isT
}

// admittedFlavors are the flavors of a Workload's admission, each
// resource's ("cpu=default;memory=default"), its pod sets' in order.
func admittedFlavors(admission map[string]any) string {
	sets, _ := field[[]any](admission, "podSetAssignments")
	var parts []string
	for _, s := range sets {
		sm, _ := s.(map[string]any)
		flavors, _ := field[map[string]any](sm, "flavors")
		for _, k := range slices.Sorted(maps.Keys(flavors)) {
			flavor, _ := flavors[k].(string)
			parts = append(parts, k+"="+flavor)
		}
	}
	return strings.Join(parts, ";")
}

// admittedUsage is the quota a Workload's admission uses, each resource's
// total over its pod sets ("cpu=4;memory=4Gi").
func admittedUsage(admission map[string]any) string {
	sets, _ := field[[]any](admission, "podSetAssignments")
	total := map[string]resource.Quantity{}
	for _, s := range sets {
		sm, _ := s.(map[string]any)
		usage, _ := field[map[string]any](sm, "resourceUsage")
		for name, v := range usage {
			str, _ := v.(string)
			q, err := resource.ParseQuantity(str)
			if err != nil {
				continue
			}
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	return formatQuantities(total)
}

// close writes the log.
func (l *workloadLog) close() error {
	if l == nil {
		return nil
	}
	return writeRecords(l.w, workloadsColumns, l.records, func(a, b *workloadRecord) int {
		return byInstantThenName(a.created, b.created, [2]string{a.namespace, b.namespace}, [2]string{a.name, b.name})
	})
}
