package translate

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Devices (Dynamic Resource Allocation, resource.k8s.io/v1). A host whose
// platform properties name devices — gpu="4" and, optionally,
// gpu_model="a100" — publishes them as a DRA driver would: a
// ResourceSlice of its node (driver GPUDriver, pool the node's name) with
// devices gpu-0... that have the attributes model and index. The
// DeviceClass GPUDriver selects them. Pods claim them through
// ResourceClaims (or claim templates), which kube-scheduler allocates.
//
// Shared GPUs (DRA consumable capacity, feature gate DRAConsumableCapacity,
// beta and on by default in Kubernetes 1.37): a host with gpu_shared="true"
// publishes GPUs that allow multiple allocations, each with a capacity
// GPUMilliCapacity ("milli") of GPUMilliPerDevice (1000), one thousandth of
// the GPU per unit, without a request policy. A claim's request that asks
// for capacity {requests: {milli: "460"}} consumes 460 of a GPU, and
// kube-scheduler allocates a GPU to several such claims as long as their sum
// stays within 1000. A request that states no capacity consumes the whole
// of it (the allocator's default when a capacity has no request policy), so
// a whole-GPU claim never shares its GPU with another one. Hosts without
// the property (or with gpu_shared="false") keep exclusive devices, which a
// request for capacity cannot select.

// GPUDriver names the driver of the simulated GPUs, and their DeviceClass.
const GPUDriver = "gpu.batkube.io"

// Host properties that describe a host's GPUs.
const (
	gpuCountProperty  = "gpu"
	gpuModelProperty  = "gpu_model"
	gpuSharedProperty = "gpu_shared"
)

// The consumable capacity of a shared GPU: GPUMilliPerDevice units named
// GPUMilliCapacity, a thousandth of the GPU each.
const (
	GPUMilliCapacity  resourcev1.QualifiedName = "milli"
	GPUMilliPerDevice                          = 1000
)

// ResourceSlice returns the ResourceSlice of a node's devices (nil if its
// host has none).
func ResourceSlice(h Host, node *corev1.Node) (*resourcev1.ResourceSlice, error) {
	v, ok := h.Properties[gpuCountProperty]
	if !ok {
		return nil, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > resourcev1.ResourceSliceMaxDevices {
		return nil, fmt.Errorf("translate: host %s: property %s=%q: want a number of GPUs from 0 to %d", h.Name, gpuCountProperty, v, resourcev1.ResourceSliceMaxDevices)
	}
	if n == 0 {
		return nil, nil
	}
	model := h.Properties[gpuModelProperty]
	shared, err := gpuShared(h)
	if err != nil {
		return nil, err
	}
	devices := make([]resourcev1.Device, n)
	for i := range devices {
		attrs := map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"index": {IntValue: ptr.To(int64(i))}}
		if model != "" {
			attrs["model"] = resourcev1.DeviceAttribute{StringValue: ptr.To(model)}
		}
		devices[i] = resourcev1.Device{Name: "gpu-" + strconv.Itoa(i), Attributes: attrs}
		if shared {
			devices[i].AllowMultipleAllocations = ptr.To(true)
			devices[i].Capacity = map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
				GPUMilliCapacity: {Value: *resource.NewQuantity(GPUMilliPerDevice, resource.DecimalSI)},
			}
		}
	}
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node.Name + "-" + GPUDriver},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   GPUDriver,
			Pool:     resourcev1.ResourcePool{Name: node.Name, Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To(node.Name),
			Devices:  devices,
		},
	}, nil
}

// gpuShared reads a host's gpu_shared property (false when absent).
func gpuShared(h Host) (bool, error) {
	v, ok := h.Properties[gpuSharedProperty]
	if !ok {
		return false, nil
	}
	shared, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("translate: host %s: property %s=%q: want true or false", h.Name, gpuSharedProperty, v)
	}
	return shared, nil
}

// GPUDeviceClass is the DeviceClass of the simulated GPUs.
func GPUDeviceClass() *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: GPUDriver},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "` + GPUDriver + `"`},
		}}},
	}
}
