package broker

import (
	"context"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/podres"
	"github.com/batkube/batkube/pkg/registry"
)

// The kubelet's part of a simulation: pods bound to a node are admitted
// against the node's allocatable resources, started when Batsim starts
// their job, and finished as their job ends. What the kubelet writes into
// a pod's status at each of these points is described as data (podStage),
// as KWOK describes a fake kubelet's stages.

// podStage is a pod's status at one point of its life, as a kubelet writes it.
type podStage struct {
	phase corev1.PodPhase
	// reason and message go into the pod's status (empty: cleared).
	reason, message string
	// ready is the status of the Initialized, ContainersReady and Ready
	// conditions ("" leaves them as they are); readyReason their reason.
	ready       corev1.ConditionStatus
	readyReason string
	// containers is the state of every container: running, terminated
	// (with terminatedReason), or untouched (the pod never started).
	containers       containerState
	terminatedReason string
	// disruption, if set, is the reason of a DisruptionTarget condition
	// (the pod ends because of its node, not of its own doing).
	disruption string
}

type containerState int

const (
	containersUntouched containerState = iota
	containersRunning
	containersTerminated
)

// stageRunning: Batsim started the pod's job.
var stageRunning = podStage{phase: corev1.PodRunning, ready: corev1.ConditionTrue, containers: containersRunning}

// finalStages are the stages a finished job leaves its pods in, by the
// job's final state in Batsim.
var finalStages = map[batsim.JobState]podStage{
	batsim.JobStateCompletedSuccessfully: {phase: corev1.PodSucceeded, ready: corev1.ConditionFalse, readyReason: "PodCompleted",
		containers: containersTerminated, terminatedReason: "Completed"},
	// A walltime is its pods' deadline (translate.Deadline).
	batsim.JobStateCompletedWalltimeReached: {phase: corev1.PodFailed, reason: "DeadlineExceeded",
		message: "Pod was active on the node longer than the specified deadline", ready: corev1.ConditionFalse, readyReason: "PodCompleted",
		containers: containersTerminated, terminatedReason: "DeadlineExceeded"},
	batsim.JobStateCompletedKilled: {phase: corev1.PodFailed, ready: corev1.ConditionFalse, readyReason: "PodCompleted",
		containers: containersTerminated, terminatedReason: "Killed"},
	batsim.JobStateCompletedFailed: {phase: corev1.PodFailed, ready: corev1.ConditionFalse, readyReason: "PodCompleted",
		containers: containersTerminated, terminatedReason: "Error"},
}

// stageLost: the pod's machine became unavailable (a Batsim external event)
// and Batsim killed its job. A kubelet whose node goes away terminates its
// pods as for a node shutdown: Failed, with a DisruptionTarget condition
// (which a Job's podFailurePolicy may ignore) and the exit code of a
// killed container (137). The Job controller counts such a pod failed
// and replaces it.
var stageLost = podStage{phase: corev1.PodFailed, reason: "Terminated",
	message: "Pod was terminated in response to imminent node shutdown.", ready: corev1.ConditionFalse, readyReason: "PodCompleted",
	containers: containersTerminated, terminatedReason: "Error", disruption: "TerminationByKubelet"}

// exitKilled is the exit code of a container killed by SIGKILL.
const exitKilled = 137

// rejectedStage is the stage of a pod the kubelet refuses to admit, as
// kubelet.rejectPod writes it: Failed, reason OutOf<resource>, and the
// message of the admission check.
func rejectedStage(reason, message string) podStage {
	return podStage{phase: corev1.PodFailed, reason: reason, message: "Pod was rejected: " + message}
}

