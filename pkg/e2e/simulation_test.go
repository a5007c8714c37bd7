package e2e

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

const platform4 = "examples/platforms/platform_4.xml"

// platform16 is 16 nodes of 8 cores and 32 GiB.
const platform16 = "examples/platforms/platform_16.xml"

// TestSimulationRunsEveryJob runs a contended workload (jobs must wait for
// others to finish) with the embedded engine, Batkube and kube-scheduler
// 1.37, and checks the outputs and what a client-go watch saw.
func TestSimulationRunsEveryJob(t *testing.T) {
	const workload = "pkg/e2e/testdata/contended.json"
	s := newSimulation(t, platform4, workload)
	sum := s.mustRun(5 * time.Minute)
	jobs := s.jobs()

	want := workloadJobs(t, workload)
	if got := sortedKeys(jobs); !slices.Equal(got, want) {
		t.Fatalf("_jobs.csv has jobs %v, want %v", got, want)
	}
	waited := 0
	for id, j := range jobs {
		if j.state != "COMPLETED_SUCCESSFULLY" {
			t.Errorf("job %s ended %s, want COMPLETED_SUCCESSFULLY", id, j.state)
		}
		if j.start < j.submit {
			t.Errorf("job %s started at %g, before its submission at %g", id, j.start, j.submit)
		}
		if j.start > j.submit {
			waited++
		}
	}
	if waited == 0 {
		t.Errorf("no job waited: the workload is meant to contend for the nodes")
	}
	checkNoOvercommit(t, s, jobs)

	// Every pod went Pending → Running → Succeeded, with its start time the
	// simulated instant the engine started its job.
	for id, j := range jobs {
		pods := s.obs.podsOf(id)
		if len(pods) != 1 {
			t.Errorf("job %s: %d pods seen, want 1", id, len(pods))
			continue
		}
		p := pods[0]
		if want := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded}; !slices.Equal(p.phases, want) {
			t.Errorf("job %s: pod phases %v, want %v", id, p.phases, want)
		}
		if want := wireTime(j.start); !p.startTime.Equal(want) {
			t.Errorf("job %s: pod startTime %s, want the simulated start %s (t=%g)", id, p.startTime, want, j.start)
		}
		if cs := p.final.Status.ContainerStatuses; len(cs) == 0 || cs[0].State.Terminated == nil ||
			!cs[0].State.Terminated.FinishedAt.Time.Equal(wireTime(j.finish)) {
			t.Errorf("job %s: container statuses %+v, want terminated at the simulated finish t=%g", id, cs, j.finish)
		}
		if !p.deleted {
			t.Errorf("job %s: its finished pod was never removed", id)
		}
	}
	if sum.Succeeded != len(want) || sum.Jobs != len(want) {
		t.Errorf("summary: %+v, want %d jobs all succeeded", sum, len(want))
	}
	// The scheduler met nothing unexpected; at the end the server is gone
	// before the runner stops it.
	checkLog(t, filepath.Join(s.cfg.OutDir, "scheduler.log"), "connect: connection refused")
	t.Logf("makespan %.0f s, mean waiting %.1f s, wall %s", sum.Makespan, sum.MeanWaitingTime, sum.Wall)
}

