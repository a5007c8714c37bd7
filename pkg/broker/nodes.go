package broker

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/podres"
	"github.com/batkube/batkube/pkg/store"
)

// nodes is the broker's view of the nodes: the Batsim resource behind each,
// which machines are unavailable, and what the pods admitted on each use
// (the kubelet's admission, see kubelet.go).
type nodes struct {
	id   map[string]int // node name → Batsim resource id
	byID map[int]string // Batsim resource id → node name
	node map[string]*nodeUsage
	// unavailable holds the nodes of machines Batsim said are unavailable
	// (external events): NotReady, tainted, and never given a job.
	unavailable map[string]bool
}

// nodeUsage is a node's allocatable resources and what its admitted pods
// request, in the units of the kubelet's admission (cpu in millicores,
// the others in their base unit, pods counted).
type nodeUsage struct {
	allocatable map[corev1.ResourceName]int64
	used        map[corev1.ResourceName]int64
	// jobs counts the jobs running on the node (for Batsim without
	// compute sharing).
	jobs int
}

func newNodes() *nodes {
	return &nodes{id: map[string]int{}, byID: map[int]string{}, node: map[string]*nodeUsage{}, unavailable: map[string]bool{}}
}

// add registers a node created for Batsim resource id.
func (n *nodes) add(node *corev1.Node, id int) {
	n.id[node.Name] = id
	n.byID[id] = node.Name
	u := &nodeUsage{allocatable: map[corev1.ResourceName]int64{}, used: map[corev1.ResourceName]int64{}}
	for name, q := range node.Status.Allocatable {
		u.allocatable[name] = podres.Amount(name, q)
	}
	n.node[node.Name] = u
}

// remove forgets a node (a launched node that was deleted).
func (n *nodes) remove(name string) {
	if id, ok := n.id[name]; ok && n.byID[id] == name {
		delete(n.byID, id)
	}
	delete(n.id, name)
	delete(n.node, name)
	delete(n.unavailable, name)
}

// setAvailability follows Batsim's external events: machines that became
// unavailable (or available again) at this instant.
//
// Batsim 4.2.1 only changes such a machine's state and notifies the
// decision process (server_on_event_machine_unavailable): the jobs on it
// go on computing unless the decision process kills them, and it aborts on
// an EXECUTE_JOB that names an unavailable machine. Batkube plays the
// node's kubelet and the node lifecycle controller: the node goes NotReady
// (condition Ready Unknown) with the node.kubernetes.io/unreachable taints
// (NoSchedule: nothing new lands there; NoExecute: its pods are to be
// evicted), and the jobs running on it are killed at that instant: a lost
// machine runs nothing (Kubernetes would only evict its pods after their
// tolerationSeconds, 300 s by default, through a controller that a
// Batkube run does not have). A job not yet started whose pods were bound
// there has them put back to pending. The node is Ready again, untainted,
// when the machine comes back.
func (r *run) setAvailability(ctx context.Context, resources batsim.IntervalSet, available bool) error {
	for _, id := range resources.IDs() {
		name, ok := r.nodes.byID[id]
		if !ok {
			continue // the master host, or a storage resource
		}
		if available {
			delete(r.nodes.unavailable, name)
			r.step.freed = true
		} else {
			r.nodes.unavailable[name] = true
		}
		now := metav1.NewTime(r.opts.Clock.Now())
		change := func(cur store.Object) (store.Object, error) {
			node, ok := cur.(*corev1.Node)
			if !ok {
				return nil, fmt.Errorf("stored node is a %T", cur)
			}
			node = node.DeepCopy()
			setReachable(node, available, now)
			return node, nil
		}
		// The condition (status) and the taints (spec), as the node
		// lifecycle controller writes them.
		if _, err := r.api.UpdateStatus(ctx, nodesGVR, "", name, change); err != nil {
			return fmt.Errorf("setting node %s (resource %d) Ready=%t: %w", name, id, available, err)
		}
		if _, err := r.api.Update(ctx, nodesGVR, "", name, change); err != nil {
			return fmt.Errorf("tainting node %s (resource %d) unreachable=%t: %w", name, id, !available, err)
		}
		if !available {
			if err := r.loseNode(ctx, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// setReachable sets a node's Ready condition and unreachable taints, as
// the node lifecycle controller does for a node whose kubelet stopped (or
// resumed) posting its status.
func setReachable(node *corev1.Node, reachable bool, now metav1.Time) {
	node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeUnreachable })
	status, reason, message := corev1.ConditionTrue, "KubeletReady", "simulated by Batkube"
	if !reachable {
		status, reason, message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status: the machine is unavailable (Batsim external event)."
		node.Spec.Taints = append(node.Spec.Taints,
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &now})
	}
	for i := range node.Status.Conditions {
		if c := &node.Status.Conditions[i]; c.Type == corev1.NodeReady {
			c.Status, c.Reason, c.Message, c.LastTransitionTime, c.LastHeartbeatTime = status, reason, message, now, now
		}
	}
}

// loseNode kills the jobs running on a node whose machine became
// unavailable, and puts back to pending the pods of jobs not started yet
// that were bound to it.
func (r *run) loseNode(ctx context.Context, node string) error {
	for _, j := range r.jobs.sortedByID() {
		on := false
		for _, n := range j.nodes {
			on = on || n == node
		}
		if !on {
			continue
		}
		switch j.phase {
		case jobRunning:
			r.log.Info("killing a job whose machine became unavailable", "job", j.id, "node", node)
			j.lost = true
			r.kill(j)
		case jobPending:
			for ref, n := range j.nodes {
				if n != node {
					continue
				}
				cur, err := r.store.Get(podsGVR.GroupResource(), ref.namespace, ref.name)
				if err != nil {
					continue
				}
				if pod, ok := cur.Object().(*corev1.Pod); ok {
					r.nodes.release(node, j.reserved[ref])
					delete(j.reserved, ref)
					delete(j.nodes, ref)
					if err := r.unbind(ctx, pod); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
