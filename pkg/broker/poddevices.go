package broker

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
)

// resourceClaimsGR are the pods' resource claims (DRA), whose allocations
// _pods.csv records.
var resourceClaimsGR = resourcev1.SchemeGroupVersion.WithResource("resourceclaims").GroupResource()

// podDevices says which devices a started pod's resource claims hold, for
// the devices column of _pods.csv: "pool/device" for each device of each
// claim, in the pod's order of claims and the allocation's order of
// results, followed by ":name=quantity" for each part of the device's
// capacity the claim consumes (a shared GPU's "milli"), the devices
// separated by ";". A claim not allocated (or gone) adds nothing.
func (r *run) podDevices(ref podRef) string {
	st, err := r.store.Get(podsGVR.GroupResource(), ref.namespace, ref.name)
	if err != nil {
		return ""
	}
	pod, ok := st.Object().(*corev1.Pod)
	if !ok || len(pod.Spec.ResourceClaims) == 0 {
		return ""
	}
	var devices []string
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
			devices = append(devices, deviceCell(res))
		}
	}
	return strings.Join(devices, ";")
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

// deviceCell is one device of a claim's allocation: "pool/device", then
// ":name=quantity" for each part of its capacity consumed, by name.
func deviceCell(res resourcev1.DeviceRequestAllocationResult) string {
	var b strings.Builder
	b.WriteString(res.Pool + "/" + res.Device)
	for _, name := range slices.Sorted(maps.Keys(res.ConsumedCapacity)) {
		q := res.ConsumedCapacity[name]
		b.WriteString(":" + string(name) + "=" + q.String())
	}
	return b.String()
}
