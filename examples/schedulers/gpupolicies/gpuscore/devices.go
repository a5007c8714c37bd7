package gpuscore

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/batkube/batkube/examples/schedulers/gpupolicies/policy"
)

// errUnsupported marks GPU requests the paper's model (so many GPUs of so
// many thousandths each) cannot express: requests of different sizes,
// all the devices of a class, alternatives (firstAvailable).
var errUnsupported = errors.New("GPU requests the policies cannot score")

// demand reads what a pod asks for: its cpu, as kube-scheduler sums it,
// and its GPUs (podGPUs).
func (c config) demand(pod *corev1.Pod, claims fwk.ResourceClaimTracker) (policy.Demand, error) {
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	d := policy.Demand{CPU: requests.Cpu().MilliValue()}
	var err error
	d.GPUs, d.Milli, err = c.podGPUs(pod, claims)
	return d, err
}

// podGPUs reads the GPUs a pod asks for from its ResourceClaims: the
// requests of exactly Count devices (1 unless given) of the GPUs' device
// class, each for the amount of the capacity it requests (thousandths of a
// GPU), or for the whole GPU when it requests none.
func (c config) podGPUs(pod *corev1.Pod, claims fwk.ResourceClaimTracker) (gpus int, milli int64, err error) {
	for i := range pod.Spec.ResourceClaims {
		name, _, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil {
			return 0, 0, err
		}
		if name == nil {
			continue // no claim needed for this entry
		}
		claim, err := claims.Get(pod.Namespace, *name)
		if err != nil {
			return 0, 0, fmt.Errorf("pod %s/%s: claim %s: %w", pod.Namespace, pod.Name, *name, err)
		}
		for _, req := range claim.Spec.Devices.Requests {
			ex := req.Exactly
			if ex == nil {
				for _, sub := range req.FirstAvailable {
					if sub.DeviceClassName == c.deviceClass {
						return 0, 0, fmt.Errorf("claim %s/%s, request %s: alternatives (firstAvailable): %w", claim.Namespace, claim.Name, req.Name, errUnsupported)
					}
				}
				continue
			}
			if ex.DeviceClassName != c.deviceClass {
				continue
			}
			if ex.AllocationMode == resourcev1.DeviceAllocationModeAll {
				return 0, 0, fmt.Errorf("claim %s/%s, request %s: all devices: %w", claim.Namespace, claim.Name, req.Name, errUnsupported)
			}
			count, each := int(max(ex.Count, 1)), policy.MilliPerGPU
			if ex.Capacity != nil {
				if q, ok := ex.Capacity.Requests[c.capacity]; ok {
					each = q.Value()
				}
			}
			if each <= 0 || each > policy.MilliPerGPU || (gpus > 0 && each != milli) {
				return 0, 0, fmt.Errorf("claim %s/%s, request %s: %d thousandths of a GPU (after %d GPUs of %d): %w", claim.Namespace, claim.Name, req.Name, each, gpus, milli, errUnsupported)
			}
			gpus, milli = gpus+count, each
		}
	}
	return gpus, milli, nil
}

// gatherAttempts bounds the retries of GatherAllocatedState, which fails
// when claims change while it reads them (DynamicResources retries too).
const gatherAttempts = 1000

// addGPUs fills in the GPUs of the nodes (by name), as DRA's allocator
// sees them: the devices of the driver in the nodes' ResourceSlices, in
// the slices' order, and the thousandths left on each once the allocated
// and in-flight claims are counted.
func (c config) addGPUs(dra fwk.SharedDRAManager, nodes map[string]*policy.Node) error {
	slices, err := dra.ResourceSlices().ListWithDeviceTaintRules()
	if err != nil {
		return fmt.Errorf("listing ResourceSlices: %w", err)
	}
	var state *structured.AllocatedState
	for range gatherAttempts {
		if state, err = dra.ResourceClaims().GatherAllocatedState(); err == nil && state != nil {
			break
		}
	}
	if err != nil || state == nil {
		return fmt.Errorf("reading the allocated devices: %w", err)
	}
	for _, s := range slices {
		if s.Spec.Driver != c.driver || s.Spec.NodeName == nil {
			continue
		}
		n, ok := nodes[*s.Spec.NodeName]
		if !ok {
			continue
		}
		for i := range s.Spec.Devices {
			dev := &s.Spec.Devices[i]
			id := structured.MakeDeviceID(s.Spec.Driver, s.Spec.Pool.Name, dev.Name)
			n.GPULeft = append(n.GPULeft, c.left(dev, id, state))
			if n.Model == "" {
				n.Model = c.model(dev)
			}
		}
	}
	return nil
}

// left is what a device has left, in thousandths of a GPU: a shared
// device's capacity less what its claims consume (scaled to 1000 if the
// capacity is not); an exclusive one's all or nothing.
func (c config) left(dev *resourcev1.Device, id structured.DeviceID, state *structured.AllocatedState) int64 {
	if dev.AllowMultipleAllocations != nil && *dev.AllowMultipleAllocations {
		capacity, ok := dev.Capacity[c.capacity]
		total := capacity.Value.Value()
		if !ok || total <= 0 {
			return policy.MilliPerGPU // shared without that capacity: no limit this model knows
		}
		var used int64
		if q := state.AggregatedCapacity[id][c.capacity]; q != nil {
			used = q.Value()
		}
		return max(0, min(total, total-used)) * policy.MilliPerGPU / total
	}
	if state.AllocatedDevices.Has(id) {
		return 0
	}
	return policy.MilliPerGPU
}

// model is a device's model attribute, by its short or its qualified name.
func (c config) model(dev *resourcev1.Device) string {
	for _, name := range []string{c.modelAttribute, c.driver + "/" + c.modelAttribute} {
		if a, ok := dev.Attributes[resourcev1.QualifiedName(name)]; ok && a.StringValue != nil {
			return *a.StringValue
		}
	}
	return ""
}
