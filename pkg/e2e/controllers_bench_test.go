package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/outputs"
)

// BenchmarkSimulationJobs runs a contended workload of batch/v1 Jobs with
// the real kube-controller-manager and kube-scheduler on platform_4 (4
// nodes of 8 cores): 24 Jobs created 10 s apart, each of 4 completions 2 at
// a time, pods of 4 cores for 30 to 60 s (8 pods fit at once, 2 per node).
// It reports the wall time, the control plane's CPU (kube-scheduler and
// kube-controller-manager) and their ratio, and the pods that waited at an
// instant when a node had room for them (from _pods.csv, pod by pod), with
// kube-controller-manager on the run's simulated clock (the default) and on
// the wall clock, side by side.
func BenchmarkSimulationJobs(b *testing.B) {
	for _, clock := range []string{"simulated", "wall"} {
		b.Run("clock="+clock, func(b *testing.B) { benchmarkJobs(b, clock == "wall") })
	}
}

func benchmarkJobs(b *testing.B, wallClock bool) {
	dir := b.TempDir()
	workload := filepath.Join(dir, "one.json")
	writeJSON(b, workload, map[string]any{"nb_res": 4,
		"jobs":     []map[string]any{{"id": "a", "subtime": 0, "res": 1, "profile": "d1"}},
		"profiles": map[string]any{"d1": map[string]any{"type": "delay", "delay": 1, "cpu": 1, "memory": "1Gi"}}})
	objects := filepath.Join(dir, "jobs.yaml")
	var docs []string
	for i := range 24 {
		docs = append(docs, fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: job-%02d, annotations: {batkube.io/create-at: "%d"}}
spec:
  completions: 4
  parallelism: 2
  template:
    metadata: {annotations: {batkube.io/delay: "%d"}}
    spec:
      restartPolicy: Never
      containers: [{name: w, image: w, resources: {requests: {cpu: "4", memory: 1Gi}}}]
`, i, 10*i, 30+10*(i%4)))
	}
	writeFile(b, objects, []byte(strings.Join(docs, "---\n")))
	for b.Loop() {
		s := newSimulation(b, "examples/platforms/platform_4.xml", workload)
		s.obs = nil
		s.cfg.ControllerManager = true
		s.cfg.ControllerManagerWallClock = wallClock
		s.cfg.Objects = []string{objects}
		sum := s.mustRun(30 * time.Minute)
		if want := 1 + 24*4; sum.Succeeded != want {
			b.Fatalf("%d of %d jobs succeeded", sum.Succeeded, want)
		}
		sched, kcm, server := sum.Usage(launch.SchedulerProcess), sum.Usage(launch.ControllerManagerProcess), sum.Usage(launch.ServerProcess)
		control := sched.CPU + kcm.CPU
		late := podsWaitingWithRoom(b, filepath.Join(s.cfg.OutDir, "_pods.csv"), 4, 2)
		b.ReportMetric(sum.Wall.Seconds(), "wall-s")
		b.ReportMetric(control.Seconds(), "control-cpu-s")
		b.ReportMetric(sum.Wall.Seconds()/control.Seconds(), "wall/control-cpu")
		b.ReportMetric(server.CPU.Seconds()/control.Seconds(), "server/control-cpu")
		b.ReportMetric(sum.SpeedUp, "x-realtime")
		b.ReportMetric(float64(late), "late-pods")
		b.Logf("makespan %.0f s, wall %s (%.0fx real time); CPU: kube-scheduler %s, kube-controller-manager %s, server %s; wall/(control plane CPU) %.2f; %d steps: %+v; %d pods waited with room",
			sum.Makespan, sum.Wall.Round(time.Millisecond), sum.SpeedUp, sched.CPU.Round(time.Millisecond), kcm.CPU.Round(time.Millisecond),
			server.CPU.Round(time.Millisecond), sum.Wall.Seconds()/control.Seconds(), sum.Steps, sum.Settle, late)
	}
}

// podsWaitingWithRoom counts the pods of a run (_pods.csv, all of one
// size: perNode fit on a node) that were pending at an instant when one
// of the nodes ran fewer than perNode pods, once the pods started at that
// instant are placed.
func podsWaitingWithRoom(tb testing.TB, podsCSV string, nodes, perNode int) int {
	tb.Helper()
	rows, err := outputs.ReadCSV(podsCSV)
	if err != nil {
		tb.Fatal(err)
	}
	type pod struct{ created, started, finished float64 }
	var pods []pod
	instants := map[float64]bool{}
	for _, r := range rows {
		if strings.HasPrefix(r["job_id"], "w0!") {
			continue // the workload's one static job
		}
		p := pod{num(tb, r["created"]), num(tb, r["started"]), num(tb, r["finished"])}
		pods = append(pods, p)
		instants[p.created], instants[p.finished] = true, true
	}
	var at []float64
	for t := range instants {
		at = append(at, t)
	}
	sort.Float64s(at)
	late := map[int]bool{}
	for _, t := range at {
		running := 0
		for _, p := range pods {
			if p.started <= t && p.finished > t {
				running++
			}
		}
		if running >= nodes*perNode {
			continue
		}
		for i, p := range pods {
			if p.created <= t && p.started > t {
				late[i] = true
			}
		}
	}
	return len(late)
}

// BenchmarkSimulationKueue runs Kueue (examples/kueue/compare.yaml's
// BestEffortFIFO setting: 50 Jobs of two tenants, quotas of 16 CPUs each in
// one cohort, on platform_4) with kube-controller-manager and kube-scheduler,
// and reports the wall time against the control plane's CPU (kube-scheduler,
// kube-controller-manager and Kueue), the server's CPU beside it, and how
// the steps ended.
func BenchmarkSimulationKueue(b *testing.B) {
	for b.Loop() {
		s := newSimulation(b, "examples/platforms/platform_4.xml", "examples/kueue/one-job.json")
		s.obs = nil
		s.cfg.Kueue = true
		s.cfg.Objects = []string{abs(repoRoot(), "examples/kueue/contended-jobs.yaml"), abs(repoRoot(), "examples/kueue/queues-besteffort.yaml")}
		sum := s.mustRun(30 * time.Minute)
		if want := 1 + 50; sum.Succeeded != want {
			b.Fatalf("%d of %d jobs succeeded", sum.Succeeded, want)
		}
		sched, kcm, kueue, server := sum.Usage(launch.SchedulerProcess), sum.Usage(launch.ControllerManagerProcess),
			sum.Usage(launch.KueueProcess), sum.Usage(launch.ServerProcess)
		control := sched.CPU + kcm.CPU + kueue.CPU
		b.ReportMetric(sum.Wall.Seconds(), "wall-s")
		b.ReportMetric(control.Seconds(), "control-cpu-s")
		b.ReportMetric(sum.Wall.Seconds()/control.Seconds(), "wall/control-cpu")
		b.ReportMetric(server.CPU.Seconds()/control.Seconds(), "server/control-cpu")
		b.ReportMetric(sum.SpeedUp, "x-realtime")
		b.Logf("makespan %.0f s, wall %s (%.0fx real time); CPU: kube-scheduler %s, kube-controller-manager %s, Kueue %s, server %s; wall/(control plane CPU) %.2f; %d steps: %+v",
			sum.Makespan, sum.Wall.Round(time.Millisecond), sum.SpeedUp, sched.CPU.Round(time.Millisecond), kcm.CPU.Round(time.Millisecond),
			kueue.CPU.Round(time.Millisecond), server.CPU.Round(time.Millisecond), sum.Wall.Seconds()/control.Seconds(), sum.Steps, sum.Settle)
	}
}
