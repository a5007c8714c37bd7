package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/launch"
)

// A scaleRun is one scale benchmark: bursts of one-core jobs (60, 120, 300
// or 600 s long in turn) every period on nodes of 8 cores and 32 GiB; 100
// jobs a burst, and every tenth burst spike jobs if spike is set.
type scaleRun struct {
	name   string
	nodes  int
	jobs   int
	period float64 // seconds between two bursts
	spike  int
}

// scaleRuns: sparse at two sizes (some 1,000 jobs run at once, a fortieth
// or an eightieth of the cores), and contended: 1,700 jobs every 60 s (nine
// bursts of 100 then a spike of 800, one every 6 s) ask on average 96 % of
// the 8,000 cores (1,700 × 270 s mean / 60 s), and each spike finds them
// nearly all taken: hundreds of pods pending at once while kube-scheduler
// places them. Every duration is a multiple of the period, so that jobs
// start and end on its grid even when they wait. Measured (2026-11-29): no
// job waited past its submission instant, because every duration is also a
// multiple of the spikes' 60 s, so that a spike's cores are freed by the
// jobs of earlier spikes ending at that very instant; spikes every 7th burst
// (42 s) would make jobs wait (not run yet). kube-scheduler tries every waiting pod
// again at each end (its preemption dry run on 1,000 full nodes takes ~20 ms
// a pod here): with ends off the grid (bursts every 6.6 s), a spike of 1,000
// left ~180 pods waiting through one step per end, ~4.5 s of wall time each,
// and the run would have taken days; smooth bursts asking 99 % took every
// core at times, but no job waited.
var scaleRuns = []scaleRun{
	{name: "5000-nodes-100000-jobs", nodes: 5000, jobs: 100_000, period: 30},
	{name: "10000-nodes-1000000-jobs", nodes: 10_000, jobs: 1_000_000, period: 30},
	{name: "1000-nodes-100000-jobs-contended", nodes: 1000, jobs: 100_000, period: 6, spike: 800},
}

// BenchmarkScale runs each scaleRun with the embedded engine and an
// unmodified kube-scheduler 1.37, settled exactly, and checks job by job
// that none started later than it could have (checkNoDelayedStart). It
// reports the wall time, each process's CPU time and peak RSS, and the
// server's CPU against the scheduler's. They take long (`make bench-scale`,
// `make bench-million`, `make bench-contended`), so `make bench` leaves
// them out.
func BenchmarkScale(b *testing.B) {
	for _, run := range scaleRuns {
		b.Run(run.name, func(b *testing.B) {
			for b.Loop() {
				benchmarkScale(b, run)
			}
		})
	}
}

func benchmarkScale(b *testing.B, run scaleRun) {
	dir := b.TempDir()
	platform := filepath.Join(dir, fmt.Sprintf("platform_%d.xml", run.nodes))
	writePlatform(b, platform, run.nodes)
	workload := filepath.Join(dir, fmt.Sprintf("bursts_%d.json", run.jobs))
	writeBurstWorkload(b, workload, run, run.nodes)
	s := newSimulation(b, platform, workload)
	s.cfg.BinDir = batkubeBinariesWithoutRace(b)
	s.obs = nil
	sum := s.mustRun(6 * time.Hour)
	if sum.Succeeded != run.jobs {
		b.Fatalf("%d of %d jobs succeeded", sum.Succeeded, run.jobs)
	}
	waited := checkNoDelayedStart(b, s.jobs(), 8*run.nodes)
	server, sched, engine := sum.Usage(launch.ServerProcess), sum.Usage(launch.SchedulerProcess), sum.Usage(launch.EngineProcess)
	b.ReportMetric(sum.Wall.Seconds(), "wall-s")
	b.ReportMetric(server.CPU.Seconds(), "server-cpu-s")
	b.ReportMetric(sched.CPU.Seconds(), "sched-cpu-s")
	b.ReportMetric(engine.CPU.Seconds(), "engine-cpu-s")
	b.ReportMetric(100*server.CPU.Seconds()/sched.CPU.Seconds(), "server/sched-cpu-%")
	b.ReportMetric(sum.Wall.Seconds()/sched.CPU.Seconds(), "wall/sched-cpu")
	b.ReportMetric(float64(server.MaxRSS>>20), "server-peak-MiB")
	b.ReportMetric(float64(sched.MaxRSS>>20), "sched-peak-MiB")
	b.ReportMetric(float64(engine.MaxRSS>>20), "engine-peak-MiB")
	b.ReportMetric(float64(waited), "jobs-waited")
	b.Logf("%d jobs on %d nodes, kube-scheduler 1.37: makespan %.0f s simulated in %s (%.0fx real time), %d steps (%+v); "+
		"%d jobs waited, none longer than the cores were all busy; "+
		"CPU: server %s (%.2f ms/job), kube-scheduler %s (%.2f ms/job), engine %s; peak RSS: server %d MiB, kube-scheduler %d MiB, engine %d MiB",
		run.jobs, run.nodes, sum.Makespan, sum.Wall.Round(time.Second), sum.SpeedUp, sum.Steps, sum.Settle, waited,
		server.CPU.Round(time.Millisecond), float64(server.CPU)/float64(time.Millisecond)/float64(run.jobs),
		sched.CPU.Round(time.Millisecond), float64(sched.CPU)/float64(time.Millisecond)/float64(run.jobs), engine.CPU.Round(time.Millisecond),
		server.MaxRSS>>20, sched.MaxRSS>>20, engine.MaxRSS>>20)
}

