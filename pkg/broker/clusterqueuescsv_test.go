package broker

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/batkube/batkube/pkg/store"
)

// The ClusterQueues' log writes, per instant and ClusterQueue, the last
// status seen at that instant, and only when it says something new; the
// usage is summed over flavors.
func TestClusterQueueLog(t *testing.T) {
	var out strings.Builder
	l := newClusterQueueLog(&out)
	cq := func(name string, cpu []string, reserving, pending int64) *store.Change {
		var res []any
		for i, q := range cpu {
			res = append(res, map[string]any{"name": "f" + string(rune('0'+i)), "resources": []any{
				map[string]any{"name": "cpu", "total": q}, map[string]any{"name": "memory", "total": "1Gi"}}})
		}
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{"resourceGroups": []any{map[string]any{"flavors": []any{
				map[string]any{"name": "f0", "resources": []any{map[string]any{"name": "cpu", "nominalQuota": int64(20)}}},
				map[string]any{"name": "f1", "resources": []any{map[string]any{"name": "cpu", "nominalQuota": "500m"}}}}}}},
			"status": map[string]any{"flavorsUsage": res, "reservingWorkloads": reserving, "admittedWorkloads": reserving, "pendingWorkloads": pending}}}
		return &store.Change{Object: store.NewStored(u)}
	}
	l.changed(cq("a", []string{"0"}, 0, 0), 0)
	l.changed(cq("a", []string{"2"}, 1, 3), 1) // overwritten at the same instant
	l.changed(cq("a", []string{"4", "500m"}, 2, 2), 1)
	l.changed(cq("b", []string{"1"}, 1, 0), 1)
	l.changed(cq("batkube-probe", []string{"1"}, 1, 0), 1) // Batkube's probe
	l.changed(cq("a", []string{"4", "500m"}, 2, 2), 3)     // nothing new
	l.changed(cq("a", []string{"0"}, 0, 0), 5)
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	want := "time,cluster_queue,nominal,usage,reserving,admitted,pending\n" +
		"0.000000,a,cpu=20500m,cpu=0;memory=1Gi,0,0,0\n" +
		"1.000000,a,cpu=20500m,cpu=4500m;memory=2Gi,2,2,2\n" +
		"1.000000,b,cpu=20500m,cpu=1;memory=1Gi,1,1,0\n" +
		"5.000000,a,cpu=20500m,cpu=0;memory=1Gi,0,0,0\n"
	if got := out.String(); got != want {
		t.Errorf("log:\n%s\nwant\n%s", got, want)
	}
	if newClusterQueueLog(nil) != nil {
		t.Error("no writer: a log")
	}
}
