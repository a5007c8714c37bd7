package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/outputs"
)

// The published figures of Kueue's scalability test, scenario baseline
// (sigs.k8s.io/kueue test/performance/scheduler/configs/baseline/
// rangespec.yaml, the mean of five runs): its runner's wall time, each
// class's mean time to admission (seconds) and the ClusterQueues' mean
// cpu usage (share of the nominal quota).
var kueueHarness = struct {
	wall        time.Duration
	toAdmission map[string]float64
	queueUsage  float64
}{
	wall:        351116 * time.Millisecond,
	toAdmission: map[string]float64{"small": 215.468, "medium": 76.768, "large": 6.666},
	queueUsage:  0.587,
}

// baselineManifest is examples/kueue/baseline.yaml cut down to the first
// queues ClusterQueues of its first cohort (all of them if queues is 0)
// and scale × each class's Jobs (at least one): the same shape, fewer
// objects. It returns the manifest's
// path and the Jobs: namespace/name → instant of creation, class.
func baselineManifest(t testing.TB, queues int, scale float64) (path string, jobs map[string]baselineJob) {
	t.Helper()
	docs, err := apiserver.ManifestDocuments(readFile(t, filepath.Join(repoRoot(), "examples/kueue/baseline.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	keep := func(queue string) bool { return strings.HasPrefix(queue, "cq-") }
	if queues > 0 {
		kept := map[string]bool{}
		for q := range queues {
			kept[fmt.Sprintf("cq-0-%d-cohort-0", q)] = true
		}
		keep = func(queue string) bool { return kept[queue] }
	}
	jobs = map[string]baselineJob{}
	var out []byte
	for _, doc := range docs {
		var obj map[string]any
		if err := json.Unmarshal(doc, &obj); err != nil {
			t.Fatal(err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		ns, _ := meta["namespace"].(string)
		switch obj["kind"] {
		case "Namespace", "ClusterQueue":
			if !keep(name) {
				continue
			}
		case "LocalQueue":
			if !keep(ns) {
				continue
			}
		case "Job":
			if !keep(ns) {
				continue
			}
			a, _ := meta["annotations"].(map[string]any)
			n, _ := strconv.Atoi(a["batkube.io/repeat"].(string))
			n = max(1, int(math.Round(float64(n)*scale)))
			a["batkube.io/repeat"] = strconv.Itoa(n)
			first, _ := strconv.ParseFloat(a["batkube.io/create-at"].(string), 64)
			every, _ := strconv.ParseFloat(a["batkube.io/repeat-every"].(string), 64)
			for i := range n {
				jobs[ns+"/"+name+"-"+strconv.Itoa(i)] = baselineJob{created: first + float64(i)*every, class: name}
			}
		}
		y, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, "---\n"...), y...)
	}
	path = filepath.Join(t.TempDir(), "baseline.yaml")
	writeFile(t, path, out)
	return path, jobs
}

// baselineJob is a Job of the baseline scenario.
type baselineJob struct {
	created float64
	class   string
}

// classOf is a baseline Workload's class, from its Job's name (CLASS-i).
func classOf(w outputs.Workload) string {
	name := strings.TrimPrefix(w.Owner, "Job/")
	if i := strings.LastIndex(name, "-"); i >= 0 {
		return name[:i]
	}
	return name
}

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

// classWaits are a class's times to admission.
type classWaits struct {
	class string
	outputs.Waits
}

// baselineClasses are the Workloads' times to admission by class (small,
// medium, large: the harness's order).
func baselineClasses(ws []outputs.Workload) []classWaits {
	by := map[string][]float64{}
	for _, w := range ws {
		by[classOf(w)] = append(by[classOf(w)], w.TimeToAdmission())
	}
	var out []classWaits
	for _, c := range []string{"small", "medium", "large"} {
		if waits, ok := by[c]; ok {
			out = append(out, classWaits{c, outputs.NewWaits(waits)})
		}
	}
	return out
}

// BenchmarkSimulationKueueBaseline runs Kueue's baseline scalability
// scenario whole (examples/kueue/baseline.yaml: 5 cohorts of 6
// ClusterQueues, 15,000 Jobs of one pod) with the real kube-scheduler,
// kube-controller-manager and Kueue (BATKUBE_KUEUE_BASELINE_SCALE=0.1 runs
// a tenth of the Jobs). It reports the wall time beside the one of Kueue's
// own pod-less harness (351 s, its published mean), the control plane's
// CPU (the three processes) and the server's share of it, each class's
// mean time to admission beside the harness's, and the ClusterQueues'
// mean cpu usage beside the harness's 58.7 %.
//
// The times to admission differ from the harness's by design: there,
// Kueue's own work takes wall time while the runner's Workloads "run" for
// their runtime; here the control plane's work takes no simulated time,
// and a real Job holds its quota from its admission until the Job
// controller has counted its pod done (its pod is created at the
// admission; the Job completes after its 1 s batched sync).
func BenchmarkSimulationKueueBaseline(b *testing.B) {
	scale := 1.0
	if v := os.Getenv("BATKUBE_KUEUE_BASELINE_SCALE"); v != "" {
		var err error
		if scale, err = strconv.ParseFloat(v, 64); err != nil || scale <= 0 || scale > 1 {
			b.Fatalf("BATKUBE_KUEUE_BASELINE_SCALE=%q: want a fraction in (0, 1]", v)
		}
	}
	// A fraction of the Jobs of every ClusterQueue (the committed
	// manifest itself at scale 1).
	manifest, scaled := baselineManifest(b, 0, scale)
	jobs := len(scaled)
	if scale == 1 {
		manifest = filepath.Join(repoRoot(), "examples/kueue/baseline.yaml")
	}
	for b.Loop() {
		s := newSimulation(b, "examples/kueue/baseline-platform.xml", "examples/kueue/no-jobs.json")
		s.obs = nil
		s.cfg.Kueue = true
		s.cfg.Objects = []string{manifest}
		sum := s.mustRun(3 * time.Hour)
		workloads, err := outputs.ReadWorkloads(filepath.Join(s.cfg.OutDir, "_workloads.csv"))
		if err != nil {
			b.Fatal(err)
		}
		if len(workloads) != jobs {
			b.Fatalf("%d Workloads, want one for each of the %d Jobs", len(workloads), jobs)
		}
		samples, err := outputs.ReadClusterQueues(filepath.Join(s.cfg.OutDir, "_clusterqueues.csv"))
		if err != nil {
			b.Fatal(err)
		}
		sched, kcm, kueue, server := sum.Usage(launch.SchedulerProcess), sum.Usage(launch.ControllerManagerProcess),
			sum.Usage(launch.KueueProcess), sum.Usage(launch.ServerProcess)
		control := sched.CPU + kcm.CPU + kueue.CPU
		b.ReportMetric(float64(len(workloads)), "workloads")
		b.ReportMetric(sum.Makespan, "simulated-s")
		b.ReportMetric(sum.Wall.Seconds(), "wall-s")
		b.ReportMetric(kueueHarness.wall.Seconds(), "harness-wall-s")
		b.ReportMetric(control.Seconds(), "control-cpu-s")
		b.ReportMetric(sum.Wall.Seconds()/control.Seconds(), "wall/control-cpu")
		b.ReportMetric(server.CPU.Seconds()/control.Seconds(), "server/control-cpu")
		b.ReportMetric(float64(sum.Settle.Inexact()), "inexact-steps")
		for _, c := range baselineClasses(workloads) {
			b.ReportMetric(c.Mean, c.class+"-admission-s")
			b.ReportMetric(kueueHarness.toAdmission[c.class], "harness-"+c.class+"-admission-s")
		}
		var usage, n float64
		for _, u := range outputs.AverageUsage(samples, "cpu", 0, sum.Makespan) {
			usage += u.Fraction
			n++
		}
		if n > 0 {
			b.ReportMetric(100*usage/n, "cq-usage-%")
			b.ReportMetric(100*kueueHarness.queueUsage, "harness-cq-usage-%")
		}
		b.Logf("%d Workloads, makespan %.1f s: wall %s (the harness: %s); CPU: kube-scheduler %s, kube-controller-manager %s, Kueue %s, server %s (%.0f %% of the control plane's); wall/(control plane CPU) %.2f; %d steps: %+v",
			len(workloads), sum.Makespan, sum.Wall.Round(time.Millisecond), kueueHarness.wall, sched.CPU.Round(time.Millisecond), kcm.CPU.Round(time.Millisecond),
			kueue.CPU.Round(time.Millisecond), server.CPU.Round(time.Millisecond), 100*server.CPU.Seconds()/control.Seconds(), sum.Wall.Seconds()/control.Seconds(), sum.Steps, sum.Settle)
		for _, c := range baselineClasses(workloads) {
			b.Logf("%-6s %5d Workloads: time to admission mean %.1f s (the harness: %.1f s), p95 %.1f s", c.class, c.Count, c.Mean, kueueHarness.toAdmission[c.class], c.P95)
		}
	}
}
