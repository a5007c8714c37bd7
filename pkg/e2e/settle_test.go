package e2e

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/batkube/batkube/pkg/launch"
)

// contendedWorkload writes the contended workload of these tests: 200 jobs
// on platform_4 (32 cores) at about full load, so that jobs queue.
func contendedWorkload(t testing.TB) string {
	path := filepath.Join(t.TempDir(), "contended_200.json")
	writeContendedWorkload(t, path, 200, 0.42, 1)
	return path
}

// TestKubeSchedulerSettlesExactly runs a contended workload with the
// bundled kube-scheduler 1.37 and checks that every step ended when the
// scheduler was known idle, so that no job waited at an instant when a
// node had room for it — on a quiet machine, with every core busy with a
// CPU hog, with a quiet window (the old fallback) of 1 ms that would
// end steps early if it were used, and with the server ending every watch
// after 300 ms.
func TestKubeSchedulerSettlesExactly(t *testing.T) {
	settleQuiet1ms := machineCondition{name: "settle-quiet-1ms", args: []string{"--settle-quiet=1ms"}}
	runUnder(t, []machineCondition{quietMachine, cpuHogged, settleQuiet1ms, watchesEndEvery300ms},
		func(t *testing.T) *simulation { return newSimulation(t, platform4, contendedWorkload(t)) },
		func(t *testing.T, s *simulation, sum launch.Summary) { checkExactRun(t, s, sum, 200, "kube-scheduler") })
}

// TestKubeScheduler118SettlesExactly: the same exactness with an unmodified
// kube-scheduler 1.18.19, which exposes no count of the events it has
// handled: the server proves it otherwise (its watches flushed, the
// scheduler's process quiescent). 1.18 has no pop-from-backoff: it retries
// pods after a real-time back-off (1 to 10 s by default), which an exact
// step must wait out; the test sets it to 1 s (podMaxBackoffSeconds).
func TestKubeScheduler118SettlesExactly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "contended_40.json")
	writeContendedWorkload(t, path, 40, 0.8, 2)
	config := filepath.Join(dir, "kube-scheduler-1.18.yaml")
	writeFile(t, config, []byte(`apiVersion: kubescheduler.config.k8s.io/v1alpha2
kind: KubeSchedulerConfiguration
clientConnection: {qps: 5000, burst: 5000}
leaderElection: {leaderElect: true}
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 1
`))
	s := newSimulation(t, platform4, path)
	s.cfg.KubeScheduler = binary(t, "kube-scheduler-1.18")
	s.cfg.SchedulerConfig = config
	start := time.Now()
	sum := s.mustRun(20 * time.Minute)
	checkExactRun(t, s, sum, 40, "kube-scheduler")
	t.Logf("kube-scheduler 1.18: %d jobs, %d steps in %s (makespan %.0f s simulated)", sum.Jobs, sum.Steps, time.Since(start).Round(time.Second), sum.Makespan)
}

// checkExactRun checks a contended run: every job completed, some waited,
// none waited while it fitted, no node over-committed, and every step
// ended knowing the scheduler was done.
func checkExactRun(t *testing.T, s *simulation, sum launch.Summary, n int, policy string) {
	t.Helper()
	jobs := s.jobs()
	if sum.Succeeded != n {
		t.Errorf("%d of %d jobs succeeded", sum.Succeeded, n)
	}
	waited := checkExact(t, s, jobs)
	if waited < n/10 {
		t.Errorf("only %d of %d jobs waited: the workload is meant to contend for the nodes", waited, n)
	}
	checkNoOvercommit(t, s, jobs)
	if sum.Settle.Policy != policy || sum.Settle.Inexact() > 0 || sum.Settle.Idle == 0 {
		t.Errorf("settling: %+v, want every step exact with the %s policy", sum.Settle, policy)
	}
	t.Logf("%d jobs, %d waited (mean %.1f s), %d steps: %+v; wall %s, scheduler CPU %s",
		sum.Jobs, waited, sum.MeanWaitingTime, sum.Steps, sum.Settle, sum.Wall.Round(time.Millisecond),
		sum.Usage(launch.SchedulerProcess).CPU.Round(time.Millisecond))
}

// TestDeterministicSchedulerGivesIdenticalOutputs: the FIFO example, which
// decides on whole states and signals when it is idle, gives byte-identical
// _jobs.csv in three runs of a contended workload, one of them with every
// core busy with a CPU hog.
func TestDeterministicSchedulerGivesIdenticalOutputs(t *testing.T) {
	workload := contendedWorkload(t)
	var first []byte
	newFIFO := func(t *testing.T) *simulation {
		s := newSimulation(t, platform4, workload)
		s.cfg.SchedulerCommand = filepath.Join(s.cfg.BinDir, "fifo") + " --kubeconfig {kubeconfig}"
		s.cfg.ServerArgs = []string{"--settle=signal"}
		return s
	}
	runs := []machineCondition{{name: "run1-quiet"}, {name: "run2-quiet"}, {name: "run3-cpu-hog", hog: true}}
	runUnder(t, runs, newFIFO, func(t *testing.T, s *simulation, sum launch.Summary) {
		checkExactRun(t, s, sum, 200, "signal")
		data := readFile(t, filepath.Join(s.cfg.OutDir, "_jobs.csv"))
		if first == nil {
			first = data
			return
		}
		if !bytes.Equal(data, first) {
			t.Errorf("_jobs.csv differs from the first run's (%d and %d bytes)", len(data), len(first))
		}
	})
}

