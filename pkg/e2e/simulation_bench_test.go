package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/metrics"
	"github.com/batkube/batkube/pkg/outputs"
)

// BenchmarkSimulationTrace10h runs the sparse 10-hour trace (1,000 jobs in
// 20 bursts, examples/workloads/trace_10h.json) on 16 nodes with the
// embedded engine and an unmodified kube-scheduler 1.37, as `make run`
// does. It reports the speed-up over real time, end to end (start-up of
// the server and the scheduler included) and of the simulation proper, and
// the CPU time per job of Batkube's server (whole run, and net of its
// start-up, measured by a one-job run beside it) and of the scheduler, and
// the server's CPU as a share of the scheduler's.
func BenchmarkSimulationTrace10h(b *testing.B) {
	for b.Loop() {
		base := newSimulation(b, "examples/platforms/platform_16.xml", "pkg/e2e/testdata/one_job.json")
		base.obs = nil
		baseSum := base.mustRun(5 * time.Minute)

		s := newSimulation(b, "examples/platforms/platform_16.xml", "examples/workloads/trace_10h.json")
		s.obs = nil
		sum := s.mustRun(15 * time.Minute)
		if sum.Succeeded != 1000 {
			b.Fatalf("%d of 1000 jobs succeeded", sum.Succeeded)
		}
		server, sched := sum.Usage(launch.ServerProcess), sum.Usage(launch.SchedulerProcess)
		baseServer, baseSched := baseSum.Usage(launch.ServerProcess), baseSum.Usage(launch.SchedulerProcess)
		perJob := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(sum.Jobs) }
		b.ReportMetric(sum.Wall.Seconds(), "wall-s")
		b.ReportMetric(sum.SpeedUp, "x-realtime")
		b.ReportMetric(sum.SimulationWall.Seconds(), "sim-wall-s")
		b.ReportMetric(sum.SimulationSpeedUp(), "sim-x-realtime")
		b.ReportMetric(perJob(server.CPU), "server-cpu-ms/job")
		b.ReportMetric(perJob(server.CPU-baseServer.CPU), "server-net-cpu-ms/job")
		b.ReportMetric(perJob(sched.CPU-baseSched.CPU), "sched-net-cpu-ms/job")
		b.ReportMetric(perJob(sched.CPU), "sched-cpu-ms/job")
		b.ReportMetric(100*server.CPU.Seconds()/sched.CPU.Seconds(), "server/sched-cpu-%")
		b.Logf("10-hour trace, 1,000 jobs, 16 nodes, kube-scheduler 1.37: makespan %.0f s simulated in %s end to end (%.0fx real time), "+
			"%s for the simulation proper (%.0fx); Batkube's server %s CPU (%s for a one-job run: start-up), kube-scheduler %s CPU (%s for one job); peak RSS server %d MiB",
			sum.Makespan, sum.Wall.Round(time.Millisecond), sum.SpeedUp, sum.SimulationWall.Round(time.Millisecond), sum.SimulationSpeedUp(),
			server.CPU.Round(time.Millisecond), baseServer.CPU.Round(time.Millisecond), sched.CPU.Round(time.Millisecond), baseSched.CPU.Round(time.Millisecond), server.MaxRSS>>20)
	}
}

