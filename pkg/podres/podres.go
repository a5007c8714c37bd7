// Package podres computes what a pod asks of its node, in the units in
// which kubelet admission and kube-scheduler's NodeResourcesFit compare
// requests with a node's allocatable: millicores for cpu, whole units
// (bytes, pods, devices) for everything else.
//
// It owns that arithmetic only; it knows nothing of nodes, stores or
// schedulers.
package podres

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// List is an amount per resource, in Amount's units.
type List map[corev1.ResourceName]int64

// Amount is q of resource name in admission's units: millicores for cpu,
// whole units otherwise.
func Amount(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// Of converts a resource list (a node's allocatable, say).
func Of(l corev1.ResourceList) List {
	out := make(List, len(l))
	for name, q := range l {
		out[name] = Amount(name, q)
	}
	return out
}

// Requests is what a pod asks of its node: the larger of its containers'
// summed requests and of any init container's, plus the pod overhead, plus
// one pod. (Requests default to limits, as the API server's defaulting
// does.)
func Requests(pod *corev1.Pod) List {
	req := List{corev1.ResourcePods: 1}
	add := func(into List, c corev1.ResourceRequirements) {
		for name, q := range c.Limits {
			if _, ok := c.Requests[name]; !ok {
				into[name] += Amount(name, q)
			}
		}
		for name, q := range c.Requests {
			into[name] += Amount(name, q)
		}
	}
	for _, c := range pod.Spec.Containers {
		add(req, c.Resources)
	}
	for _, c := range pod.Spec.InitContainers {
		init := List{}
		add(init, c.Resources)
		for name, v := range init {
			req[name] = max(req[name], v)
		}
	}
	for name, q := range pod.Spec.Overhead {
		req[name] += Amount(name, q)
	}
	return req
}

// Add adds l to into.
func (into List) Add(l List) {
	for name, v := range l {
		into[name] += v
	}
}

// Sub takes l from from.
func (from List) Sub(l List) {
	for name, v := range l {
		from[name] -= v
	}
}