// TestSimulationWalltime: a job that outlives its walltime is killed by
// Batsim at the walltime and its pod fails with DeadlineExceeded.
func TestSimulationWalltime(t *testing.T) {
	s := newSimulation(t, platform4, "pkg/e2e/testdata/walltime.json")
	s.mustRun(3 * time.Minute)
	jobs := s.jobs()
	over, within := jobs["w0!over"], jobs["w0!within"]
	if over.state != "COMPLETED_WALLTIME_REACHED" || math.Abs(over.execution-10) > 1e-6 {
		t.Errorf("job over: %s after %g s, want COMPLETED_WALLTIME_REACHED after 10 s", over.state, over.execution)
	}
	if within.state != "COMPLETED_SUCCESSFULLY" || math.Abs(within.execution-5) > 1e-6 {
		t.Errorf("job within: %s after %g s, want COMPLETED_SUCCESSFULLY after 5 s", within.state, within.execution)
	}
	pods := s.obs.podsOf("w0!over")
	if len(pods) != 1 {
		t.Fatalf("job over: %d pods seen, want 1", len(pods))
	}
	p := pods[0]
	if p.final.Spec.ActiveDeadlineSeconds == nil || *p.final.Spec.ActiveDeadlineSeconds != 10 {
		t.Errorf("pod of job over: activeDeadlineSeconds %v, want 10", p.final.Spec.ActiveDeadlineSeconds)
	}
	if p.final.Status.Phase != corev1.PodFailed || p.final.Status.Reason != "DeadlineExceeded" {
		t.Errorf("pod of job over: phase %s reason %q, want Failed DeadlineExceeded", p.final.Status.Phase, p.final.Status.Reason)
	}
}

// TestSimulationDeleteRunningPod: deleting a running pod with client-go
// kills its job (COMPLETED_KILLED).
func TestSimulationDeleteRunningPod(t *testing.T) {
	s := newHeldSimulation(t)
	// The blocker is rejected once nothing runs any more.
	s.cfg.ServerArgs = append(s.cfg.ServerArgs, "--pending-timeout=10m")
	s.onReady = func(s *simulation) { deleteWhenSeen(t, s, s.obs.running, "w0!long", nil) }
	s.mustRun(4 * time.Minute)
	jobs := s.jobs()
	if j := jobs["w0!long"]; j.state != "COMPLETED_KILLED" || j.finish >= 1e6 {
		t.Errorf("job long: %s at t=%g, want COMPLETED_KILLED before its end", j.state, j.finish)
	}
	if j := jobs["w0!blocker"]; j.state != "REJECTED" {
		t.Errorf("job blocker: %s, want REJECTED (pending with nothing left to run)", j.state)
	}
	for _, p := range s.obs.podsOf("w0!long") {
		if !p.deleted {
			t.Errorf("the killed pod was never removed")
		}
	}
}

// deleteWhenSeen deletes the pod of job once it comes on ch (an observer's
// channel of pods running, unschedulable...), then closes deleted if not
// nil.
func deleteWhenSeen(t *testing.T, s *simulation, ch <-chan string, job string, deleted chan<- struct{}) {
	go func() {
		name, ok := waitFor(t, ch, s.obs, job, 2*time.Minute)
		if !ok {
			return
		}
		if err := s.client.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting the pod %s of %s: %v", name, job, err)
			return
		}
		if deleted != nil {
			close(deleted)
		}
	}()
}

// TestSimulationDeletePendingPod: deleting a pending pod rejects its job.
func TestSimulationDeletePendingPod(t *testing.T) {
	s := newHeldSimulation(t)
	deleted := make(chan struct{})
	s.onReady = func(s *simulation) { deleteWhenSeen(t, s, s.obs.unschedulable, "w0!blocker", deleted) }
	s.mustRun(4 * time.Minute)
	select {
	case <-deleted:
	default:
		t.Fatal("the test never deleted the pending pod")
	}
	jobs := s.jobs()
	if j := jobs["w0!blocker"]; j.state != "REJECTED" {
		t.Errorf("job blocker: %s, want REJECTED", j.state)
	}
	if j := jobs["w0!long"]; j.state != "COMPLETED_SUCCESSFULLY" {
		t.Errorf("job long: %s, want COMPLETED_SUCCESSFULLY", j.state)
	}
}