// BenchmarkSimulationMemory runs 10,000 and then 100,000 delay jobs on 1,000
// nodes and reports the peak resident memory of Batkube's server for each:
// memory must stay flat as jobs go by (finished pods are removed, the watch
// history is bounded). A trivial first-fit scheduler in the benchmark's
// process (client-go, not kube-scheduler) stands in for kube-scheduler, whose
// own cost would dominate the run.
func BenchmarkSimulationMemory(b *testing.B) {
	for b.Loop() {
		var rss [2]int64
		for i, jobs := range []int{10_000, 100_000} {
			workload := filepath.Join(b.TempDir(), fmt.Sprintf("delay_%d.json", jobs))
			writeSteadyWorkload(b, workload, jobs)
			s := newSimulation(b, "examples/platforms/platform_1000.xml", workload)
			s.obs = nil
			s.scheduleFirstFit(b)
			sum := s.mustRun(30 * time.Minute)
			if sum.Succeeded != jobs {
				b.Fatalf("%d of %d jobs succeeded", sum.Succeeded, jobs)
			}
			server := sum.Usage(launch.ServerProcess)
			rss[i] = server.MaxRSS
			b.ReportMetric(float64(server.MaxRSS>>20), fmt.Sprintf("server-peak-MiB-%djobs", jobs))
			b.ReportMetric(float64(server.CPU)/float64(time.Microsecond)/float64(jobs), fmt.Sprintf("server-cpu-us/job-%djobs", jobs))
			b.Logf("%d delay jobs on 1,000 nodes (in-process first-fit scheduler): makespan %.0f s in %s (%.0fx), simulation proper %s; server peak RSS %d MiB, CPU %s (%.0f µs/job), %.0f garbage collections; engine peak RSS %d MiB",
				jobs, sum.Makespan, sum.Wall.Round(time.Millisecond), sum.SpeedUp, sum.SimulationWall.Round(time.Millisecond), server.MaxRSS>>20,
				server.CPU.Round(time.Millisecond), float64(server.CPU)/float64(time.Microsecond)/float64(jobs),
				serverGCs(b, s.cfg.OutDir), sum.Usage(launch.EngineProcess).MaxRSS>>20)
		}
		b.ReportMetric(float64(rss[1])/float64(rss[0]), "rss-ratio-100k/10k")
	}
}

// serverGCs is the number of the API server's garbage collections in a
// run (from its metrics at the end); -1 if they cannot be read.
func serverGCs(b testing.TB, outDir string) float64 {
	f, err := metrics.ParseFile(filepath.Join(outDir, launch.ServerMetricsFile))
	if err != nil {
		b.Logf("server metrics: %v", err)
		return -1
	}
	return f.Observations("go_gc_duration_seconds", nil)
}

// writeSteadyWorkload writes n delay jobs of one core, 100 s each, one
// every 0.05 s: some 2,000 run at once, well within 1,000 nodes × 8 cores.
func writeSteadyWorkload(b *testing.B, path string, n int) {
	type job struct {
		ID      int     `json:"id"`
		Subtime float64 `json:"subtime"`
		Res     int     `json:"res"`
		Profile string  `json:"profile"`
	}
	jobs := make([]job, n)
	for i := range jobs {
		jobs[i] = job{ID: i, Subtime: float64(i) * 0.05, Res: 1, Profile: "d100"}
	}
	doc := map[string]any{"nb_res": 1000, "jobs": jobs,
		"profiles": map[string]any{"d100": map[string]any{"type": "delay", "delay": 100, "cpu": 1, "memory": "1Gi"}}}
	writeJSON(b, path, doc)
}

// BenchmarkSimulationContended runs the committed contended workload
// (examples/workloads/contended_1500.json: 1,500 jobs on 16 nodes at about
// full load) with kube-scheduler 1.37, first with exact settling (the
// scheduler's metrics), then as before it, on the 50 ms quiet window: wall
// time against the scheduler's own CPU time, the steps and how they ended,
// and the jobs that started later than they could have.
func BenchmarkSimulationContended(b *testing.B) {
	const workload = "examples/workloads/contended_1500.json"
	for b.Loop() {
		for _, mode := range []struct{ name, settle string }{{"exact", "auto"}, {"quiet-50ms", "quiet"}} {
			s := newSimulation(b, "examples/platforms/platform_16.xml", workload)
			s.obs = nil
			s.cfg.ServerArgs = []string{"--settle=" + mode.settle}
			sum := s.mustRun(30 * time.Minute)
			if sum.Succeeded != 1500 {
				b.Fatalf("%s: %d of 1500 jobs succeeded", mode.name, sum.Succeeded)
			}
			sched := sum.Usage(launch.SchedulerProcess)
			late := lateStarts(b, filepath.Join(s.cfg.OutDir, "_jobs.csv"), abs(repoRoot(), workload), 16, 8, 32<<30)
			b.ReportMetric(sum.Wall.Seconds(), mode.name+"-wall-s")
			b.ReportMetric(sched.CPU.Seconds(), mode.name+"-sched-cpu-s")
			b.ReportMetric(sum.Wall.Seconds()/sched.CPU.Seconds(), mode.name+"-wall/sched-cpu")
			b.ReportMetric(sum.SpeedUp, mode.name+"-x-realtime")
			b.ReportMetric(float64(late), mode.name+"-late-jobs")
			b.Logf("%s: makespan %.0f s, mean waiting %.1f s, wall %s (%.0fx real time), kube-scheduler CPU %s (wall/CPU %.2f), server CPU %s; %d steps: %+v; %d jobs started later than they could have",
				mode.name, sum.Makespan, sum.MeanWaitingTime, sum.Wall.Round(time.Millisecond), sum.SpeedUp, sched.CPU.Round(time.Millisecond),
				sum.Wall.Seconds()/sched.CPU.Seconds(), sum.Usage(launch.ServerProcess).CPU.Round(time.Millisecond), sum.Steps, sum.Settle, late)
		}
	}
}

