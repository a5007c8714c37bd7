package e2e

import (
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/outputs"
)

// TestKueueBaselineScenario runs Kueue's baseline scalability scenario
// (examples/kueue/baseline.yaml), cut down to two ClusterQueues of one
// cohort and a tenth of the Jobs (100), with its real Jobs, pods,
// kube-scheduler, kube-controller-manager and Kueue: every Job runs its
// pod to completion; every Workload is created at its Job's instant (the
// copies of a repeated Job at their own); the cohort's admitted Workloads
// (from _workloads.csv, by admission's usage) and its running pods (from
// _pods.csv) never hold more than its 40 CPUs; the ClusterQueues' log
// has each queue's own accounting within it; every step is exact.
func TestKueueBaselineScenario(t *testing.T) {
	manifest, jobs := baselineManifest(t, 2, 0.1)
	s := newSimulation(t, "examples/kueue/baseline-platform.xml", "examples/kueue/no-jobs.json")
	s.cfg.Kueue = true
	s.cfg.Objects = []string{manifest}
	sum := s.mustRunExact(10 * time.Minute)
	t.Logf("%d Jobs: %d steps, %+v; wall %s", len(jobs), sum.Settle.Steps(), sum.Settle, sum.Wall)

	const cohortCPUs = 40.0
	workloads, err := outputs.ReadWorkloads(filepath.Join(s.cfg.OutDir, "_workloads.csv"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, w := range workloads {
		job := w.Namespace + "/" + strings.TrimPrefix(w.Owner, "Job/")
		j, ok := jobs[job]
		if !ok {
			t.Errorf("Workload %s/%s owned by %s: not a Job of the scenario", w.Namespace, w.Name, w.Owner)
			continue
		}
		seen[job] = true
		if math.Abs(w.Created-j.created) > 1e-6 {
			t.Errorf("%s's Workload created at %g, want its Job's creation, %g", job, w.Created, j.created)
		}
		if w.State != "Finished" || w.Reason != "Succeeded" || math.IsNaN(w.Admitted) {
			t.Errorf("%s's Workload: %s %s, admitted %g; want Finished, Succeeded", job, w.State, w.Reason, w.Admitted)
		}
	}
	if len(seen) != len(jobs) {
		t.Fatalf("%d of the %d Jobs have a Workload", len(seen), len(jobs))
	}

	// The pods: each Job's last pod Succeeded; running pods' cpu requests
	// never above the cohort's quota.
	pods, err := outputs.ReadCSV(filepath.Join(s.cfg.OutDir, "_pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	cpuOf := map[string]float64{"small": 1, "medium": 5, "large": 20}
	type run struct{ start, finish, cpu float64 }
	var runs []run
	succeeded := map[string]bool{}
	for _, p := range pods {
		job := p["namespace"] + "/" + generatedFrom(p["pod"])
		j, ok := jobs[job]
		if !ok {
			t.Errorf("pod %s/%s: not of a scenario's Job", p["namespace"], p["pod"])
			continue
		}
		if p["phase"] == "Succeeded" {
			succeeded[job] = true
		}
		if start, err := strconv.ParseFloat(p["started"], 64); err == nil {
			finish, _ := strconv.ParseFloat(p["finished"], 64)
			runs = append(runs, run{start, finish, cpuOf[j.class]})
		}
	}
	if len(succeeded) != len(jobs) {
		t.Errorf("%d of the %d Jobs have a pod that succeeded", len(succeeded), len(jobs))
	}
	var instants []float64
	for _, r := range runs {
		instants = append(instants, r.start)
	}
	for _, w := range workloads {
		instants = append(instants, w.Admitted)
	}
	slices.Sort(instants)
	for _, at := range slices.Compact(instants) {
		var running, held float64
		for _, r := range runs {
			if r.start <= at && at < r.finish {
				running += r.cpu
			}
		}
		for _, w := range workloads {
			if w.QuotaReserved <= at && at < w.Finished && w.Evictions == 0 {
				held += w.Usage["cpu"]
			}
		}
		if running > cohortCPUs || held > cohortCPUs {
			t.Errorf("t=%g: pods run %g CPUs and Workloads (never evicted) hold %g, above the cohort's %g", at, running, held, cohortCPUs)
		}
	}
	samples, err := outputs.ReadClusterQueues(filepath.Join(s.cfg.OutDir, "_clusterqueues.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// Kueue writes a ClusterQueue's status on a batch period of a second
	// after the Workload changes that move it (constants.UpdatesBatchPeriod,
	// on its clock: simulated time), queue by queue: the statuses of two
	// queues at one instant may be of different instants, so their sum is
	// not checked against the cohort (the Workloads' reservations are,
	// above), and the run ends with the last job, before the batched
	// statuses of the last instant. Each queue's own never goes above the
	// cohort.
	queues := map[string]bool{}
	for _, smp := range samples {
		queues[smp.ClusterQueue] = true
		if u := smp.Usage["cpu"]; u > cohortCPUs {
			t.Errorf("t=%g: ClusterQueue %s says it uses %g CPUs, above the cohort's %g", smp.Time, smp.ClusterQueue, u, cohortCPUs)
		}
	}
	if len(queues) != 2 {
		t.Errorf("_clusterqueues.csv tells of %d ClusterQueues, want the scenario's 2", len(seen))
	}
	for _, c := range baselineClasses(workloads) {
		t.Logf("%-6s %3d Workloads: time to admission mean %.1f s, p95 %.1f s", c.class, c.Count, c.Mean, c.P95)
	}
}
