package broker

import (
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/batkube/batkube/pkg/store"
)

var jobsGR = schema.GroupResource{Group: "batch", Resource: "jobs"}

// controlled follows what a run's controllers (kube-controller-manager)
// still owe at this instant, beyond what their process shows (package
// settle/controllers): Jobs whose controller has pods to create but waits
// on a timer of its own (its batched sync, a back-off after a failed pod,
// both in wall time). A step waits for them.
type controlled struct {
	// jobs are the unfinished batch/v1 Jobs, by uid.
	jobs map[types.UID]*batchv1.Job
	// active are the pods of each Job not finished yet; owner the Job of
	// each such pod.
	active map[types.UID]int
	owner  map[podRef]types.UID
	// uncounted are the finished pods their Job controller has not
	// counted yet (still holding its finalizer).
	uncounted map[podRef]bool
}

func newControlled() controlled {
	return controlled{jobs: map[types.UID]*batchv1.Job{}, active: map[types.UID]int{}, owner: map[podRef]types.UID{}, uncounted: map[podRef]bool{}}
}

// jobTrackingFinalizer is the finalizer the Job controller puts on the
// pods it creates and takes off once it has counted them finished in its
// Job's status.
const jobTrackingFinalizer = "batch.kubernetes.io/job-tracking"

// jobChanged follows a Job.
func (c *controlled) jobChanged(ch *store.Change) {
	job, ok := ch.Object.Object().(*batchv1.Job)
	if !ok {
		return
	}
	if ch.Type == watch.Deleted || kubeJobFinished(job) {
		delete(c.jobs, job.UID)
		return
	}
	c.jobs[job.UID] = job
}

// podChanged follows a pod owned by a Job: active or not, counted or not.
func (c *controlled) podChanged(ref podRef, pod *corev1.Pod, deleted bool) {
	finished := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	if !deleted && finished && slices.Contains(pod.Finalizers, jobTrackingFinalizer) {
		c.uncounted[ref] = true
	} else {
		delete(c.uncounted, ref)
	}
	owner := metav1.GetControllerOf(pod)
	_, counted := c.owner[ref]
	switch active := !deleted && !finished && owner != nil && owner.Kind == "Job"; {
	case active && !counted:
		c.owner[ref] = owner.UID
		c.active[owner.UID]++
	case !active && counted:
		uid := c.owner[ref]
		delete(c.owner, ref)
		if c.active[uid]--; c.active[uid] <= 0 {
			delete(c.active, uid)
		}
	}
}

// kubeJobFinished: a batch/v1 Job Complete or Failed.
func kubeJobFinished(job *batchv1.Job) bool {
	for _, cond := range job.Status.Conditions {
		if (cond.Type == batchv1.JobComplete || cond.Type == batchv1.JobFailed) && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// owedInWallTime says what the Job controller still has to do at this
// instant on timers of wall time ("" if nothing, or if its clock is the
// simulated clock, whose timers are the run's wake-ups).
func (r *run) owedInWallTime() string {
	if r.controllersOnSimulatedTime {
		return ""
	}
	return r.controlled.owed()
}

// controllersOwe reports whether the controllers have work pending on the
// simulated clock (a Work timer) while Jobs are unfinished: the
// simulation is not over then, even with no Batsim job left (the Job
// controller's batched sync that completes a Job, its back-off before it
// replaces a failed pod).
func (r *run) controllersOwe() (at float64, ok bool) {
	if len(r.controlled.jobs) == 0 {
		return 0, false
	}
	return r.opts.Clock.NextWorkSeconds()
}

// owed says what the Job controller still has to do at this instant that
// its process does not show ("" if nothing): count finished pods, or
// create the pods of a Job that has fewer than it wants.
func (c *controlled) owed() string {
	if n := len(c.uncounted); n > 0 {
		return fmt.Sprintf("the Job controller has %d finished pods to count (its batched sync, in wall time)", n)
	}
	var short []string
	for uid, job := range c.jobs {
		if job.Spec.Suspend != nil && *job.Spec.Suspend {
			continue
		}
		if want := wantActive(job); c.active[uid] < want {
			short = append(short, fmt.Sprintf("%s/%s (%d of %d pods)", job.Namespace, job.Name, c.active[uid], want))
		}
	}
	if len(short) == 0 {
		return ""
	}
	slices.Sort(short)
	return "Jobs waiting for their controller to create pods (a back-off in wall time after a failed pod): " + strings.Join(short, ", ")
}

// wantActive is how many pods a Job's controller keeps running: its
// parallelism, bounded by the completions still to come (a Job without
// completions wants none once one pod has succeeded).
func wantActive(job *batchv1.Job) int {
	parallelism := 1
	if job.Spec.Parallelism != nil {
		parallelism = int(*job.Spec.Parallelism)
	}
	succeeded := int(job.Status.Succeeded)
	if job.Spec.Completions == nil {
		if succeeded > 0 {
			return 0
		}
		return parallelism
	}
	return max(0, min(parallelism, int(*job.Spec.Completions)-succeeded))
}
