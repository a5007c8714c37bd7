package qosdriven

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/examples/schedulers/qos/internal/ledger"
)

// identify returns the controller a pod belongs to and its SLO, and
// whether the pod's SLO was given but invalid (the default is used then):
//
//   - the value of cfg.controllerLabel, as namespace/value;
//   - else its controlling owner, as namespace/Kind/name;
//   - else the pod alone, as namespace/pod/name (ephemeral).
//
// The SLO is the pod's cfg.sloKey annotation, else label, else the default.
func (c config) identify(pod *corev1.Pod) (id ledger.Identity, badSLO bool) {
	switch owner := metav1.GetControllerOfNoCopy(pod); {
	case pod.Labels[c.controllerLabel] != "":
		id.Controller = pod.Namespace + "/" + pod.Labels[c.controllerLabel]
	case owner != nil:
		id.Controller = pod.Namespace + "/" + owner.Kind + "/" + owner.Name
	default:
		id.Controller, id.Ephemeral = pod.Namespace+"/pod/"+pod.Name, true
	}
	id.SLO = c.defaultSLO
	v, ok := pod.Annotations[c.sloKey]
	if !ok {
		v, ok = pod.Labels[c.sloKey]
	}
	if ok {
		s, err := strconv.ParseFloat(v, 64)
		if err != nil || !validSLO(s) {
			return id, true
		}
		id.SLO = s
	}
	return id, false
}

// startedAt returns when a pod started running, if it did.
func startedAt(pod *corev1.Pod) (time.Time, bool) {
	if pod.Status.StartTime == nil || pod.Status.Phase == corev1.PodPending {
		return time.Time{}, false
	}
	return pod.Status.StartTime.Time, true
}

// scheduledAt returns when a pod was bound: its PodScheduled condition's
// transition, if true.
func scheduledAt(pod *corev1.Pod) (time.Time, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// finishedAt returns when the last container of a terminated pod
// finished, if its status says so. (A real API server's watch with
// kube-scheduler's field selector, which drops finished pods, hands over
// the pod as it was before it finished: the instant is then unknown.)
func finishedAt(pod *corev1.Pod) (time.Time, bool) {
	var last time.Time
	for _, s := range pod.Status.ContainerStatuses {
		if t := s.State.Terminated; t != nil && t.FinishedAt.After(last) {
			last = t.FinishedAt.Time
		}
	}
	return last, !last.IsZero()
}

// terminal reports whether a pod has finished.
func terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
