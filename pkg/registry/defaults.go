package registry

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

// DefaultSchedulerName is the scheduler a pod gets when it names none.
const DefaultSchedulerName = corev1.DefaultSchedulerName

// ApplyDefaults fills the fields the real API server defaults on create and
// that clients rely on (kube-scheduler only schedules pods whose
// schedulerName it owns, and reads requests that default from limits).
func ApplyDefaults(obj runtime.Object) {
	switch o := obj.(type) {
	case *corev1.Pod:
		defaultPodSpec(&o.Spec)
	case *corev1.Namespace:
		if o.Status.Phase == "" {
			o.Status.Phase = corev1.NamespaceActive
		}
		if len(o.Spec.Finalizers) == 0 {
			o.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
		}
		// kube-apiserver labels every namespace with its own name (on
		// create and update), which namespace selectors match on, e.g. a
		// Kueue ClusterQueue's.
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		o.Labels[corev1.LabelMetadataName] = o.Name
	case *corev1.Node:
		if o.Status.Capacity != nil && o.Status.Allocatable == nil {
			o.Status.Allocatable = o.Status.Capacity.DeepCopy()
		}
	case *batchv1.Job:
		defaultJob(o)
	case *appsv1.ReplicaSet:
		defaultReplicaSet(o)
	case *appsv1.Deployment:
		defaultDeployment(o)
	case *resourcev1.ResourceClaim:
		defaultDeviceRequests(&o.Spec)
	case *resourcev1.ResourceClaimTemplate:
		defaultDeviceRequests(&o.Spec.Spec)
	}
}

func defaultPodSpec(spec *corev1.PodSpec) {
	if spec.SchedulerName == "" {
		spec.SchedulerName = DefaultSchedulerName
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.TerminationGracePeriodSeconds == nil {
		grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
		spec.TerminationGracePeriodSeconds = &grace
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.EnableServiceLinks == nil {
		enable := corev1.DefaultEnableServiceLinks
		spec.EnableServiceLinks = &enable
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
}

func defaultContainer(c *corev1.Container) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = corev1.PullIfNotPresent
		if tagIsLatest(c.Image) {
			c.ImagePullPolicy = corev1.PullAlways
		}
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	// A limit without a request defaults the request (what the scheduler sums).
	for name, limit := range c.Resources.Limits {
		if _, ok := c.Resources.Requests[name]; ok {
			continue
		}
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		c.Resources.Requests[name] = limit.DeepCopy()
	}
}

func tagIsLatest(image string) bool {
	if strings.Contains(image, "@") {
		return false
	}
	slash := strings.LastIndex(image, "/")
	colon := strings.LastIndex(image, ":")
	if colon <= slash {
		return true
	}
	return image[colon+1:] == "latest"
}

// PodQOSClass computes the quality of service class of a pod from its
// containers' requests and limits (cpu and memory), as the kubelet does.
func PodQOSClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	isGuaranteed := true
	anySet := false
	containers := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	for _, c := range containers {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[name]
			lim, hasLim := c.Resources.Limits[name]
			if (hasReq && !req.IsZero()) || (hasLim && !lim.IsZero()) {
				anySet = true
			}
			if !hasLim || lim.IsZero() || (hasReq && !quantityEqual(req, lim)) {
				isGuaranteed = false
			}
		}
	}
	switch {
	case !anySet:
		return corev1.PodQOSBestEffort
	case isGuaranteed:
		return corev1.PodQOSGuaranteed
	default:
		return corev1.PodQOSBurstable
	}
}

func quantityEqual(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }
