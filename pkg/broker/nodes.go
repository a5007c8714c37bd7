package broker

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

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
	// (external events): cordoned, and never given a job.
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

// setAvailability cordons (or uncordons) the nodes of machines that an
// external event made unavailable (or available again): spec.unschedulable
// and the node.kubernetes.io/unschedulable taint, as kubectl cordon and the
// node controller do, so that schedulers leave them alone.
func (n *nodes) setAvailability(ctx context.Context, st *store.Store, resources batsim.IntervalSet, available bool) error {
	for _, id := range resources.IDs() {
		name, ok := n.byID[id]
		if !ok {
			continue // the master host, or a storage resource
		}
		if available {
			delete(n.unavailable, name)
		} else {
			n.unavailable[name] = true
		}
		_, err := st.Update(ctx, nodesGVR.GroupResource(), "", name, func(cur store.Object) (store.Object, error) {
			node, ok := cur.(*corev1.Node)
			if !ok {
				return nil, fmt.Errorf("stored node is a %T", cur)
			}
			node.Spec.Unschedulable = !available
			node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeUnschedulable })
			if !available {
				node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
			}
			return node, nil
		})
		if err != nil {
			return fmt.Errorf("setting node %s (resource %d) available=%t: %w", name, id, available, err)
		}
	}
	return nil
}
