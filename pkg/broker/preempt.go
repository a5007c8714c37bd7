package broker

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/batkube/batkube/pkg/batsim"
)

// Preemption: kube-scheduler preempts a pod by marking it a disruption
// target (condition DisruptionTarget, reason PreemptionByScheduler) and
// deleting it. Its job is killed like any job whose pod is deleted
// (COMPLETED_KILLED), counted as preempted, and, with Preempted set to
// PreemptedResubmit, its work is submitted again as a new job, as a Job
// controller would create a new pod for it.

// PreemptedPolicy says what becomes of the job of a preempted pod.
type PreemptedPolicy string

const (
	// PreemptedKill kills the job: its work is lost.
	PreemptedKill PreemptedPolicy = "kill"
	// PreemptedResubmit kills the job and registers a new one with the same
	// profile, resources and walltime, submitted at the instant of the
	// preemption (Batsim's dynamic jobs). Its id is the first job's with
	// the suffix "-rN" for the Nth resubmission.
	PreemptedResubmit PreemptedPolicy = "resubmit"
)

// ParsePreemptedPolicy checks a policy's name.
func ParsePreemptedPolicy(s string) (PreemptedPolicy, error) {
	switch p := PreemptedPolicy(s); p {
	case PreemptedKill, PreemptedResubmit:
		return p, nil
	case "":
		return PreemptedKill, nil
	}
	return "", fmt.Errorf("preempted jobs: unknown policy %q (kill or resubmit)", s)
}

// preemptedByScheduler reports whether a scheduler marked the pod for
// preemption before deleting it.
func preemptedByScheduler(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// resubmission is a job registered again for preempted work, until Batsim
// acknowledges it.
type resubmission struct {
	origin  batsim.JobID
	attempt int
}

// preempted counts the preemption of job j's pod and, with the resubmit
// policy, registers the job again.
func (r *run) preempted(ctx context.Context, j *job, pod *corev1.Pod) error {
	if j.preempted {
		return nil // another pod of the same job
	}
	j.preempted = true
	r.preemptions++
	r.log.Info("a pod was preempted: its job is killed", "pod", pod.Namespace+"/"+pod.Name, "job", j.id, "policy", r.opts.Preempted)
	if r.opts.Preempted != PreemptedResubmit || j.spec == nil {
		return nil
	}
	origin := j.origin
	if origin == "" {
		origin = j.id
	}
	attempt := j.attempt + 1
	spec := *j.spec
	spec.ID = batsim.JobID(fmt.Sprintf("%s-r%d", origin, attempt))
	spec.Subtime = r.opts.Clock.Seconds()
	r.step.decisions = append(r.step.decisions, batsim.RegisterJob{JobID: spec.ID, Job: spec})
	r.resubmitted++
	if r.dynamicAck {
		// Batsim answers with JOB_SUBMITTED, which creates the pods.
		r.awaiting[spec.ID] = resubmission{origin: origin, attempt: attempt}
		return nil
	}
	if err := r.submit(ctx, batsim.JobSubmitted{JobID: spec.ID, Job: spec}, spec.Subtime); err != nil {
		return err
	}
	nj := r.jobs.byID[spec.ID]
	nj.origin, nj.attempt = origin, attempt
	return nil
}