// checkNoDelayedStart checks, job by job, that no job of one core waited
// while a core was free: at every instant of its wait (a submission or an
// end, once every job placed at that instant is counted) all cores were
// taken. A job holds its core from its placement (its pod bound) until its
// end was heard. It returns how many jobs waited.
func checkNoDelayedStart(tb testing.TB, jobs map[string]jobRow, cores int) (waited int) {
	tb.Helper()
	placed, heard := make([]float64, 0, len(jobs)), make([]float64, 0, len(jobs))
	instants := make([]float64, 0, 2*len(jobs))
	for _, j := range jobs {
		placed, heard = append(placed, j.placed), append(heard, j.heard)
		instants = append(instants, j.submit, j.heard)
	}
	slices.Sort(placed)
	slices.Sort(heard)
	slices.Sort(instants)
	instants = slices.Compact(instants)
	// notFull[i] counts the instants before instants[i] with a core free.
	notFull := make([]int, len(instants)+1)
	for i, t := range instants {
		busy := upTo(placed, t) - upTo(heard, t)
		notFull[i+1] = notFull[i]
		if busy < cores {
			notFull[i+1]++
		}
	}
	const eps = 1e-6
	bad := 0
	for _, j := range jobs {
		if j.placed <= j.submit+eps {
			continue
		}
		waited++
		from, to := sort.SearchFloat64s(instants, j.submit-eps), sort.SearchFloat64s(instants, j.placed-eps)
		if free := notFull[to] - notFull[from]; free > 0 {
			if bad++; bad <= 5 {
				tb.Errorf("job %s submitted at %g, placed at %g: a core was free at %d instants of its wait", j.id, j.submit, j.placed, free)
			}
		}
	}
	if bad > 5 {
		tb.Errorf("... %d jobs in all started later than they could have", bad)
	}
	return waited
}

// upTo counts the values of the sorted xs that are at most t.
func upTo(xs []float64, t float64) int {
	return sort.Search(len(xs), func(i int) bool { return xs[i] > t+1e-9 })
}

// writePlatform writes a SimGrid platform of n homogeneous nodes of 8 cores
// and 32 GiB, as examples/platforms/platform_1000.xml.
func writePlatform(b *testing.B, path string, n int) {
	var sb strings.Builder
	sb.WriteString("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n  <zone id=\"cluster\" routing=\"Full\">\n")
	sb.WriteString("    <host id=\"master_host\" speed=\"1Gf\"/>\n")
	for i := range n {
		fmt.Fprintf(&sb, "    <host id=\"node%05d\" speed=\"1Gf\" core=\"8\"><prop id=\"core\" value=\"8\"/><prop id=\"memory\" value=\"32Gi\"/></host>\n", i)
	}
	sb.WriteString("  </zone>\n</platform>\n")
	writeFile(b, path, []byte(sb.String()))
}

// writeBurstWorkload writes run's jobs for a platform of nodes nodes.
func writeBurstWorkload(b *testing.B, path string, run scaleRun, nodes int) {
	type job struct {
		ID      int     `json:"id"`
		Subtime float64 `json:"subtime"`
		Res     int     `json:"res"`
		Profile string  `json:"profile"`
	}
	delays := []int{60, 120, 300, 600}
	jobs := make([]job, run.jobs)
	profiles := map[string]any{}
	for _, d := range delays {
		profiles[fmt.Sprintf("d%d", d)] = map[string]any{"type": "delay", "delay": d, "cpu": 1, "memory": "1Gi"}
	}
	size := func(burst int) int {
		if run.spike > 0 && burst%10 == 9 {
			return run.spike
		}
		return 100
	}
	burst, inBurst := 0, 0
	for i := range jobs {
		if inBurst == size(burst) {
			burst, inBurst = burst+1, 0
		}
		inBurst++
		jobs[i] = job{ID: i, Subtime: float64(burst) * run.period, Res: 1, Profile: fmt.Sprintf("d%d", delays[i%len(delays)])}
	}
	writeJSON(b, path, map[string]any{"nb_res": nodes, "jobs": jobs, "profiles": profiles})
}

// TestCheckNoDelayedStartFindsADelayedJob: on two cores, a job that waits
// while a core is free is reported; one that waits while both are taken is
// counted as waiting, and not reported.
func TestCheckNoDelayedStartFindsADelayedJob(t *testing.T) {
	row := func(id string, submit, placed, end float64) jobRow {
		return jobRow{id: id, submit: submit, start: placed, placed: placed, finish: end, heard: end}
	}
	fine := map[string]jobRow{"a": row("a", 0, 0, 10), "b": row("b", 0, 0, 20), "c": row("c", 1, 10, 15)}
	if waited := checkNoDelayedStart(t, fine, 2); waited != 1 {
		t.Errorf("%d jobs waited, want 1 (c, until a ended)", waited)
	}
	delayed := map[string]jobRow{"a": row("a", 0, 0, 10), "b": row("b", 0, 0, 5), "c": row("c", 1, 10, 15)}
	var rec recordingTB
	checkNoDelayedStart(&rec, delayed, 2)
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "job c") {
		t.Errorf("c waited from 1 to 10 while b's core was free from 5: got errors %q, want one about c", rec.errors)
	}
}

// recordingTB records the errors a check reports.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
