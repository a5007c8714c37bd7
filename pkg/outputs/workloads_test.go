package outputs

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The queues' summary: Jobs' waits from their creation to their first
// pod's start, the Workloads' times to admission by ClusterQueue (a
// Workload never admitted counted in its LocalQueue's ClusterQueue, as
// still waiting) and by LocalQueue.
func TestSummariseQueues(t *testing.T) {
	controllers, err := ReadControllers(writeTemp(t, "_controllers.csv",
		"kind,namespace,name,created,first_start,last_end,pods,succeeded,failed,killed,final_state,reason\n"+
			"Job,a,j1,0.000000,1.000000,61.000000,1,1,0,0,Complete,CompletionsReached\n"+
			"Job,a,j2,2.000000,13.000000,70.000000,1,1,0,0,Complete,CompletionsReached\n"+
			"Job,b,j3,5.000000,,,0,0,0,0,,\n"+
			"ReplicaSet,a,rs,0.000000,0.000000,,2,0,0,0,,\n"))
	if err != nil {
		t.Fatal(err)
	}
	workloads, err := ReadWorkloads(writeTemp(t, "_workloads.csv",
		"namespace,name,owner,queue,cluster_queue,flavors,usage,priority,created,quota_reserved,admitted,finished,evictions,preemptions,final_state,reason\n"+
			"a,job-j1-1,Job/j1,q,cq-a,cpu=f,cpu=4;memory=1Gi,0,0.000000,0.000000,0.000000,62.000000,0,0,Finished,Succeeded\n"+
			"a,job-j2-2,Job/j2,q,cq-a,cpu=f,cpu=500m,0,2.000000,12.000000,12.000000,71.000000,1,1,Finished,Succeeded\n"+
			"b,job-j3-3,Job/j3,q,,,,0,5.000000,,,,0,0,Pending,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if u := workloads[0].Usage; u["cpu"] != 4 || u["memory"] != 1<<30 {
		t.Errorf("usage %v, want cpu 4 and memory 1Gi", u)
	}
	if !math.IsNaN(workloads[2].Admitted) || workloads[2].Usage == nil {
		t.Errorf("a Workload never admitted: %+v", workloads[2])
	}
	q := SummariseQueues(controllers, workloads)
	if j := q.Jobs; j.Count != 3 || j.Done != 2 || j.Mean != 6 || j.P95 != 11 || j.Max != 11 {
		t.Errorf("Jobs' waits %+v, want 3 Jobs, 2 started, mean 6, p95 11", j)
	}
	// b/q's Workload was never admitted and no other of b/q's was: its
	// ClusterQueue is unknown, it is left out of the ClusterQueues but in
	// its LocalQueue.
	if len(q.ClusterQueues) != 1 || q.ClusterQueues[0].Queue != "cq-a" || q.ClusterQueues[0].Count != 2 || q.ClusterQueues[0].Mean != 5 {
		t.Errorf("by ClusterQueue %+v, want cq-a: 2 admitted, mean 5", q.ClusterQueues)
	}
	if len(q.LocalQueues) != 2 || q.LocalQueues[1].Queue != "b/q" || q.LocalQueues[1].Count != 1 || q.LocalQueues[1].Done != 0 {
		t.Errorf("by LocalQueue %+v, want a/q and b/q (1 waiting)", q.LocalQueues)
	}
	if len(q.JobsByClusterQueue) != 1 || q.JobsByClusterQueue[0].Mean != 6 {
		t.Errorf("Jobs by ClusterQueue %+v, want cq-a: mean 6", q.JobsByClusterQueue)
	}
	if q.Evictions != 1 || q.Evicted != 1 || q.MostEvicted != "a/job-j2-2" || q.MostEvictions != 1 {
		t.Errorf("evictions %d of %d Workloads, most %s (%d), want 1 of 1, a/job-j2-2 once", q.Evictions, q.Evicted, q.MostEvicted, q.MostEvictions)
	}
	// The evictions add up over the Workloads; the most evicted is the one
	// with the largest count, the first of equals in the file's order.
	evicted := append(slices.Clone(workloads),
		Workload{Namespace: "b", Name: "w4", Evictions: 5, Admitted: math.NaN()},
		Workload{Namespace: "b", Name: "w5", Evictions: 5, Admitted: math.NaN()},
		Workload{Namespace: "b", Name: "w6", Evictions: 2, Admitted: math.NaN()})
	if q := SummariseQueues(nil, evicted); q.Evictions != 13 || q.Evicted != 4 || q.MostEvicted != "b/w4" || q.MostEvictions != 5 {
		t.Errorf("evictions %d of %d Workloads, most %s (%d), want 13 of 4, b/w4 5 times", q.Evictions, q.Evicted, q.MostEvicted, q.MostEvictions)
	}
	// A Workload of a LocalQueue whose others were admitted counts in
	// their ClusterQueue.
	workloads = append(workloads, Workload{Namespace: "a", Queue: "q", Created: 9, Admitted: math.NaN()})
	if cqs := AdmissionWaits(workloads, ClusterQueueOf(workloads)); cqs[0].Count != 3 || cqs[0].Done != 2 {
		t.Errorf("by ClusterQueue with one of a/q waiting: %+v", cqs)
	}
}

// A ClusterQueue's average use of a resource over a window, and its
// fraction of the nominal quota.
func TestAverageUsage(t *testing.T) {
	samples, err := ReadClusterQueues(writeTemp(t, "_clusterqueues.csv",
		"time,cluster_queue,nominal,usage,reserving,admitted,pending\n"+
			"0.000000,a,cpu=20,cpu=0,0,0,0\n"+
			"2.000000,a,cpu=20,cpu=10,1,1,0\n"+
			"6.000000,a,cpu=20,cpu=20;memory=1Gi,2,2,3\n"+
			"1.000000,b,cpu=10,cpu=5,1,1,0\n"+
			"10.000000,a,cpu=20,cpu=0,0,0,0\n"))
	if err != nil {
		t.Fatal(err)
	}
	u := AverageUsage(samples, "cpu", 0, 10)
	// a: 10 for 4 s, 20 for 4 s over 10 s; b: 5 from 1 s to 10 s.
	if len(u) != 2 || u[0].ClusterQueue != "a" || u[0].Mean != 12 || u[0].Max != 20 || u[0].Fraction != 0.6 ||
		u[1].Mean != 4.5 || u[1].Fraction != 0.45 {
		t.Errorf("average usage %+v, want a: 12 (60 %%, max 20), b: 4.5 (45 %%)", u)
	}
}