// delayJob is a job of a Batsim workload of delay profiles: its id (as
// in the workload, without the workload's name), submission time, and its
// profile's cpu and memory requests.
type delayJob struct {
	id      string
	subtime float64
	cpu     float64
	mem     int64
}

// readDelayJobs reads the jobs of a workload of delay profiles.
func readDelayJobs(t testing.TB, workload string) []delayJob {
	t.Helper()
	var w struct {
		Jobs []struct {
			ID      json.RawMessage `json:"id"`
			Subtime float64         `json:"subtime"`
			Profile string          `json:"profile"`
		} `json:"jobs"`
		Profiles map[string]struct {
			CPU    float64 `json:"cpu"`
			Memory string  `json:"memory"`
		} `json:"profiles"`
	}
	data := readFile(t, workload)
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	jobs := make([]delayJob, len(w.Jobs))
	for i, j := range w.Jobs {
		p := w.Profiles[j.Profile]
		q := resource.MustParse(p.Memory)
		jobs[i] = delayJob{id: strings.Trim(string(j.ID), `"`), subtime: j.Subtime, cpu: p.CPU, mem: q.Value()}
	}
	return jobs
}

// lateStarts counts the single-host jobs of a run that waited at an
// instant (a submission or an end) when a node had room for their cpu and
// memory requests (from the workload's delay profiles), on n identical
// nodes of the given cores and memory bytes.
func lateStarts(t testing.TB, jobsCSV, workload string, n int, cores float64, memory int64) int {
	t.Helper()
	type req struct {
		cpu float64
		mem int64
	}
	reqs := map[string]req{}
	for _, j := range readDelayJobs(t, workload) {
		reqs[j.id] = req{j.cpu, j.mem}
	}
	rows, err := outputs.ReadCSV(jobsCSV)
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		r                     req
		submit, start, finish float64
		node                  int
	}
	var runs []run
	var instants []float64
	for _, row := range rows {
		submit := num(t, row["submission_time"])
		instants = append(instants, submit)
		if row["final_state"] == "REJECTED" {
			continue
		}
		node, _ := strconv.Atoi(row["allocated_resources"])
		r := run{r: reqs[row["job_id"]], submit: submit, start: num(t, row["starting_time"]), finish: num(t, row["finish_time"]), node: node}
		runs = append(runs, r)
		instants = append(instants, r.finish)
	}
	slices.Sort(instants)
	const eps = 1e-6
	late := map[int]bool{}
	for i, at := range instants {
		if i > 0 && at-instants[i-1] < eps {
			continue
		}
		cpu, mem := make([]float64, n), make([]int64, n)
		for _, r := range runs {
			if r.start <= at+eps && r.finish > at+eps {
				cpu[r.node] += r.r.cpu
				mem[r.node] += r.r.mem
			}
		}
		for k, r := range runs {
			if late[k] || !(r.submit <= at+eps && r.start > at+eps) {
				continue
			}
			for node := range n {
				if cpu[node]+r.r.cpu <= cores+eps && mem[node]+r.r.mem <= memory {
					late[k] = true
					break
				}
			}
		}
	}
	return len(late)
}

