package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/outputs"
)

// BenchmarkSimulationKarpenterDay runs Karpenter's day
// (examples/karpenter/daily.json on daily-platform.xml: 24 hours of
// one-pod jobs following a daily cycle, nodes launched onto a pool of 14
// hosts, Ready 45 s after their creation) with the real kube-scheduler,
// kube-controller-manager and Karpenter v1.15.0, under nodepool.yaml's
// policy (empty or underused nodes consolidated 10 s after their last
// change). It reports the simulated and wall times, the control plane's
// CPU (the three processes) and the server's share of it, the steps and
// how they ended, and what the nodes cost. Issue 35's goal: the day in
// under 5 minutes, every step exact, wall ≤ 1.5 × the control plane's CPU.
func BenchmarkSimulationKarpenterDay(b *testing.B) {
	for b.Loop() {
		s := newSimulation(b, "examples/karpenter/daily-platform.xml", "examples/karpenter/daily.json")
		s.obs = nil
		s.cfg.Karpenter = true
		s.cfg.ProvisioningDelay = 45 * time.Second
		s.cfg.Objects = []string{abs(repoRoot(), "examples/karpenter/nodepool.yaml")}
		sum := s.mustRun(time.Hour)
		if sum.Succeeded+sum.Killed != sum.Jobs {
			b.Fatalf("%d jobs, %d succeeded and %d killed: some were lost or failed", sum.Jobs, sum.Succeeded, sum.Killed)
		}
		nodes, err := outputs.ReadNodes(filepath.Join(s.cfg.OutDir, "_nodes.csv"))
		if err != nil {
			b.Fatal(err)
		}
		ns := outputs.SummariseNodes(nodes)
		if ns.Unmapped > 0 {
			b.Fatalf("%d nodes mapped onto no pool host: the pool is too small for the NodePool", ns.Unmapped)
		}
		sched, kcm, karpenter, server := sum.Usage(launch.SchedulerProcess), sum.Usage(launch.ControllerManagerProcess),
			sum.Usage(launch.KarpenterProcess), sum.Usage(launch.ServerProcess)
		control := sched.CPU + kcm.CPU + karpenter.CPU
		b.ReportMetric(float64(sum.Jobs), "jobs")
		b.ReportMetric(sum.Makespan, "simulated-s")
		b.ReportMetric(sum.Wall.Seconds(), "wall-s")
		b.ReportMetric(control.Seconds(), "control-cpu-s")
		b.ReportMetric(sum.Wall.Seconds()/control.Seconds(), "wall/control-cpu")
		b.ReportMetric(server.CPU.Seconds()/control.Seconds(), "server/control-cpu")
		b.ReportMetric(float64(sum.Settle.Steps()), "steps")
		b.ReportMetric(float64(sum.Settle.Inexact()), "inexact-steps")
		b.ReportMetric(float64(ns.Launched), "nodes")
		b.ReportMetric(ns.NodeHours, "node-hours")
		b.Logf("%d jobs (%d succeeded, %d killed), makespan %.0f s: wall %s; CPU: kube-scheduler %s, kube-controller-manager %s, Karpenter %s, server %s (%.0f %% of the control plane's); wall/(control plane CPU) %.2f; %d steps: %+v; nodes: %+v",
			sum.Jobs, sum.Succeeded, sum.Killed, sum.Makespan, sum.Wall.Round(time.Millisecond), sched.CPU.Round(time.Millisecond), kcm.CPU.Round(time.Millisecond),
			karpenter.CPU.Round(time.Millisecond), server.CPU.Round(time.Millisecond), 100*server.CPU.Seconds()/control.Seconds(), sum.Wall.Seconds()/control.Seconds(),
			sum.Settle.Steps(), sum.Settle, ns)
	}
}
