package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/simtime/simclock"
)

// TestControllersInSimulatedTime runs the real kube-controller-manager
// 1.37 (batkube-run --controller-manager) on the objects of
// testdata/controllers.yaml, created and deleted at their simulated
// instants, beside kube-scheduler, on platform_4 (room for every pod at
// once), on the run's simulated clock (the default) and on the wall clock.
//
// On the simulated clock, every pod a controller creates starts at the
// simulated instant the controller creates it on a real cluster: the Job's
// first two at its creation (10 s); the next two after its batched sync,
// one second after those end (41 s); the last at 72 s; the failing Job's
// retry after its back-off of 10 s from its first pod's failure (25 + 10);
// the Deployment's two at 5 s, killed at its deletion (200 s). The Jobs'
// timestamps are simulated instants (startTime 10 s, completionTime 103 s,
// one batched sync after the last pod's end). On the wall clock, those
// delays are sat out in wall time at the instant they start: the next pods
// start as the previous ones end (40, 70), the retry at the failure (25).
//
// Either way every step is exact, and the Jobs' statuses are what the Job
// controller writes for these pod outcomes: Complete with 5 succeeded;
// Failed (BackoffLimitExceeded) with 2 failed; _controllers.csv says the
// same.
func TestControllersInSimulatedTime(t *testing.T) {
	workload := filepath.Join(t.TempDir(), "one.json")
	writeJSON(t, workload, map[string]any{"nb_res": 4,
		"jobs":     []map[string]any{{"id": "a", "subtime": 0, "res": 1, "profile": "d20"}},
		"profiles": map[string]any{"d20": map[string]any{"type": "delay", "delay": 20, "cpu": 1, "memory": "1Gi"}}})
	for _, tc := range []struct {
		clock     string
		wallClock bool
		starts    map[string][]string
		csv       string
		// completed is the batch Job's completionTime (simulated seconds;
		// -1: wall time, not checked).
		completed float64
	}{{
		clock: "simulated",
		starts: map[string][]string{
			"batch": {"10-40:COMPLETED_SUCCESSFULLY", "10-40:COMPLETED_SUCCESSFULLY", "41-71:COMPLETED_SUCCESSFULLY",
				"41-71:COMPLETED_SUCCESSFULLY", "72-102:COMPLETED_SUCCESSFULLY"},
			"flaky": {"20-25:COMPLETED_WALLTIME_REACHED", "35-40:COMPLETED_WALLTIME_REACHED"},
			"web":   {"5-200:COMPLETED_KILLED", "5-200:COMPLETED_KILLED"},
		},
		csv: `kind,namespace,name,created,first_start,last_end,pods,succeeded,failed,killed,final_state,reason
ReplicaSet,default,web-*,5.000000,5.000000,200.000000,2,0,0,2,,
Job,default,batch,10.000000,10.000000,102.000000,5,5,0,0,Complete,CompletionsReached
Job,default,flaky,20.000000,20.000000,40.000000,2,0,2,0,Failed,BackoffLimitExceeded
`,
		completed: 103,
	}, {
		clock: "wall", wallClock: true,
		starts: map[string][]string{
			"batch": {"10-40:COMPLETED_SUCCESSFULLY", "10-40:COMPLETED_SUCCESSFULLY", "40-70:COMPLETED_SUCCESSFULLY",
				"40-70:COMPLETED_SUCCESSFULLY", "70-100:COMPLETED_SUCCESSFULLY"},
			"flaky": {"20-25:COMPLETED_WALLTIME_REACHED", "25-30:COMPLETED_WALLTIME_REACHED"},
			"web":   {"5-200:COMPLETED_KILLED", "5-200:COMPLETED_KILLED"},
		},
		csv: `kind,namespace,name,created,first_start,last_end,pods,succeeded,failed,killed,final_state,reason
ReplicaSet,default,web-*,5.000000,5.000000,200.000000,2,0,0,2,,
Job,default,batch,10.000000,10.000000,100.000000,5,5,0,0,Complete,CompletionsReached
Job,default,flaky,20.000000,20.000000,30.000000,2,0,2,0,Failed,BackoffLimitExceeded
`,
		completed: -1,
	}} {
		t.Run(tc.clock, func(t *testing.T) {
			s := newSimulation(t, "examples/platforms/platform_4.xml", workload)
			s.cfg.ControllerManager = true
			s.cfg.ControllerManagerWallClock = tc.wallClock
			s.cfg.Objects = []string{abs(repoRoot(), "pkg/e2e/testdata/controllers.yaml")}
			jobs := &jobStatuses{}
			s.onReady = jobs.watch
			s.mustRunExact(5 * time.Minute)
			starts := map[string][]string{}
			for id, j := range s.jobs() {
				owner, _, ok := strings.Cut(strings.TrimPrefix(id, "dyn!default."), "-")
				if !ok || !strings.HasPrefix(id, "dyn!") {
					continue
				}
				starts[owner] = append(starts[owner], fmt.Sprintf("%g-%g:%s", j.start, j.finish, j.state))
			}
			for owner, want := range tc.starts {
				got := starts[owner]
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("%s's pods ran %v, want %v", owner, got, want)
				}
			}
			// The controllers' log, but for the ReplicaSet's generated name.
			data := readFile(t, filepath.Join(s.cfg.OutDir, "_controllers.csv"))
			if got := regexp.MustCompile(`web-[a-z0-9]+,`).ReplaceAllString(string(data), "web-*,"); got != tc.csv {
				t.Errorf("_controllers.csv:\n%s\nwant\n%s", got, tc.csv)
			}
			batch, flaky := jobs.last("batch"), jobs.last("flaky")
			if batch == nil || !hasJobCondition(batch, batchv1.JobComplete, "") || batch.Status.Succeeded != 5 || batch.Status.Failed != 0 {
				t.Errorf("Job batch's last status: %+v, want Complete with 5 succeeded", status(batch))
			}
			if flaky == nil || !hasJobCondition(flaky, batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded) || flaky.Status.Failed != 2 || flaky.Status.Succeeded != 0 {
				t.Errorf("Job flaky's last status: %+v, want Failed (BackoffLimitExceeded) with 2 failed", status(flaky))
			}
			if tc.completed >= 0 && batch != nil {
				epoch := simclock.DefaultEpoch
				if st := batch.Status.StartTime; st == nil || !st.Time.Equal(epoch.Add(10*time.Second)) {
					t.Errorf("Job batch's startTime %v, want the simulated instant 10 s (%v)", st, epoch.Add(10*time.Second))
				}
				want := epoch.Add(time.Duration(tc.completed) * time.Second)
				if ct := batch.Status.CompletionTime; ct == nil || !ct.Time.Equal(want) {
					t.Errorf("Job batch's completionTime %v, want the simulated instant %g s (%v)", ct, tc.completed, want)
				}
			}
		})
	}
}

