package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

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