// apply writes the stage into pod at instant at; exit is the exit code of
// terminated containers.
func (s podStage) apply(pod *corev1.Pod, at metav1.Time, exit int32) {
	pod.Status.Phase = s.phase
	pod.Status.Reason, pod.Status.Message = s.reason, s.message
	if s.ready != "" {
		for _, c := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			if c == corev1.PodInitialized && s.ready == corev1.ConditionFalse {
				continue // a finished pod stays initialized
			}
			registry.SetPodCondition(&pod.Status, corev1.PodCondition{Type: c, Status: s.ready, LastTransitionTime: at, Reason: s.readyReason})
		}
	}
	if s.disruption != "" {
		registry.SetPodCondition(&pod.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			LastTransitionTime: at, Reason: s.disruption, Message: s.message})
	}
	switch s.containers {
	case containersRunning:
		pod.Status.StartTime = &at
		pod.Status.HostIP = pod.Spec.NodeName
		started := true
		pod.Status.ContainerStatuses = pod.Status.ContainerStatuses[:0]
		for _, c := range pod.Spec.Containers {
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: &started,
				ContainerID: "batkube://" + pod.Name + "/" + c.Name,
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}},
			})
		}
	case containersTerminated:
		for i := range pod.Status.ContainerStatuses {
			cs := &pod.Status.ContainerStatuses[i]
			started := at
			if cs.State.Running != nil {
				started = cs.State.Running.StartedAt
			}
			cs.Ready = false
			cs.Started = new(bool)
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exit, Reason: s.terminatedReason, StartedAt: started, FinishedAt: at}}
		}
	}
}

// hasCondition reports whether a pod carries a condition of type typ,
// whatever its status: PodScheduled is set by a binding, or by a scheduler
// that found no node for the pod.
func hasCondition(pod *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// setStage writes stage into the pods of refs at the current simulated
// instant. Pods already gone are skipped.
func (r *run) setStage(ctx context.Context, refs []podRef, stage podStage, exit int32) error {
	at := metav1.NewTime(r.opts.Clock.Now())
	for _, ref := range refs {
		err := r.api.SetPodStatus(ctx, ref.namespace, ref.name, func(pod *corev1.Pod) error {
			stage.apply(pod, at, exit)
			return nil
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("setting pod %s %s: %w", ref, stage.phase, err)
		}
	}
	return nil
}

// Admission.

// admissionOrder is the order in which the kubelet's admission checks a
// pod's requests (the scheduler's fitsRequest order): pods, cpu, memory,
// ephemeral storage, then extended resources by name. The first that does
// not fit names the rejection.
var admissionOrder = []corev1.ResourceName{corev1.ResourcePods, corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}

// admit reserves on node what pod requests, as a kubelet admits a pod, and
// returns what it reserved; reason is "" when it fits, else the reason
// (OutOfcpu...) and message the kubelet gives, and nothing is reserved.
func (n *nodes) admit(node string, pod *corev1.Pod) (reserved map[corev1.ResourceName]int64, reason, message string) {
	u := n.node[node]
	req := podres.Requests(pod)
	names := slices.Clone(admissionOrder)
	var extended []corev1.ResourceName
	for name := range req {
		if !slices.Contains(admissionOrder, name) {
			extended = append(extended, name)
		}
	}
	sort.Slice(extended, func(i, j int) bool { return extended[i] < extended[j] })
	names = append(names, extended...)
	for _, name := range names {
		want, ok := req[name]
		if !ok || want == 0 {
			continue
		}
		capacity, used := u.allocatable[name], u.used[name]
		if used+want > capacity {
			return nil, "OutOf" + string(name), fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
				name, want, used, capacity)
		}
	}
	for name, want := range req {
		u.used[name] += want
	}
	return req, "", ""
}

// release gives back what an admitted pod reserved on node.
func (n *nodes) release(node string, reserved map[corev1.ResourceName]int64) {
	if u := n.node[node]; u != nil {
		for name, v := range reserved {
			u.used[name] -= v
		}
	}
}

// releaseJob gives back what the pods of j reserved on their nodes.
func (r *run) releaseJob(_ context.Context, j *job) {
	for ref, node := range j.nodes {
		r.nodes.release(node, j.reserved[ref])
		delete(j.reserved, ref)
		if u := r.nodes.node[node]; u != nil && j.phase == jobRunning {
			u.jobs-- // (a launched node deleted meanwhile is gone)
		}
	}
	clear(j.nodes)
}