func status(j *batchv1.Job) any {
	if j == nil {
		return "never seen"
	}
	return j.Status
}

func hasJobCondition(j *batchv1.Job, typ batchv1.JobConditionType, reason string) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue && (reason == "" || c.Reason == reason) {
			return true
		}
	}
	return false
}

// jobStatuses keeps the latest state of each Job a client-go watch sees.
type jobStatuses struct {
	mu   sync.Mutex
	jobs map[string]*batchv1.Job
	done <-chan struct{} // closed when the watch ends (the server stops)
}

func (j *jobStatuses) watch(s *simulation) {
	j.jobs = map[string]*batchv1.Job{}
	j.done = watchObjects(s, "Jobs", s.client.BatchV1().Jobs(metav1.NamespaceDefault).Watch, func(job *batchv1.Job) {
		j.mu.Lock()
		j.jobs[job.Name] = job
		j.mu.Unlock()
	})
}

// last returns the latest state of a Job, once the watch has ended.
func (j *jobStatuses) last(name string) *batchv1.Job {
	<-j.done
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.jobs[name]
}

// TestKubernetesObjectsFromTheWorkload runs examples/workloads/kube_jobs.json,
// whose jobs are Kubernetes Jobs and a Deployment (profiles with kube_job
// and kube_deployment): batkube-run takes them out of Batsim's workload and
// creates them at their submission times, kube-controller-manager (started
// for them) creates their pods, which become Batsim jobs. On the simulated
// clock, each pod starts when its controller creates it on a real cluster:
// the Deployment's two at its submission (0 s), killed at its end (100 s);
// the Job etl's three at once (5 s); the Job flaky's pods, which exit with
// code 1, at 10 s then after its back-off of 10 s from the first failure
// (25 s) and of 20 s from the second (50 s), after which it fails with
// BackoffLimitExceeded (3 failures, backoffLimit 2); the Job fatal's pod
// exits with code 42, which its podFailurePolicy makes fatal: Failed
// (PodFailurePolicy) without a retry.
func TestKubernetesObjectsFromTheWorkload(t *testing.T) {
	s := newSimulation(t, "examples/platforms/platform_4.xml", "examples/workloads/kube_jobs.json")
	jobs := &jobStatuses{}
	s.onReady = jobs.watch
	s.mustRunExact(5 * time.Minute)
	got := map[string][]string{}
	for id, j := range s.jobs() {
		owner := id
		for _, o := range []string{"w0-web", "w0-etl", "w0-flaky", "w0-fatal"} {
			if strings.HasPrefix(id, "dyn!default."+o+"-") {
				owner = o
			}
		}
		got[owner] = append(got[owner], fmt.Sprintf("%g-%g:%s", j.start, j.finish, j.state))
	}
	for owner, want := range map[string][]string{
		"w0!a":     {"0-10:COMPLETED_SUCCESSFULLY"},
		"w0!b":     {"60-70:COMPLETED_SUCCESSFULLY"},
		"w0-web":   {"0-100:COMPLETED_KILLED", "0-100:COMPLETED_KILLED"},
		"w0-etl":   {"5-25:COMPLETED_SUCCESSFULLY", "5-25:COMPLETED_SUCCESSFULLY", "5-25:COMPLETED_SUCCESSFULLY"},
		"w0-flaky": {"10-15:COMPLETED_FAILED", "25-30:COMPLETED_FAILED", "50-55:COMPLETED_FAILED"},
		"w0-fatal": {"15-18:COMPLETED_FAILED"},
	} {
		g := got[owner]
		slices.Sort(g)
		if !slices.Equal(g, want) {
			t.Errorf("%s ran %v, want %v", owner, g, want)
		}
		delete(got, owner)
	}
	if len(got) > 0 {
		t.Errorf("unexpected jobs: %v", got)
	}
	for name, want := range map[string]struct {
		cond      batchv1.JobConditionType
		reason    string
		succeeded int32
		failed    int32
		ended     float64
	}{
		"w0-etl":   {batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 3, 0, 26},
		"w0-flaky": {batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded, 0, 3, 56},
		"w0-fatal": {batchv1.JobFailed, batchv1.JobReasonPodFailurePolicy, 0, 1, 19},
	} {
		j := jobs.last(name)
		if j == nil || !hasJobCondition(j, want.cond, want.reason) || j.Status.Succeeded != want.succeeded || j.Status.Failed != want.failed {
			t.Errorf("Job %s's last status: %+v, want %s (%s), %d succeeded, %d failed", name, status(j), want.cond, want.reason, want.succeeded, want.failed)
			continue
		}
		for _, c := range j.Status.Conditions {
			if c.Type == want.cond && !c.LastTransitionTime.Time.Equal(simclock.DefaultEpoch.Add(time.Duration(want.ended)*time.Second)) {
				t.Errorf("Job %s: %s at %v, want the simulated instant %g s", name, want.cond, c.LastTransitionTime, want.ended)
			}
		}
	}
}

