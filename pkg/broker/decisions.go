package broker

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/batkube/batkube/pkg/batsim"
)

// execute turns the bindings of a job's pods into EXECUTE_JOB.
func (r *run) execute(j *job) error {
	ids := make([]int, len(j.pods))
	for i, p := range j.pods {
		ids[i] = r.nodes.id[j.nodes[p]]
	}
	alloc, err := batsim.IntervalSetFromIDs(ids)
	if err != nil {
		return fmt.Errorf("broker: job %s: %w", j.id, err)
	}
	exec := batsim.ExecuteJob{JobID: j.id, Alloc: alloc}
	if unique := alloc.IDs(); len(unique) != len(ids) {
		exec.Mapping = make(map[int]int, len(ids))
		for i, id := range ids {
			exec.Mapping[i] = slices.Index(unique, id)
		}
	}
	for _, node := range j.nodes {
		r.nodes.node[node].jobs++
		if ln := r.pool.nodes[node]; ln != nil {
			ln.jobs++
		}
	}
	r.step.decisions = append(r.step.decisions, exec)
	if r.pool.power.hosts != nil {
		j.sleepable = alloc.IDs()
		r.pool.power.jobStarted(j.sleepable)
	}
	r.jobs.setPhase(j, jobRunning)
	r.step.toStart = append(r.step.toStart, j)
	return nil
}

// leftHosts is a started job's end (completed or killed): its hosts may
// be switched off.
func (r *run) leftHosts(j *job) {
	r.pool.power.jobEnded(j.sleepable)
	j.sleepable = nil
}

func (r *run) kill(j *job) {
	if !j.killSent {
		j.killSent = true
		r.step.decisions = append(r.step.decisions, batsim.KillJob{JobIDs: []batsim.JobID{j.id}})
	}
}

// reject refuses a job that has not started and removes its pods.
func (r *run) reject(ctx context.Context, j *job) {
	r.step.decisions = append(r.step.decisions, batsim.RejectJob{JobID: j.id})
	r.releaseJob(ctx, j)
	r.jobs.setPhase(j, jobFinished)
	j.rejected = true
	j.endedAt = r.opts.Clock.Seconds()
	r.owners.ended(j, batsim.JobStateRejected)
	r.removeJobPods(ctx, j)
}

// finishLater keeps a finished pod visible for FinishedPodTTL; the pod of
// an owned job stays until a client deletes it.
func (r *run) finishLater(ref podRef) {
	if j := r.jobs.byPod[ref]; j != nil && j.owned {
		return
	}
	r.jobs.finished = append(r.jobs.finished, finishedPod{ref: ref, at: r.opts.Clock.Seconds() + r.opts.FinishedPodTTL.Seconds()})
}

// removeDueFinishedPods deletes the finished pods whose time has come.
func (r *run) removeDueFinishedPods(ctx context.Context, now float64) {
	n := 0
	for n < len(r.jobs.finished) && r.jobs.finished[n].at <= now {
		r.remove(ctx, r.jobs.finished[n].ref)
		n++
	}
	r.jobs.finished = r.jobs.finished[n:]
}

// removeJobPods deletes the pods of a job; the job is forgotten.
func (r *run) removeJobPods(ctx context.Context, j *job) {
	for _, ref := range j.pods {
		r.remove(ctx, ref)
	}
	r.forgetIfGone(ctx, j)
}

// remove deletes a pod of a job as its kubelet would once it is gone; a
// finished job is forgotten once all its pods are gone.
func (r *run) remove(ctx context.Context, ref podRef) {
	j := r.jobs.byPod[ref]
	if j != nil && j.gone[ref] {
		return
	}
	r.deletePod(ctx, ref)
	r.markGone(ctx, j, ref)
}

// markGone records that a pod of job j (nil: of no job) is gone.
func (r *run) markGone(ctx context.Context, j *job, ref podRef) {
	if j == nil {
		return
	}
	if j.gone == nil {
		j.gone = map[podRef]bool{}
	}
	j.gone[ref] = true
	r.forgetIfGone(ctx, j)
}

// forgetIfGone forgets a finished job whose pods are all gone.
func (r *run) forgetIfGone(ctx context.Context, j *job) {
	if len(j.gone) == len(j.pods) && j.phase == jobFinished && r.jobs.byID[j.id] == j {
		r.pods.jobDone(j)
		r.jobs.forget(j)
		r.deletePodGroup(ctx, j)
	}
}

// deletePod deletes a pod, marking the deletion as the broker's own.
func (r *run) deletePod(ctx context.Context, ref podRef) {
	r.jobs.removing[ref] = true
	if _, err := r.api.RemovePod(ctx, ref.namespace, ref.name); err != nil {
		delete(r.jobs.removing, ref)
		if !apierrors.IsNotFound(err) {
			r.log.Error("removing a pod", "pod", ref.String(), "err", err)
		}
	}
}
