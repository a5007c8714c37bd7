package table

import (
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// printerFor returns the printer of an object or of the items of a list (an
// empty list still gets its kind's columns).
func printerFor(obj runtime.Object) printer {
	switch obj.(type) {
	case *corev1.Pod, *corev1.PodList:
		return podPrinter
	case *corev1.Node, *corev1.NodeList:
		return nodePrinter
	case *corev1.Namespace, *corev1.NamespaceList:
		return namespacePrinter
	case *corev1.Event, *corev1.EventList:
		return eventPrinter
	case *eventsv1.Event, *eventsv1.EventList:
		return eventsV1Printer
	case *corev1.Service, *corev1.ServiceList:
		return servicePrinter
	case *corev1.ConfigMap, *corev1.ConfigMapList:
		return configMapPrinter
	case *appsv1.Deployment, *appsv1.DeploymentList:
		return deploymentPrinter
	case *appsv1.ReplicaSet, *appsv1.ReplicaSetList:
		return replicaSetPrinter
	case *appsv1.StatefulSet, *appsv1.StatefulSetList:
		return statefulSetPrinter
	case *coordinationv1.Lease, *coordinationv1.LeaseList:
		return leasePrinter
	case *schedulingv1.PriorityClass, *schedulingv1.PriorityClassList:
		return priorityClassPrinter
	case *policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList:
		return podDisruptionBudgetPrinter
	}
	return defaultPrinter
}
