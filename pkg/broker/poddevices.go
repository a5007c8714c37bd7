package broker

import (
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/batkube/batkube/pkg/outputs"
)

// resourceClaimsGR are the pods' resource claims (DRA), whose allocations
// _pods.csv records.
var resourceClaimsGR = resourcev1.SchemeGroupVersion.WithResource("resourceclaims").GroupResource()

// podDevices says which devices a started pod's resource claims hold, for
// the devices column of _pods.csv (outputs.FormatDevices): each device of
// each claim, in the pod's order of claims and the allocation's order of
// results, with the parts of its capacity the claim consumes (a shared
// GPU's "milli"). A claim not allocated (or gone) adds nothing.
func (r *run) podDevices(ref podRef) string {
	st, err := r.store.Get(podsGVR.GroupResource(), ref.namespace, ref.name)
	if err != nil {
		return ""
	}
	pod, ok := st.Object().(*corev1.Pod)
	if !ok || len(pod.Spec.ResourceClaims) == 0 {
		return ""
	}
	var devices []outputs.DeviceUse
	for _, c := range pod.Spec.ResourceClaims {
		name := claimName(pod, c)
		if name == "" {
			continue
		}
		st, err := r.store.Get(resourceClaimsGR, pod.Namespace, name)
		if err != nil {
			continue
		}
		claim, ok := st.Object().(*resourcev1.ResourceClaim)
		if !ok || claim.Status.Allocation == nil {
			continue
		}
		for _, res := range claim.Status.Allocation.Devices.Results {
			d := outputs.DeviceUse{Device: res.Pool + "/" + res.Device}
			for name, q := range res.ConsumedCapacity {
				if d.Consumed == nil {
					d.Consumed = map[string]resource.Quantity{}
				}
				d.Consumed[string(name)] = q
			}
			devices = append(devices, d)
		}
	}
	return outputs.FormatDevices(devices)
}

// claimName is the name of the ResourceClaim behind a pod's claim: the one
// it names, or the one made from its template (the pod's status says
// which).
func claimName(pod *corev1.Pod, c corev1.PodResourceClaim) string {
	if c.ResourceClaimName != nil {
		return *c.ResourceClaimName
	}
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.Name == c.Name && s.ResourceClaimName != nil {
			return *s.ResourceClaimName
		}
	}
	return ""
}
