// Package registry holds the per-kind rules of the Kubernetes API that the
// generic REST layer applies: field selector sets, defaults on create,
// validation, and the split between an object and its status subresource.
package registry

import (
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// metaFields are the field selector labels every kind supports.
var metaFields = []string{"metadata.name", "metadata.namespace"}

// kindFields lists the extra field labels a kind supports, as the real API
// server does (kubectl, kube-scheduler and controllers use these).
var kindFields = map[string][]string{
	"Pod": {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
		"spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName"},
	"Node":      {"spec.unschedulable"},
	"Namespace": {"status.phase"},
	"Event": {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
		"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
		"reason", "reportingComponent", "source", "type"},
	"Secret":  {"type"},
	"Service": {"spec.clusterIP", "spec.type"},
}

// SupportedFields returns the field selector labels supported for kind.
func SupportedFields(kind string) []string {
	return append(slices.Clone(metaFields), kindFields[kind]...)
}

// CheckFieldSelector returns an error naming the first field of sel that kind
// does not support, like the real API server's "field label not supported".
func CheckFieldSelector(kind string, sel fields.Selector) error {
	if sel == nil || sel.Empty() {
		return nil
	}
	return CheckFields(SupportedFields(kind), sel)
}

// CheckFields returns an error naming the first field of sel that is not
// among supported (a custom resource's metadata and selectable fields).
func CheckFields(supported []string, sel fields.Selector) error {
	if sel == nil || sel.Empty() {
		return nil
	}
	for _, r := range sel.Requirements() {
		if !slices.Contains(supported, r.Field) {
			return fmt.Errorf("%q is not a known field selector: only %q", r.Field, supported)
		}
	}
	return nil
}

// FieldSet returns the field selector values of obj.
func FieldSet(obj runtime.Object) fields.Set {
	m, ok := obj.(metav1.Object)
	if !ok {
		return fields.Set{}
	}
	set := fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}
	KindFields(obj, func(name, value string) { set[name] = value })
	return set
}

// KindFields calls add with each field selector value of obj beyond its
// metadata.name and metadata.namespace.
func KindFields(obj runtime.Object, add func(name, value string)) {
	switch o := obj.(type) {
	case *corev1.Pod:
		add("spec.nodeName", o.Spec.NodeName)
		add("spec.restartPolicy", string(o.Spec.RestartPolicy))
		add("spec.schedulerName", o.Spec.SchedulerName)
		add("spec.serviceAccountName", o.Spec.ServiceAccountName)
		add("spec.hostNetwork", strconv.FormatBool(o.Spec.HostNetwork))
		add("status.phase", string(o.Status.Phase))
		add("status.podIP", o.Status.PodIP)
		add("status.nominatedNodeName", o.Status.NominatedNodeName)
		if len(o.Status.PodIPs) > 0 {
			add("status.podIPs", o.Status.PodIPs[0].IP)
		}
	case *corev1.Node:
		add("spec.unschedulable", strconv.FormatBool(o.Spec.Unschedulable))
	case *corev1.Namespace:
		add("status.phase", string(o.Status.Phase))
	case *corev1.Event:
		add("involvedObject.kind", o.InvolvedObject.Kind)
		add("involvedObject.namespace", o.InvolvedObject.Namespace)
		add("involvedObject.name", o.InvolvedObject.Name)
		add("involvedObject.uid", string(o.InvolvedObject.UID))
		add("involvedObject.apiVersion", o.InvolvedObject.APIVersion)
		add("involvedObject.resourceVersion", o.InvolvedObject.ResourceVersion)
		add("involvedObject.fieldPath", o.InvolvedObject.FieldPath)
		add("reason", o.Reason)
		add("reportingComponent", o.ReportingController)
		add("source", o.Source.Component)
		add("type", o.Type)
	case *eventsv1.Event:
		add("reason", o.Reason)
		add("type", o.Type)
	case *corev1.Secret:
		add("type", string(o.Type))
	case *corev1.Service:
		add("spec.clusterIP", o.Spec.ClusterIP)
		add("spec.type", string(o.Spec.Type))
	}
}

// StoreFields adapts KindFields to the store's per-resource field function.
func StoreFields(_ schema.GroupResource, obj runtime.Object, add func(name, value string)) {
	KindFields(obj, add)
}