// TestSimulationMultiHostJobs: jobs asking for res > 1 hosts become groups
// of pods that start together once all are bound.
func TestSimulationMultiHostJobs(t *testing.T) {
	const workload = "examples/workloads/parallel.json"
	s := newSimulation(t, platform4, workload)
	s.mustRun(3 * time.Minute)
	jobs := s.jobs()
	res := map[string]int{"w0!p1": 2, "w0!p2": 4, "w0!p3": 2, "w0!p4": 3, "w0!p5": 2, "w0!p6": 1, "w0!p7": 4, "w0!p8": 2}
	if got, want := sortedKeys(jobs), workloadJobs(t, workload); !slices.Equal(got, want) {
		t.Fatalf("_jobs.csv has jobs %v, want %v", got, want)
	}
	for id, j := range jobs {
		wantState := "COMPLETED_SUCCESSFULLY"
		if id == "w0!p6" { // 10 s of work, walltime 5 s
			wantState = "COMPLETED_WALLTIME_REACHED"
		}
		if j.state != wantState {
			t.Errorf("job %s: %s, want %s", id, j.state, wantState)
		}
		pods := s.obs.podsOf(id)
		if len(pods) != res[id] {
			t.Errorf("job %s: %d pods, want %d", id, len(pods), res[id])
			continue
		}
		nodes := map[string]bool{}
		for _, p := range pods {
			nodes[p.node] = true
			if !p.startTime.Equal(pods[0].startTime) || !p.startTime.Equal(wireTime(j.start)) {
				t.Errorf("job %s: pod started at %s, want all at the job's start t=%g", id, p.startTime, j.start)
			}
		}
		if len(j.alloc) != len(nodes) {
			t.Errorf("job %s: allocated resources %v for pods on nodes %v", id, j.alloc, nodes)
		}
	}
	checkNoOvercommit(t, s, jobs)
}

// TestSimulationTwoWorkloads: two workloads at once, their jobs told apart
// by workload name.
func TestSimulationTwoWorkloads(t *testing.T) {
	ws := []string{"examples/workloads/delay_10.json", "pkg/e2e/testdata/walltime.json"}
	s := newSimulation(t, platform4, ws...)
	s.mustRun(3 * time.Minute)
	jobs := s.jobs()
	if got, want := sortedKeys(jobs), workloadJobs(t, ws...); !slices.Equal(got, want) {
		t.Fatalf("_jobs.csv has jobs %v, want %v", got, want)
	}
	for id, j := range jobs {
		want := "COMPLETED_SUCCESSFULLY"
		if id == "w1!over" {
			want = "COMPLETED_WALLTIME_REACHED"
		}
		if j.state != want {
			t.Errorf("job %s: %s, want %s", id, j.state, want)
		}
	}
	checkNoOvercommit(t, s, jobs)
}

// TestSimulationPodCreatedWithKubectl: with dynamic jobs, a pod created
// with kubectl during the run becomes a Batsim job that runs for the delay
// its annotation gives.
func TestSimulationPodCreatedWithKubectl(t *testing.T) {
	s := newHeldSimulation(t)
	s.cfg.DynamicJobs = true
	manifest := `apiVersion: v1
kind: Pod
metadata:
  name: from-kubectl
  annotations:
    batkube.io/delay: "5"
spec:
  containers:
  - name: main
    image: busybox
    resources:
      requests:
        cpu: "1"
        memory: 1Gi
`
	file := filepath.Join(t.TempDir(), "pod.yaml")
	writeFile(t, file, []byte(manifest))
	kubectl := binary(t, "kubectl")
	s.onReady = func(s *simulation) {
		go func() {
			if _, ok := waitFor(t, s.obs.running, s.obs, "w0!long", 2*time.Minute); !ok {
				return
			}
			cmd := exec.Command(kubectl, "--kubeconfig", s.cluster.Kubeconfig, "apply", "-f", file)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "pod/from-kubectl created") {
				t.Errorf("kubectl apply: %v\n%s", err, out)
			}
			if _, ok := waitFor(t, s.obs.running, s.obs, "", 2*time.Minute); !ok { // the dynamic pod has no job annotation
				return
			}
			blocker := s.obs.podsOf("w0!blocker")
			if len(blocker) != 1 {
				t.Errorf("blocker: %d pods", len(blocker))
				return
			}
			if err := s.client.CoreV1().Pods("default").Delete(context.Background(), blocker[0].final.Name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting the blocker: %v", err)
			}
		}()
	}
	s.mustRun(4 * time.Minute)
	var dynamic []jobRow
	for id, j := range s.jobs() {
		if strings.HasPrefix(id, "dyn!") {
			dynamic = append(dynamic, j)
		}
	}
	if len(dynamic) != 1 || dynamic[0].state != "COMPLETED_SUCCESSFULLY" || math.Abs(dynamic[0].execution-5) > 1e-6 {
		t.Fatalf("dynamic jobs in _jobs.csv: %+v, want one that succeeded after 5 s", dynamic)
	}
}

