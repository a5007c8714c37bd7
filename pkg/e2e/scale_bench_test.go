package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/launch"
)

// BenchmarkScale5000Nodes runs 100,000 jobs on 5,000 nodes with the
// embedded engine and an unmodified kube-scheduler 1.37, settled exactly:
// a burst of 100 one-core jobs every 30 simulated seconds (60 to 600 s
// long, so that some 1,000 run at once). It reports the wall time, each
// process's CPU time and peak RSS, and the server's CPU against the
// scheduler's. It takes long (see `make bench-scale`), so `make bench`
// leaves it out.
func BenchmarkScale5000Nodes(b *testing.B) {
	const nodes, jobs = 5000, 100_000
	for b.Loop() {
		dir := b.TempDir()
		platform := filepath.Join(dir, "platform_5000.xml")
		writePlatform(b, platform, nodes)
		workload := filepath.Join(dir, "bursts_100000.json")
		writeBurstWorkload(b, workload, jobs)
		s := newSimulation(b, platform, workload)
		s.cfg.BinDir = batkubeBinariesWithoutRace(b)
		s.obs = nil
		sum := s.mustRun(3 * time.Hour)
		if sum.Succeeded != jobs {
			b.Fatalf("%d of %d jobs succeeded", sum.Succeeded, jobs)
		}
		server, sched, engine := sum.Usage(launch.ServerProcess), sum.Usage(launch.SchedulerProcess), sum.Usage(launch.EngineProcess)
		b.ReportMetric(sum.Wall.Seconds(), "wall-s")
		b.ReportMetric(server.CPU.Seconds(), "server-cpu-s")
		b.ReportMetric(sched.CPU.Seconds(), "sched-cpu-s")
		b.ReportMetric(engine.CPU.Seconds(), "engine-cpu-s")
		b.ReportMetric(100*server.CPU.Seconds()/sched.CPU.Seconds(), "server/sched-cpu-%")
		b.ReportMetric(float64(server.MaxRSS>>20), "server-peak-MiB")
		b.ReportMetric(float64(sched.MaxRSS>>20), "sched-peak-MiB")
		b.Logf("%d jobs on %d nodes, kube-scheduler 1.37: makespan %.0f s simulated in %s (%.0fx real time), %d steps (%+v); "+
			"CPU: server %s (%.2f ms/job), kube-scheduler %s (%.2f ms/job), engine %s; peak RSS: server %d MiB, kube-scheduler %d MiB, engine %d MiB",
			jobs, nodes, sum.Makespan, sum.Wall.Round(time.Second), sum.SpeedUp, sum.Steps, sum.Settle,
			server.CPU.Round(time.Millisecond), float64(server.CPU)/float64(time.Millisecond)/jobs,
			sched.CPU.Round(time.Millisecond), float64(sched.CPU)/float64(time.Millisecond)/jobs, engine.CPU.Round(time.Millisecond),
			server.MaxRSS>>20, sched.MaxRSS>>20, engine.MaxRSS>>20)
	}
}

// writePlatform writes a SimGrid platform of n homogeneous nodes of 8 cores
// and 32 GiB, as examples/platforms/platform_1000.xml.
func writePlatform(b *testing.B, path string, n int) {
	var sb strings.Builder
	sb.WriteString("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n  <zone id=\"cluster\" routing=\"Full\">\n")
	sb.WriteString("    <host id=\"master_host\" speed=\"1Gf\"/>\n")
	for i := range n {
		fmt.Fprintf(&sb, "    <host id=\"node%04d\" speed=\"1Gf\" core=\"8\"><prop id=\"core\" value=\"8\"/><prop id=\"memory\" value=\"32Gi\"/></host>\n", i)
	}
	sb.WriteString("  </zone>\n</platform>\n")
	writeFile(b, path, []byte(sb.String()))
}

// writeBurstWorkload writes n one-core delay jobs, 100 every 30 s, of 60,
// 120, 300 or 600 s in turn: submissions and ends fall on the 30 s grid.
func writeBurstWorkload(b *testing.B, path string, n int) {
	type job struct {
		ID      int     `json:"id"`
		Subtime float64 `json:"subtime"`
		Res     int     `json:"res"`
		Profile string  `json:"profile"`
	}
	delays := []int{60, 120, 300, 600}
	jobs := make([]job, n)
	profiles := map[string]any{}
	for _, d := range delays {
		profiles[fmt.Sprintf("d%d", d)] = map[string]any{"type": "delay", "delay": d, "cpu": 1, "memory": "1Gi"}
	}
	for i := range jobs {
		jobs[i] = job{ID: i, Subtime: float64(i/100) * 30, Res: 1, Profile: fmt.Sprintf("d%d", delays[i%len(delays)])}
	}
	writeJSON(b, path, map[string]any{"nb_res": 5000, "jobs": jobs, "profiles": profiles})
}
