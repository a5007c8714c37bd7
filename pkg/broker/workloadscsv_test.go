package broker

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/batkube/batkube/pkg/store"
)

// The workloads' log records each condition at the instant it was first
// seen true, counts evictions and preemptions by their transitions to true,
// and ends with the last state seen.
func TestWorkloadLog(t *testing.T) {
	var out strings.Builder
	l := newWorkloadLog(&out)
	wl := func(conditions ...map[string]any) *store.Change {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
			"metadata": map[string]any{"name": "job-a-1", "namespace": "team-a", "uid": "u1",
				"ownerReferences": []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "name": "a", "uid": "j1", "controller": true}}},
			"spec": map[string]any{"queueName": "queue", "priority": int64(3)},
		}}
		var cs []any
		for _, c := range conditions {
			cs = append(cs, c)
		}
		status := map[string]any{"conditions": cs}
		for _, c := range conditions {
			if c["type"] == "QuotaReserved" && c["status"] == "True" {
				status["admission"] = map[string]any{"clusterQueue": "cq-a", "podSetAssignments": []any{
					map[string]any{"name": "main", "flavors": map[string]any{"memory": "big", "cpu": "fast"}, "resourceUsage": map[string]any{"cpu": "1500m", "memory": "1Gi"}},
					map[string]any{"name": "aux", "flavors": map[string]any{"cpu": "fast"}, "resourceUsage": map[string]any{"cpu": "500m"}}}}
			}
		}
		u.Object["status"] = status
		return &store.Change{Object: store.NewStored(u)}
	}
	cond := func(typ, status, reason string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason}
	}
	if l.counts() != nil {
		t.Error("counts before any Workload was seen")
	}
	// Each change, and the counts by state after it.
	for _, step := range []struct {
		change *store.Change
		at     float64
		counts WorkloadStates
	}{
		{wl(), 5, WorkloadStates{Pending: 1}},
		{wl(cond("QuotaReserved", "True", "")), 7, WorkloadStates{QuotaReserved: 1}},
		{wl(cond("QuotaReserved", "True", ""), cond("Admitted", "True", "")), 7.5, WorkloadStates{Admitted: 1}},
		{wl(cond("QuotaReserved", "False", ""), cond("Evicted", "True", "Preempted"), cond("Preempted", "True", "")), 9, WorkloadStates{Pending: 1}},
		{wl(cond("QuotaReserved", "False", ""), cond("Evicted", "True", "Preempted"), cond("Preempted", "True", "")), 9.5, WorkloadStates{Pending: 1}}, // no new transition
		{wl(cond("Evicted", "False", ""), cond("QuotaReserved", "True", ""), cond("Admitted", "True", "")), 12, WorkloadStates{Admitted: 1}},
		{wl(cond("QuotaReserved", "True", ""), cond("Admitted", "True", ""), cond("Evicted", "True", "")), 13, WorkloadStates{Admitted: 1}},
		{wl(cond("QuotaReserved", "True", ""), cond("Finished", "True", "Succeeded")), 20, WorkloadStates{Finished: 1}},
	} {
		l.changed(step.change, step.at)
		if got := l.counts(); got == nil || *got != step.counts {
			t.Errorf("at %g: counts %+v, want %+v", step.at, got, step.counts)
		}
	}
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	want := "namespace,name,owner,queue,cluster_queue,flavors,usage,priority,created,quota_reserved,admitted,finished,evictions,preemptions,final_state,reason\n" +
		"team-a,job-a-1,Job/a,queue,cq-a,cpu=fast;memory=big;cpu=fast,cpu=2;memory=1Gi,3,5.000000,7.000000,7.500000,20.000000,2,1,Finished,Succeeded\n"
	if got := out.String(); got != want {
		t.Errorf("log:\n%s\nwant\n%s", got, want)
	}
	if newWorkloadLog(nil) != nil {
		t.Error("no writer: a log")
	}
}
