package broker

import (
	"encoding/csv"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/store"
)

// clusterQueuesGR are Kueue's ClusterQueues.
var clusterQueuesGR = schema.GroupResource{Group: kueueGroup, Resource: "clusterqueues"}

// The ClusterQueues' log (_clusterqueues.csv): a row each time the status
// Kueue writes for a ClusterQueue changes what it says — the quota its
// admitted Workloads use (flavorsUsage, summed over flavors: "cpu=12"), how
// many Workloads hold quota, are admitted and are pending — and its
// nominal quota (spec, summed over flavors likewise) at the
// simulated instant the broker saw it. Quota use over time and the
// average use over a run (what Kueue's own scalability test reports per
// ClusterQueue) come from it; a row per instant and ClusterQueue, the
// last status seen at that instant.
var clusterQueuesColumns = columns[clusterQueueRow]{
	{"time", func(r clusterQueueRow) string { return strconv.FormatFloat(r.at, 'f', 6, 64) }},
	{"cluster_queue", func(r clusterQueueRow) string { return r.name }},
	{"nominal", func(r clusterQueueRow) string { return r.nominal }},
	{"usage", func(r clusterQueueRow) string { return r.usage }},
	{"reserving", func(r clusterQueueRow) string { return strconv.FormatInt(r.reserving, 10) }},
	{"admitted", func(r clusterQueueRow) string { return strconv.FormatInt(r.admitted, 10) }},
	{"pending", func(r clusterQueueRow) string { return strconv.FormatInt(r.pending, 10) }},
}

// clusterQueueRow is a row: a ClusterQueue's state at an instant.
type clusterQueueRow struct {
	at   float64
	name string
	clusterQueueState
}

// clusterQueueState is what the log says of one ClusterQueue.
type clusterQueueState struct {
	nominal, usage               string
	reserving, admitted, pending int64
}

// clusterQueueLog writes the rows as they come (nil when the log is off).
type clusterQueueLog struct {
	w *csv.Writer
	// last is each ClusterQueue's last state written; pending the state
	// seen at the current instant, not written yet.
	last    map[string]clusterQueueState
	pending map[string]clusterQueueState
	at      float64
	err     error
}

func newClusterQueueLog(w io.Writer) *clusterQueueLog {
	if w == nil {
		return nil
	}
	l := &clusterQueueLog{w: csv.NewWriter(w), last: map[string]clusterQueueState{}, pending: map[string]clusterQueueState{}}
	l.write(clusterQueuesColumns.header())
	return l
}

// changed notes a ClusterQueue's status, seen at now.
func (l *clusterQueueLog) changed(c *store.Change, now float64) {
	if l == nil {
		return
	}
	u, ok := c.Object.Object().(*unstructured.Unstructured)
	if !ok || u.GetName() == kueueProbe {
		return
	}
	if now != l.at {
		l.flush()
		l.at = now
	}
	status, _ := field[map[string]any](u.Object, "status")
	s := clusterQueueState{usage: flavorsUsage(status), nominal: nominalQuota(u.Object)}
	s.reserving, _ = field[int64](status, "reservingWorkloads")
	s.admitted, _ = field[int64](status, "admittedWorkloads")
	s.pending, _ = field[int64](status, "pendingWorkloads")
	l.pending[u.GetName()] = s
}

// flush writes the states seen at the last instant that changed.
func (l *clusterQueueLog) flush() {
	for _, name := range slices.Sorted(maps.Keys(l.pending)) {
		s := l.pending[name]
		if last, ok := l.last[name]; ok && last == s {
			continue
		}
		l.last[name] = s
		l.write(clusterQueuesColumns.row(clusterQueueRow{at: l.at, name: name, clusterQueueState: s}))
	}
	clear(l.pending)
}

func (l *clusterQueueLog) write(row []string) {
	if l.err == nil {
		l.err = l.w.Write(row)
	}
}

// close writes what is left.
func (l *clusterQueueLog) close() error {
	if l == nil {
		return nil
	}
	l.flush()
	l.w.Flush()
	if l.err != nil {
		return l.err
	}
	return l.w.Error()
}

// flavorsUsage sums a ClusterQueue status's flavorsUsage over flavors,
// resource by resource ("cpu=12;memory=48Gi").
func flavorsUsage(status map[string]any) string {
	flavors, _ := field[[]any](status, "flavorsUsage")
	total := map[string]resource.Quantity{}
	for _, f := range flavors {
		fm, _ := f.(map[string]any)
		resources, _ := field[[]any](fm, "resources")
		addQuantities(total, resources, "total")
	}
	return formatQuantities(total)
}

// nominalQuota sums a ClusterQueue's nominal quotas over its resource
// groups and flavors, resource by resource ("cpu=20").
func nominalQuota(obj map[string]any) string {
	groups, _ := field[[]any](obj, "spec", "resourceGroups")
	total := map[string]resource.Quantity{}
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		flavors, _ := field[[]any](gm, "flavors")
		for _, f := range flavors {
			fm, _ := f.(map[string]any)
			resources, _ := field[[]any](fm, "resources")
			addQuantities(total, resources, "nominalQuota")
		}
	}
	return formatQuantities(total)
}

// addQuantities adds to total the quantity at key of each {name: ...}.
func addQuantities(total map[string]resource.Quantity, resources []any, key string) {
	for _, r := range resources {
		rm, _ := r.(map[string]any)
		name, _ := rm["name"].(string)
		var q resource.Quantity
		var err error
		switch v := rm[key].(type) {
		case string:
			q, err = resource.ParseQuantity(v)
		case int64:
			q = *resource.NewQuantity(v, resource.DecimalSI)
		case float64:
			q, err = resource.ParseQuantity(strconv.FormatFloat(v, 'f', -1, 64))
		default:
			continue
		}
		if name == "" || err != nil {
			continue
		}
		sum := total[name]
		sum.Add(q)
		total[name] = sum
	}
}

// formatQuantities writes "cpu=12;memory=48Gi", by resource name.
func formatQuantities(total map[string]resource.Quantity) string {
	parts := make([]string, 0, len(total))
	for _, name := range slices.Sorted(maps.Keys(total)) {
		q := total[name]
		parts = append(parts, name+"="+q.String())
	}
	return strings.Join(parts, ";")
}
