// Package room is the arithmetic of the example schedulers' first-fit:
// what a pod requests (every resource its containers ask for: cpu, memory,
// and extended resources such as the batkube.io/host a job that holds its
// hosts alone asks one of), whether that fits in what a node has left, and
// taking it from there.
package room

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// Requests sums the requests of the pod's containers, by resource.
func Requests(p *corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		for name, q := range c.Resources.Requests {
			total := sum[name]
			total.Add(q)
			sum[name] = total
		}
	}
	return sum
}

// Fits reports whether every request of req (a pod's Requests) fits in
// room.
func Fits(room, req corev1.ResourceList) bool {
	for name, want := range req {
		if have := room[name]; have.Cmp(want) < 0 {
			return false
		}
	}
	return true
}

// Take removes req (a pod's Requests) from room (nil: nothing to take
// from).
func Take(room, req corev1.ResourceList) {
	if room == nil {
		return
	}
	for name, want := range req {
		have := room[name]
		have.Sub(want)
		room[name] = have
	}
}

// Admits reports whether the node may take the pod at all, as
// kube-scheduler's NodeUnschedulable and TaintToleration filters and the
// node lifecycle's not-ready taints say: it is not cordoned, not NotReady
// (Batkube marks a node whose machine is unavailable NotReady and taints it
// node.kubernetes.io/unreachable), and the pod tolerates each of its
// NoSchedule and NoExecute taints.
func Admits(n *corev1.Node, p *corev1.Pod) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			return false
		}
	}
	for i := range n.Spec.Taints {
		t := &n.Spec.Taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		tolerated := false
		for _, tol := range p.Spec.Tolerations {
			if tol.ToleratesTaint(klog.Background(), t, false) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return false
		}
	}
	return true
}