// TestJobPodsLostWithTheirMachine: a Job's pods killed with their machine
// (Batsim's machine_unavailable) fail, and the Job controller replaces
// them after its back-off, as on a real cluster where a node is lost. A
// Job of 4 pods of 8 cores (one per host of platform_4) at 0 s; hosts 0
// and 1 are lost at 10 s and back at 100 s: their pods end killed at 10 s,
// the replacements (created after the 10 s back-off, at 20 s) cannot go
// to the lost nodes and start at 30 s, when the other two pods end, and
// the Job completes with 4 succeeded and 2 failed.
func TestJobPodsLostWithTheirMachine(t *testing.T) {
	dir := t.TempDir()
	workload := filepath.Join(dir, "job.json")
	writeJSON(t, workload, map[string]any{"nb_res": 4,
		"jobs": []map[string]any{{"id": "j", "subtime": 0, "res": 1, "profile": "p"}},
		"profiles": map[string]any{"p": map[string]any{"type": "delay", "delay": 30, "cpu": 8, "memory": "1Gi",
			"kube_job": map[string]any{"completions": 4, "parallelism": 4}}}})
	s := newSimulation(t, "examples/platforms/platform_4.xml", workload)
	s.addMachineOutage("0-1", 10, 100)
	jobs := &jobStatuses{}
	s.onReady = jobs.watch
	s.mustRunExact(5 * time.Minute)
	var got []string
	for id, j := range s.jobs() {
		if !strings.HasPrefix(id, "dyn!default.w0-j-") {
			t.Errorf("unexpected job %s", id)
			continue
		}
		lost := slices.ContainsFunc(j.alloc, func(h int) bool { return h <= 1 })
		got = append(got, fmt.Sprintf("%g-%g:%s:lost=%v", j.start, j.finish, j.state, lost))
	}
	slices.Sort(got)
	want := []string{"0-10:COMPLETED_KILLED:lost=true", "0-10:COMPLETED_KILLED:lost=true",
		"0-30:COMPLETED_SUCCESSFULLY:lost=false", "0-30:COMPLETED_SUCCESSFULLY:lost=false",
		"30-60:COMPLETED_SUCCESSFULLY:lost=false", "30-60:COMPLETED_SUCCESSFULLY:lost=false"}
	if !slices.Equal(got, want) {
		t.Errorf("the Job's pods ran %v, want %v", got, want)
	}
	j := jobs.last("w0-j")
	if j == nil || !hasJobCondition(j, batchv1.JobComplete, "") || j.Status.Succeeded != 4 || j.Status.Failed != 2 {
		t.Errorf("Job's last status: %+v, want Complete with 4 succeeded and 2 failed", status(j))
	}
}
