package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/openb"
)

// BenchmarkOpenB runs the Alibaba GPU trace at full size (the default pod
// list on its 1,523 nodes, ../shared/data/openb), converted by
// bin/batkube-openb as docs/gpu.md says:
//
//   - replay-149-days: the trace with its own times and run times (7,255
//     pods over 149 days; --no-priority, as the paper's experiment: the
//     pods' qos is no PriorityClass) under the bundled kube-scheduler 1.37
//     with kube-controller-manager (the goal: under 10 minutes);
//   - arrivals-POLICY: the FGD paper's arrival-only experiment (seed 42,
//     130 %, ranked nodes, --end-at the last arrival) under
//     bin/gpu-scheduler with each of the paper's six policies, its
//     allocation at 100 % and 130 % arrived beside the paper's mean.
//
// Every run must end with every step exact. It reports the wall time and
// each process's CPU. Hours in all: `make bench-openb` (or one with
// -bench 'OpenB/arrivals-fgd'); `make bench` leaves it out.
func BenchmarkOpenB(b *testing.B) {
	nodes := sharedData(b, "openb/openb_node_list_all_node.csv")
	pods := sharedData(b, "openb/openb_pod_list_default.csv")
	paper := sharedData(b, "openb/fgd-paper-allocation-default.csv")
	b.Run("replay-149-days", func(b *testing.B) {
		for b.Loop() {
			in := convertWithOpenB(b, "--no-priority", nodes, pods)
			s := newSimulation(b, filepath.Join(in, "platform.xml"), filepath.Join(in, "workload.json"))
			s.cfg.BinDir = batkubeBinariesWithoutRace(b)
			s.cfg.Objects = []string{filepath.Join(in, "objects.yaml")}
			s.cfg.ControllerManager = true
			s.obs = nil
			sum := s.mustRun(2 * time.Hour)
			if sum.Jobs == 0 || sum.Succeeded != sum.Jobs {
				b.Fatalf("%d of %d pods succeeded", sum.Succeeded, sum.Jobs)
			}
			reportOpenBRun(b, sum)
		}
	})
	for _, name := range gpuPolicies {
		b.Run("arrivals-"+name, func(b *testing.B) {
			for b.Loop() {
				in := convertWithOpenB(b, "--no-priority --arrivals 130 --seed 42", nodes, pods)
				arrivals := filepath.Join(in, openb.ArrivalsFile)
				end := lastArrival(b, arrivals) + 1 // one --interval (1 s) after it, as batkube-openb says
				s := newSimulation(b, filepath.Join(in, "platform.xml"), filepath.Join(in, "workload.json"))
				s.cfg.BinDir = batkubeBinariesWithoutRace(b)
				s.cfg.Objects = []string{filepath.Join(in, "objects.yaml")}
				s.cfg.ControllerManager = true
				s.cfg.EndAt = time.Duration(end * float64(time.Second))
				s.cfg.KubeScheduler = binary(b, "gpu-scheduler")
				s.cfg.SchedulerConfig = gpuPolicyConfig(b, name, filepath.Join(in, openb.TargetWorkloadFile))
				s.obs = nil
				sum := s.mustRun(2 * time.Hour)
				curve, err := openb.AllocationCurve(arrivals, sum.OutDir, 10)
				if err != nil {
					b.Fatal(err)
				}
				reportOpenBRun(b, sum)
				means := paperMeans(b, paper, name)
				for _, p := range curve {
					if p.ArrivedPercent == 100 || p.ArrivedPercent == 130 {
						b.ReportMetric(p.AllocatedPercent, fmt.Sprintf("alloc%%@%g", p.ArrivedPercent))
						b.ReportMetric(means[p.ArrivedPercent], fmt.Sprintf("paper%%@%g", p.ArrivedPercent))
					}
				}
			}
		})
	}
}

// reportOpenBRun checks that every step was exact and reports the run's
// wall time, steps and each process's CPU.
func reportOpenBRun(b *testing.B, sum launch.Summary) {
	b.Helper()
	wantEveryStepExact(b, sum)
	server, sched, cm, engine := sum.Usage(launch.ServerProcess), sum.Usage(launch.SchedulerProcess),
		sum.Usage(launch.ControllerManagerProcess), sum.Usage(launch.EngineProcess)
	b.ReportMetric(sum.Wall.Seconds(), "wall-s")
	b.ReportMetric(float64(sum.Settle.Steps()), "steps")
	b.ReportMetric(sched.CPU.Seconds(), "sched-cpu-s")
	b.ReportMetric(server.CPU.Seconds(), "server-cpu-s")
	b.ReportMetric(cm.CPU.Seconds(), "kcm-cpu-s")
	b.ReportMetric(engine.CPU.Seconds(), "engine-cpu-s")
	b.ReportMetric(100*server.CPU.Seconds()/sched.CPU.Seconds(), "server/sched-cpu-%")
	b.Logf("%d pods (%d succeeded, %d rejected, %d killed), makespan %.0f s simulated in %s; settling: %s; "+
		"CPU: kube-scheduler %s, server %s, kube-controller-manager %s, engine %s",
		sum.Jobs, sum.Succeeded, sum.Rejected, sum.Killed, sum.Makespan, sum.Wall.Round(time.Second), sum.Settle.Verdict(),
		sched.CPU.Round(time.Second), server.CPU.Round(time.Second), cm.CPU.Round(time.Second), engine.CPU.Round(time.Second))
}
