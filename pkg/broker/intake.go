package broker

import (
	"context"
	"fmt"
	"maps"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/store"
)

// takeIn applies every change of pods and nodes written since the last
// call, and the pods clients asked to delete: what the scheduler (and other
// clients) did. It returns how many changes it took.
func (r *run) takeIn(ctx context.Context) (int, error) {
	r.pods.takeEvents(r.jobs)
	r.buf = r.intake.Take(r.buf[:0])
	for i := range r.buf {
		c := &r.buf[i]
		if c.GR == jobsGR {
			r.controlled.jobChanged(c)
			if job, ok := c.Object.Object().(*batchv1.Job); ok {
				r.owners.job(job, r.opts.Clock.Seconds())
			}
			continue
		}
		if c.GR == workloadsGR {
			r.workloads.changed(c, r.opts.Clock.Seconds())
			continue
		}
		if c.GR == clusterQueuesGR {
			r.clusterQueues.changed(c, r.opts.Clock.Seconds())
			continue
		}
		r.settle.Observe(*c)
		if c.GR == nodesGVR.GroupResource() {
			if err := r.nodeChanged(ctx, c); err != nil {
				return 0, err
			}
		}
		if c.GR == podsGVR.GroupResource() {
			if err := r.podChanged(ctx, c); err != nil {
				return 0, err
			}
		}
	}
	n := len(r.buf)
	clear(r.buf) // drop references to objects the store may forget
	for _, pod := range r.terminating.take() {
		if err := r.podTerminating(ctx, pod); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// podChanged follows what clients do to pods: bindings, deletions, creations.
func (r *run) podChanged(ctx context.Context, c *store.Change) error {
	pod, ok := c.Object.Object().(*corev1.Pod)
	if !ok {
		return nil
	}
	ref := podRef{pod.Namespace, pod.Name}
	j := r.jobs.byPod[ref]
	if j != nil && !r.live.seen && hasCondition(pod, corev1.PodScheduled) {
		r.live.seen = true
	}
	if c.Type != watch.Deleted {
		r.pods.observe(j, pod, r.opts.Clock.Seconds())
	}
	r.controlled.podChanged(ref, pod, c.Type == watch.Deleted)
	switch c.Type {
	case watch.Added:
		if j == nil {
			return r.registerDynamic(ctx, pod)
		}
	case watch.Modified:
		prev, _ := c.Prev.Object().(*corev1.Pod)
		if j == nil || prev == nil || prev.Spec.NodeName != "" || pod.Spec.NodeName == "" {
			return nil
		}
		return r.bound(ctx, j, ref, pod)
	case watch.Deleted:
		if r.jobs.removing[ref] {
			delete(r.jobs.removing, ref)
			return nil
		}
		if j == nil {
			return nil
		}
		switch j.phase {
		case jobPending:
			r.reject(ctx, j)
		case jobRunning:
			r.kill(j)
		case jobFinished: // an owned job's pod, deleted by its controller
			r.markGone(ctx, j, ref)
		}
	}
	return nil
}

// bound handles the binding of a pod of job j to a node: the node's
// kubelet admits it (or refuses it: the job is rejected), and the job
// starts once all its pods are bound and admitted.
func (r *run) bound(ctx context.Context, j *job, ref podRef, pod *corev1.Pod) error {
	node := pod.Spec.NodeName
	if j.phase != jobPending || j.nodes[ref] != "" {
		return nil
	}
	if _, known := r.nodes.id[node]; !known {
		if ln := r.pool.nodes[node]; ln != nil {
			return r.refuse(ctx, j, ref, node, "NodeNotMapped", fmt.Sprintf(
				"node %s was launched (instance type %q) but no pool host of that type was free: it runs nothing", node, ln.instanceType))
		}
		return fmt.Errorf("broker: pod %s of job %s was bound to node %q, which is not a Batsim host", ref, j.id, node)
	}
	if r.nodes.unavailable[node] {
		// Bound before the scheduler saw the node cordoned: Batsim would
		// abort on it. The pod goes back to pending.
		return r.unbind(ctx, pod)
	}
	if !r.computeSharing && r.nodes.node[node].jobs > 0 {
		return fmt.Errorf("broker: pod %s of job %s was bound to node %s, which already runs a job, but Batsim runs without compute sharing: run batsim with --enable-compute-sharing", ref, j.id, node)
	}
	reserved, reason, message := r.nodes.admit(node, pod)
	if reason != "" {
		return r.refuse(ctx, j, ref, node, reason, message)
	}
	j.nodes[ref] = node
	j.reserved[ref] = reserved
	r.step.bound = true
	r.live.lastBound = time.Now()
	if len(j.nodes) == len(j.pods) {
		return r.execute(j)
	}
	return nil
}

// refuse is the kubelet refusing a pod that does not fit on its node (a
// scheduler's mistake, or two schedulers racing): the pod fails as the
// kubelet fails it, with an event, and its job, which cannot start, is
// rejected.
func (r *run) refuse(ctx context.Context, j *job, ref podRef, node, reason, message string) error {
	r.log.Warn("a pod was bound to a node without room for it: the kubelet refuses it and its job is rejected",
		"pod", ref.String(), "node", node, "reason", reason, "message", message)
	r.rejected++
	j.refusal, j.endedAt = reason, r.opts.Clock.Seconds()
	r.owners.ended(j, batsim.JobStateRejected)
	if err := r.setStage(ctx, []podRef{ref}, rejectedStage(reason, message), 0); err != nil {
		return err
	}
	r.recordEvent(ctx, ref, node, corev1.EventTypeWarning, reason, message)
	r.step.decisions = append(r.step.decisions, batsim.RejectJob{JobID: j.id})
	r.releaseJob(ctx, j)
	r.jobs.setPhase(j, jobFinished)
	j.rejected = true
	// The refused pod stays, Failed, until finished pods are removed; the
	// job's other pods go at once, as for any rejected job.
	for _, other := range j.pods {
		if other != ref {
			r.remove(ctx, other)
		}
	}
	r.finishLater(ref)
	return nil
}

// recordEvent writes a core Event about a pod, as its kubelet would.
func (r *run) recordEvent(ctx context.Context, ref podRef, node, typ, reason, message string) {
	now := metav1.NewTime(r.opts.Clock.Now())
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: ref.name + ".", Namespace: ref.namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ref.namespace, Name: ref.name, APIVersion: "v1"},
		Reason:         reason, Message: message, Type: typ, Count: 1,
		FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "kubelet", Host: node},
	}
	if _, err := r.api.Create(ctx, eventsGVR, ev); err != nil {
		r.log.Warn("recording an event", "pod", ref.String(), "reason", reason, "err", err)
	}
}