// TestKubeletRefusesOvercommittedPods: a scheduler that binds every pod to
// the first node, room or not: the node's kubelet admits what fits and
// fails the others as a real kubelet does (Failed, OutOfcpu), their jobs
// are rejected, and no node runs more than it has.
func TestKubeletRefusesOvercommittedPods(t *testing.T) {
	path := filepath.Join(t.TempDir(), "overcommit.json")
	jobs := make([]map[string]any, 6)
	for i := range jobs {
		jobs[i] = map[string]any{"id": i, "subtime": 0, "res": 1, "profile": "c4"}
	}
	writeJSON(t, path, map[string]any{"nb_res": 4, "jobs": jobs,
		"profiles": map[string]any{"c4": map[string]any{"type": "delay", "delay": 10, "cpu": 4, "memory": "1Gi"}}})
	s := newSimulation(t, platform4, path)
	s.cfg.SchedulerCommand = filepath.Join(s.cfg.BinDir, "fifo") + " --kubeconfig {kubeconfig} --ignore-capacity"
	s.cfg.ServerArgs = []string{"--settle=signal"}
	sum := s.mustRun(5 * time.Minute)
	got := s.jobs()
	states := map[string]int{}
	for _, j := range got {
		states[j.state]++
	}
	// node0 has 8 cores: two 4-core pods fit, the four others do not.
	if states["COMPLETED_SUCCESSFULLY"] != 2 || states["REJECTED"] != 4 || sum.AdmissionRejected != 4 {
		t.Errorf("final states %v, %d refused by admission; want 2 completed and 4 rejected", states, sum.AdmissionRejected)
	}
	refused := 0
	for id, j := range got {
		if j.state != "REJECTED" {
			continue
		}
		pods := s.obs.podsOf(id)
		if len(pods) != 1 || pods[0].final == nil {
			t.Errorf("job %s: %d pods seen", id, len(pods))
			continue
		}
		p := pods[0].final
		if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "OutOfcpu" ||
			!strings.Contains(p.Status.Message, "Pod was rejected: Node didn't have enough resource: cpu, requested: 4000, used: 8000, capacity: 8000") {
			t.Errorf("job %s: pod %s phase %s reason %q message %q, want Failed OutOfcpu as the kubelet says it", id, p.Name, p.Status.Phase, p.Status.Reason, p.Status.Message)
		}
		refused++
	}
	if refused != 4 {
		t.Errorf("%d refused pods seen, want 4", refused)
	}
	checkNoOvercommit(t, s, got)
}

// TestHundredThousandJobsAtOneInstant: one Batsim message submits 100,000
// jobs; the broker takes in every pod event (no bounded buffer, no 410)
// and the run completes. A first-fit scheduler in the test process stands
// in for kube-scheduler, whose own cost would dominate.
func TestHundredThousandJobsAtOneInstant(t *testing.T) {
	if testing.Short() {
		t.Skip("a long run")
	}
	const n = 100_000
	path := filepath.Join(t.TempDir(), "burst.json")
	jobs := make([]map[string]any, n)
	for i := range jobs {
		jobs[i] = map[string]any{"id": i, "subtime": 0, "res": 1, "profile": "d10"}
	}
	writeJSON(t, path, map[string]any{"nb_res": 1000, "jobs": jobs,
		"profiles": map[string]any{"d10": map[string]any{"type": "delay", "delay": 10, "cpu": 1, "memory": "1Gi"}}})
	s := newSimulation(t, "examples/platforms/platform_1000.xml", path)
	s.cfg.BinDir = batkubeBinariesWithoutRace(t) // volume, not races, is the point
	s.obs = nil
	s.scheduleFirstFit(t)
	sum := s.mustRun(30 * time.Minute)
	if sum.Succeeded != n || sum.Jobs != n {
		t.Fatalf("%d jobs in _jobs.csv, %d succeeded; want all %d", sum.Jobs, sum.Succeeded, n)
	}
	// 8,000 cores: 13 waves of 10 s, each started the instant the
	// previous one ends (the stand-in signals when it is idle).
	if sum.Makespan != 130 || sum.Settle.Inexact() > 0 {
		t.Errorf("makespan %g s, settling %+v; want 130 s, every step exact", sum.Makespan, sum.Settle)
	}
	t.Logf("100,000 jobs at t=0 on 1,000 nodes: makespan %.0f s, wall %s, server peak RSS %d MiB, %d steps",
		sum.Makespan, sum.Wall.Round(time.Second), sum.Usage(launch.ServerProcess).MaxRSS>>20, sum.Steps)
}