// TestSimulationSchedulerKilled: a scheduler that dies mid-run is reported
// within a bounded time, and the run fails with a clear message, leaving
// the outputs written so far.
func TestSimulationSchedulerKilled(t *testing.T) {
	s := newHeldSimulation(t)
	s.cfg.ServerArgs = append(s.cfg.ServerArgs, "--scheduler-timeout=2s")
	killed := make(chan time.Time, 1)
	s.onReady = func(s *simulation) {
		pid := s.cluster.SchedulerPID
		go func() {
			if _, ok := waitFor(t, s.obs.running, s.obs, "w0!long", 2*time.Minute); !ok {
				return
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Errorf("killing the scheduler: %v", err)
			}
			killed <- time.Now()
		}()
	}
	_, err := s.run(3 * time.Minute)
	ended := time.Now()
	var at time.Time
	select {
	case at = <-killed:
	default:
		t.Fatal("the scheduler was never killed")
	}
	if err == nil {
		t.Fatal("the run succeeded without its scheduler")
	}
	t.Logf("the run failed %s after the kill: %v", ended.Sub(at).Round(time.Millisecond), err)
	if !strings.Contains(err.Error(), "the scheduler has neither watched pods, bound any nor waited on the idle signal") {
		t.Errorf("the error does not say the scheduler is gone: %v", err)
	}
	if d := ended.Sub(at); d > 30*time.Second {
		t.Errorf("the run ended %s after the scheduler was killed, want within 30s", d)
	}
	for _, f := range []string{"_jobs.csv", "_schedule.csv", "server.log", "scheduler.log"} {
		if _, err := os.Stat(filepath.Join(s.cfg.OutDir, f)); err != nil {
			t.Errorf("output %s: %v", f, err)
		}
	}
}

// TestSimulationPodTemplates: jobs whose pods carry templates (priorities,
// node selectors, tolerations, affinity, GPUs) on a heterogeneous platform
// whose hosts carry labels, taints and extended resources; the
// PriorityClasses come from a manifest the run starts with.
func TestSimulationPodTemplates(t *testing.T) {
	const workload = "examples/workloads/pod_templates.json"
	s := newSimulation(t, "examples/platforms/heterogeneous.xml", workload)
	s.cfg.Objects = []string{filepath.Join(repoRoot(), "examples/workloads/priority-classes.yaml")}
	s.mustRun(3 * time.Minute)
	jobs := s.jobs()
	if got, want := sortedKeys(jobs), workloadJobs(t, workload); !slices.Equal(got, want) {
		t.Fatalf("_jobs.csv has jobs %v, want %v", got, want)
	}
	for id, j := range jobs {
		if j.state != "COMPLETED_SUCCESSFULLY" {
			t.Errorf("job %s: %s, want COMPLETED_SUCCESSFULLY", id, j.state)
		}
		for _, p := range s.obs.podsOf(id) {
			s.obs.mu.Lock()
			node := s.obs.nodes[p.node]
			s.obs.mu.Unlock()
			if node == nil {
				t.Errorf("job %s: its pod ran on an unknown node %q", id, p.node)
				continue
			}
			for k, v := range p.final.Spec.NodeSelector {
				if node.Labels[k] != v {
					t.Errorf("job %s: pod with nodeSelector %s=%s ran on %s (labels %v)", id, k, v, node.Name, node.Labels)
				}
			}
			for _, taint := range node.Spec.Taints {
				if taint.Effect == corev1.TaintEffectNoSchedule && !tolerates(p.final.Spec.Tolerations, taint) {
					t.Errorf("job %s: pod ran on %s despite its taint %s", id, node.Name, taint.ToString())
				}
			}
			if pc := p.final.Spec.PriorityClassName; pc != "" && (p.final.Spec.Priority == nil || *p.final.Spec.Priority == 0) {
				t.Errorf("job %s: priorityClassName %s but priority %v", id, pc, p.final.Spec.Priority)
			}
		}
	}
	checkNoOvercommit(t, s, jobs)
}

