package registry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// PodForStatusChange returns a copy of pod (a *corev1.Pod, read only) for a
// change of its metadata, its status and the scalar fields of its spec
// (spec.nodeName): the metadata and the status are copied deeply, the spec
// by value, so its slices, maps and pointers (containers, volumes,
// tolerations, affinity...) are shared with pod and must be left as they
// are. Other objects are copied deeply.
func PodForStatusChange(obj runtime.Object) runtime.Object {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj.DeepCopyObject()
	}
	out := &corev1.Pod{TypeMeta: pod.TypeMeta, Spec: pod.Spec}
	pod.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	pod.Status.DeepCopyInto(&out.Status)
	return out
}

// PodForMetadataChange returns a copy of pod (a *corev1.Pod, read only)
// for a change of its metadata only (the state a deletion records): the
// metadata is copied deeply, the spec and the status by value, sharing
// their slices, maps and pointers with pod. Other objects are copied
// deeply.
func PodForMetadataChange(obj runtime.Object) runtime.Object {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj.DeepCopyObject()
	}
	out := &corev1.Pod{TypeMeta: pod.TypeMeta, Spec: pod.Spec, Status: pod.Status}
	pod.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}