// lateStartsByPod is lateStarts for jobs of several pods (whose pods may
// share a node), from _pods.csv: how many jobs waited at an instant (a
// submission or an end) when the n identical nodes had room, by the
// requests of their profiles, for as many pods of the job's size as it has.
func lateStartsByPod(t testing.TB, podsCSV, workload string, n int, cores float64, memory int64) int {
	t.Helper()
	type job struct {
		cpu                   float64
		mem                   int64
		submit, start, finish float64
		nodes                 []string
	}
	jobs := map[string]*job{}
	var instants []float64
	for _, j := range readDelayJobs(t, workload) {
		jobs["w0!"+j.id] = &job{cpu: j.cpu, mem: j.mem, submit: j.subtime, start: math.Inf(1)}
		instants = append(instants, j.subtime)
	}
	rows, err := outputs.ReadCSV(podsCSV)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		j := jobs[row["job_id"]]
		if j == nil || row["started"] == "" {
			continue
		}
		j.start, j.finish = num(t, row["started"]), num(t, row["finished"])
		j.nodes = append(j.nodes, row["node"])
		instants = append(instants, j.finish)
	}
	slices.Sort(instants)
	const eps = 1e-6
	late := map[*job]bool{}
	for i, at := range instants {
		if i > 0 && at-instants[i-1] < eps {
			continue
		}
		cpu, mem := map[string]float64{}, map[string]int64{}
		for _, j := range jobs {
			if j.start <= at+eps && j.finish > at+eps {
				for _, node := range j.nodes {
					cpu[node] += j.cpu
					mem[node] += j.mem
				}
			}
		}
		for _, j := range jobs {
			if late[j] || !(j.submit <= at+eps && j.start > at+eps) || len(j.nodes) == 0 {
				continue
			}
			room := 0
			for k := range n {
				node := fmt.Sprintf("node%02d", k)
				free := int(math.Floor((cores - cpu[node] + eps) / j.cpu))
				if j.mem > 0 {
					free = min(free, int((memory-mem[node])/j.mem))
				}
				room += max(free, 0)
			}
			if room >= len(j.nodes) {
				late[j] = true
			}
		}
	}
	return len(late)
}

// BenchmarkSimulationMixedGangs: the mixed-gang workload (gangs of 2 to 16
// pods of 1 to 3 cores and single-host jobs on 16 nodes of 8 cores, ~115 %
// load; examples/workloads/gangs_mixed_120.json) with kube-scheduler 1.37
// and --gangs, beside the contended one: simulated/wall, wall over
// kube-scheduler's CPU, the steps and how each ended, the pod groups
// released, and the jobs that started later than they could have (pod by
// pod).
func BenchmarkSimulationMixedGangs(b *testing.B) {
	const workload = "examples/workloads/gangs_mixed_120.json"
	for b.Loop() {
		s := newSimulation(b, "examples/platforms/platform_16.xml", workload)
		s.obs = nil
		s.cfg.Gangs = true
		sum := s.mustRun(30 * time.Minute)
		if sum.Succeeded != 120 {
			b.Fatalf("%d of 120 jobs succeeded", sum.Succeeded)
		}
		sched := sum.Usage(launch.SchedulerProcess)
		server := sum.Usage(launch.ServerProcess)
		late := lateStartsByPod(b, filepath.Join(s.cfg.OutDir, "_pods.csv"), abs(repoRoot(), workload), 16, 8, 32<<30)
		b.ReportMetric(sum.Wall.Seconds(), "wall-s")
		b.ReportMetric(sched.CPU.Seconds(), "sched-cpu-s")
		b.ReportMetric(sum.Wall.Seconds()/sched.CPU.Seconds(), "wall/sched-cpu")
		b.ReportMetric(server.CPU.Seconds()/sched.CPU.Seconds(), "server/sched-cpu")
		b.ReportMetric(sum.SpeedUp, "x-realtime")
		b.ReportMetric(float64(sum.Settle.Releases), "releases")
		b.ReportMetric(float64(late), "late-jobs")
		b.Logf("makespan %.0f s, mean waiting %.1f s, wall %s (%.0fx real time), kube-scheduler CPU %s (wall/CPU %.2f), server CPU %s; %d steps: %+v; %d jobs started later than they could have",
			sum.Makespan, sum.MeanWaitingTime, sum.Wall.Round(time.Millisecond), sum.SpeedUp, sched.CPU.Round(time.Millisecond),
			sum.Wall.Seconds()/sched.CPU.Seconds(), server.CPU.Round(time.Millisecond), sum.Steps, sum.Settle, late)
	}
}