var eventsGVR = corev1.SchemeGroupVersion.WithResource("events")

// maxUnbinds is how many times in one step a scheduler may bind a pod to
// a node whose machine is unavailable before the run ends with an error
// (it would loop for ever).
const maxUnbinds = 20

// unbind puts a pod bound to an unavailable node back to pending: a pod's
// node cannot change, so it is removed and created again, unbound (as a
// controller would recreate it).
func (r *run) unbind(ctx context.Context, pod *corev1.Pod) error {
	ref := podRef{pod.Namespace, pod.Name}
	if r.step.unbound == nil {
		r.step.unbound = map[podRef]int{}
	}
	if r.step.unbound[ref]++; r.step.unbound[ref] > maxUnbinds {
		return fmt.Errorf("the scheduler bound pod %s to node %s, whose machine is unavailable, %d times at this instant: "+
			"it ignores that the node is not Ready and its %s taints (NoSchedule, NoExecute), and the run cannot go on",
			ref, pod.Spec.NodeName, r.step.unbound[ref], corev1.TaintNodeUnreachable)
	}
	r.log.Warn("a pod was bound to a node whose machine is unavailable: it is recreated, pending", "pod", pod.Namespace+"/"+pod.Name, "node", pod.Spec.NodeName)
	fresh := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace,
		Labels: maps.Clone(pod.Labels), Annotations: maps.Clone(pod.Annotations)}, Spec: *pod.Spec.DeepCopy()}
	fresh.Spec.NodeName = ""
	r.deletePod(ctx, podRef{pod.Namespace, pod.Name})
	if _, err := r.api.Create(ctx, podsGVR, fresh); err != nil {
		return fmt.Errorf("recreating pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// podTerminating handles a client's deletion of a bound pod: its job is
// killed (rejected if it had not started yet); a preempted pod's job may be
// submitted again.
func (r *run) podTerminating(ctx context.Context, pod *corev1.Pod) error {
	j := r.jobs.byPod[podRef{pod.Namespace, pod.Name}]
	if j == nil || j.phase == jobFinished {
		r.remove(ctx, podRef{pod.Namespace, pod.Name})
		return nil
	}
	if j.phase == jobPending {
		r.reject(ctx, j)
	} else {
		r.kill(j)
	}
	if preemptedByScheduler(pod) {
		return r.preempted(ctx, j, pod)
	}
	return nil
}
