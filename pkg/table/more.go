package table

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/eventconv"
)

// Printers of events, workloads, leases and scheduling objects.

var eventDoc = corev1.Event{}.SwaggerDoc()

var eventColumns = []metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string", Description: eventDoc["lastTimestamp"]},
	{Name: "Type", Type: "string", Description: eventDoc["type"]},
	{Name: "Reason", Type: "string", Description: eventDoc["reason"]},
	{Name: "Object", Type: "string", Description: eventDoc["involvedObject"]},
	{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
	{Name: "Source", Type: "string", Priority: 1, Description: eventDoc["source"]},
	{Name: "Message", Type: "string", Description: eventDoc["message"]},
	{Name: "First Seen", Type: "string", Priority: 1, Description: eventDoc["firstTimestamp"]},
	{Name: "Count", Type: "string", Priority: 1, Description: eventDoc["count"]},
	{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: objectMetaDoc["name"]},
}

// Both event APIs share one storage on a real server, hence one printer.
var (
	eventPrinter = typed(eventColumns, func(e *corev1.Event, now time.Time) metav1.TableRow {
		return eventRow(e, now)
	})
	eventsV1Printer = typed(eventColumns, func(e *eventsv1.Event, now time.Time) metav1.TableRow {
		return eventRow(eventconv.ToCore(e), now)
	})
)

func eventRow(e *corev1.Event, now time.Time) metav1.TableRow {
	first := age(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = microAge(e.EventTime, now)
	}
	last := age(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = microAge(e.Series.LastObservedTime, now)
		count = e.Series.Count
	} else if count == 0 {
		count = 1 // singleton events of the new API have no count
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	return metav1.TableRow{Cells: []any{
		last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath,
		eventSource(e), strings.TrimSpace(e.Message), first, int64(count), e.Name,
	}}
}

// eventSource is "component, host", falling back on the reporting
// controller and instance of the new API.
func eventSource(e *corev1.Event) string {
	component, host := e.Source.Component, e.Source.Host
	if component == "" {
		component = e.ReportingController
	}
	if host == "" {
		host = e.ReportingInstance
	}
	if host == "" {
		return component
	}
	return component + ", " + host
}

var (
	containersColumn = metav1.TableColumnDefinition{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."}
	imagesColumn     = metav1.TableColumnDefinition{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."}
)

// containerCells are the CONTAINERS and IMAGES cells of a pod template.
func containerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	im := make([]string, len(containers))
	for i, c := range containers {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// replicas is a defaulted replica count (nil means the default, 1).
func replicas(r *int32) int64 {
	if r == nil {
		return 1
	}
	return int64(*r)
}

var deploymentPrinter = typed([]metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
	{Name: "Up-to-date", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]},
	{Name: "Available", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]},
}, func(d *appsv1.Deployment, now time.Time) metav1.TableRow {
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	return metav1.TableRow{Cells: []any{
		d.Name, fmt.Sprintf("%d/%d", int64(d.Status.ReadyReplicas), replicas(d.Spec.Replicas)),
		int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), age(d.CreationTimestamp, now),
		names, images, selectorString(d.Spec.Selector),
	}}
})

// selectorString formats a label selector as a deployment's SELECTOR cell.
func selectorString(s *metav1.LabelSelector) string {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return "<invalid>"
	}
	return sel.String()
}

var replicaSetPrinter = typed([]metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Desired", Type: "integer", Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]},
	{Name: "Current", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]},
	{Name: "Ready", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"]},
}, func(rs *appsv1.ReplicaSet, now time.Time) metav1.TableRow {
	names, images := containerCells(rs.Spec.Template.Spec.Containers)
	return metav1.TableRow{Cells: []any{
		rs.Name, replicas(rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
		age(rs.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(rs.Spec.Selector),
	}}
})

var statefulSetPrinter = typed([]metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
	ageColumn,
	containersColumn,
	imagesColumn,
}, func(s *appsv1.StatefulSet, now time.Time) metav1.TableRow {
	names, images := containerCells(s.Spec.Template.Spec.Containers)
	return metav1.TableRow{Cells: []any{
		s.Name, fmt.Sprintf("%d/%d", int64(s.Status.ReadyReplicas), replicas(s.Spec.Replicas)),
		age(s.CreationTimestamp, now), names, images,
	}}
})

var leasePrinter = typed([]metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
	ageColumn,
}, func(l *coordinationv1.Lease, now time.Time) metav1.TableRow {
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return metav1.TableRow{Cells: []any{l.Name, holder, age(l.CreationTimestamp, now)}}
})

var priorityClassDoc = schedulingv1.PriorityClass{}.SwaggerDoc()

var priorityClassPrinter = typed([]metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Value", Type: "integer", Description: priorityClassDoc["value"]},
	{Name: "Global-Default", Type: "boolean", Description: priorityClassDoc["globalDefault"]},
	ageColumn,
	{Name: "PreemptionPolicy", Type: "string", Description: priorityClassDoc["preemptionPolicy"]},
}, func(pc *schedulingv1.PriorityClass, now time.Time) metav1.TableRow {
	policy := ""
	if pc.PreemptionPolicy != nil {
		policy = string(*pc.PreemptionPolicy)
	}
	return metav1.TableRow{Cells: []any{pc.Name, int64(pc.Value), pc.GlobalDefault, age(pc.CreationTimestamp, now), policy}}
})

var podDisruptionBudgetPrinter = typed([]metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
	{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
	{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
	ageColumn,
}, func(pdb *policyv1.PodDisruptionBudget, now time.Time) metav1.TableRow {
	minAvailable, maxUnavailable := "N/A", "N/A"
	if pdb.Spec.MinAvailable != nil {
		minAvailable = pdb.Spec.MinAvailable.String()
	}
	if pdb.Spec.MaxUnavailable != nil {
		maxUnavailable = pdb.Spec.MaxUnavailable.String()
	}
	return metav1.TableRow{Cells: []any{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), age(pdb.CreationTimestamp, now)}}
})
