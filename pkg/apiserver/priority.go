package apiserver

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/store"
)

// Priority admission: a pod's (or pod group's) priority from its
// PriorityClass, or the global default, as the Priority admission plugin
// sets it.

// resolvePriority sets a pod's priority from its PriorityClass (or the global
// default one), as the Priority admission plugin does.
func (s *Server) resolvePriority(pod *corev1.Pod) error {
	name, value, policy, err := s.priorityClass(podsResource.GroupResource(), pod.Name, pod.Spec.PriorityClassName)
	if err != nil {
		return err
	}
	pod.Spec.PriorityClassName = name
	pod.Spec.Priority = &value
	pod.Spec.PreemptionPolicy = policy
	return nil
}

// keepPriority keeps, in an update of a pod that does not state them, the
// priority and preemption policy its creation resolved, as the Priority
// admission plugin does on update (update validation refuses any other
// change of them).
func keepPriority(pod, old *corev1.Pod) {
	if pod.Spec.Priority == nil {
		pod.Spec.Priority = old.Spec.Priority
	}
	if pod.Spec.PreemptionPolicy == nil {
		pod.Spec.PreemptionPolicy = old.Spec.PreemptionPolicy
	}
}

// resolvePodGroupPriority sets a pod group's priority from its
// PriorityClass (or the global default one), as the Priority admission
// plugin does with the GenericWorkload feature: kube-scheduler refuses a
// gang whose pods' priority differs from their group's. A priority set by
// the client must be the one its class gives.
func (s *Server) resolvePodGroupPriority(gr schema.GroupResource, name string, className *string, priority **int32) error {
	class, value, _, err := s.priorityClass(gr, name, *className)
	if err != nil {
		return err
	}
	if *priority != nil && **priority != value {
		return apierrors.NewForbidden(gr, name, fmt.Errorf("priority set in the pod group (%d) must match the priority computed (%d) based on the priority class set in the spec", **priority, value))
	}
	*className, *priority = class, &value
	return nil
}

// priorityClass resolves a priority class name as the Priority admission
// plugin does: the named class, the built-in system classes, or with no
// name the global default class (name "" and priority 0 without one). The
// preemption policy defaults to PreemptLowerPriority.
func (s *Server) priorityClass(gr schema.GroupResource, objName, name string) (string, int32, *corev1.PreemptionPolicy, error) {
	var value int32
	var policy *corev1.PreemptionPolicy
	switch name {
	case "system-node-critical":
		value = 2000001000
	case "system-cluster-critical":
		value = 2000000000
	default:
		if name == "" {
			list, err := s.store.List(priorityClasses, store.ListOptions{})
			if err != nil {
				return "", 0, nil, err
			}
			name, value, policy = globalDefaultPriority(list.Items)
			break
		}
		st, err := s.store.Get(priorityClasses, "", name)
		if err != nil {
			return "", 0, nil, apierrors.NewForbidden(gr, objName, fmt.Errorf("no PriorityClass with name %v was found", name))
		}
		value, policy = priorityOf(st.Object())
	}
	if policy == nil {
		p := corev1.PreemptLowerPriority
		policy = &p
	}
	return name, value, policy, nil
}

// globalDefaultPriority returns the PriorityClass marked globalDefault, if any.
func globalDefaultPriority(items []*store.Stored) (string, int32, *corev1.PreemptionPolicy) {
	for _, st := range items {
		if pc, ok := st.Object().(*schedulingv1.PriorityClass); ok && pc.GlobalDefault {
			return pc.Name, pc.Value, pc.PreemptionPolicy
		}
	}
	return "", 0, nil
}

func priorityOf(obj store.Object) (int32, *corev1.PreemptionPolicy) {
	if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
		return pc.Value, pc.PreemptionPolicy
	}
	return 0, nil
}