// tolerates reports whether one of the tolerations tolerates the taint, by
// the API's own rule.
func tolerates(tolerations []corev1.Toleration, taint corev1.Taint) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(klog.Background(), &taint, false) {
			return true
		}
	}
	return false
}

// TestSimulationTimeVirtualisedScheduler: a scheduler that reads Batkube's
// simulated clock (examples/timed-scheduler, on pkg/simtime/clockclient) places pods
// in rounds every 10 simulated seconds. With room for every job, each
// starts exactly at the first round at or after its submission (a round at
// the instant of a submission sees it: timers fire once the step's events
// are applied); with contention, every start still falls on the grid.
func TestSimulationTimeVirtualisedScheduler(t *testing.T) {
	for _, workload := range []string{"pkg/e2e/testdata/rounds.json", "pkg/e2e/testdata/contended.json"} {
		t.Run(filepath.Base(workload), func(t *testing.T) {
			s := newSimulation(t, platform4, workload)
			s.cfg.SchedulerCommand = filepath.Join(s.cfg.BinDir, "timed-scheduler") + " --kubeconfig {kubeconfig} --period 10s"
			s.mustRun(5 * time.Minute)
			jobs := s.jobs()
			if got, want := sortedKeys(jobs), workloadJobs(t, workload); !slices.Equal(got, want) {
				t.Fatalf("_jobs.csv has jobs %v, want %v", got, want)
			}
			exact := strings.HasSuffix(workload, "rounds.json")
			for id, j := range jobs {
				if j.state != "COMPLETED_SUCCESSFULLY" {
					t.Errorf("job %s: %s, want COMPLETED_SUCCESSFULLY", id, j.state)
				}
				firstRound := 10 * math.Ceil(j.submit/10)
				switch round := 10 * math.Round(j.start/10); {
				case math.Abs(j.start-round) > 1e-6 || j.start < j.submit:
					t.Errorf("job %s submitted at %g started at %g, want a round of the scheduler (a multiple of 10 s) after its submission", id, j.submit, j.start)
				case exact && j.start != firstRound:
					t.Errorf("job %s submitted at %g started at %g, want the first round after it, %g", id, j.submit, j.start, firstRound)
				}
			}
			checkNoOvercommit(t, s, jobs)
		})
	}
}

// checkLog fails the test for every error line of a kube-scheduler log
// that is neither expected of any run (expectedSchedulerErrors) nor matches
// one of also.
func checkLog(t *testing.T, path string, also ...string) {
	t.Helper()
	b := readFile(t, path)
	lines := strings.Split(string(b), "\n")
next:
	for _, line := range lines {
		if !strings.HasPrefix(line, "E") || expectedSchedulerErrors.MatchString(line) {
			continue
		}
		for _, a := range also {
			if strings.Contains(line, a) {
				continue next
			}
		}
		t.Errorf("unexpected error in %s: %s", path, line)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
