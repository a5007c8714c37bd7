package broker

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/batkube/batkube/pkg/nodepool"
	"github.com/batkube/batkube/pkg/store"
	"github.com/batkube/batkube/pkg/translate"
)

// LaunchedProviderPrefix is the providerID prefix of the nodes an
// autoscaler launches (Karpenter's KWOK provider: kwok://<node name>): the
// broker maps each onto a free pool host of its instance type.
const LaunchedProviderPrefix = "kwok://"

// launched reports whether a node is one an autoscaler launched.
func launched(node *corev1.Node) bool {
	return strings.HasPrefix(node.Spec.ProviderID, LaunchedProviderPrefix)
}

// launchedNode is what the broker knows of a launched node (for the nodes'
// log): the pool host it is mapped onto, if any, and its simulated instants
// (-1: not yet).
type launchedNode struct {
	name, instanceType string
	host               nodepool.Host
	mapped             bool
	price              float64 // per hour, the node's own label (the offering's) if the host has none
	created, ready     float64
	deleted            float64
	// jobs counts the jobs started on it.
	jobs int
}

// poolState is the pool of a run: its hosts, the launched nodes, and the
// instants at which mapped nodes become Ready.
type poolState struct {
	pool  *nodepool.Pool
	nodes map[string]*launchedNode // by node name
	order []*launchedNode          // by creation
	// readyDue are the mapped nodes waiting for their provisioning delay,
	// by instant.
	readyDue []*launchedNode
	// power switches the pool hosts that can sleep (Options.SwitchOffPool).
	power poolPower
	// unmapped counts the launched nodes no free pool host was left for;
	// live the launched nodes not deleted.
	unmapped, live int
	// overSince is when the workload was last seen over (nothing to
	// submit, pending or running; -1: it is not); endAt when the broker
	// told Batsim no more jobs come (-1: not yet), the end of the nodes'
	// lifetimes (Batsim may still deliver calls asked for later).
	overSince, endAt float64
}

func newPoolState() poolState {
	p, _ := nodepool.New(nil)
	return poolState{pool: p, nodes: map[string]*launchedNode{}, overSince: -1, endAt: -1}
}

// lingerUntil says, once the workload is over while launched nodes remain,
// until when the run goes on for the autoscaler to consolidate them
// (Options.ScaleDownWait after the workload's end); ok is false when the
// run need not go on for them.
func (r *run) lingerUntil(now float64) (until float64, ok bool) {
	if !r.noMoreJobs || r.jobs.pending > 0 || r.jobs.running > 0 || len(r.objects) > 0 {
		r.pool.overSince = -1
		return 0, false
	}
	if r.pool.overSince < 0 {
		r.pool.overSince = now
	}
	if r.pool.live == 0 {
		return 0, false
	}
	until = r.pool.overSince + r.opts.ScaleDownWait.Seconds()
	return until, now-until < -callNoise
}

// lingerWakeUp asks, while the run lingers for the launched nodes, for a
// call at the controllers' next work (Karpenter's consolidation is some),
// or at the end of the wait.
func (r *run) lingerWakeUp(now, replyNow float64) {
	until, ok := r.lingerUntil(now)
	if !ok {
		return
	}
	at, work := r.opts.Clock.NextWorkSeconds()
	if !work || at > until {
		at = until
	}
	if at > replyNow {
		r.callAt(at)
	}
}

// admitLaunchedNode is the kubelet's registration of a launched node, in
// admission: it comes with the node.kubernetes.io/not-ready:NoSchedule
// taint, which the broker removes when it marks the node Ready, so that no
// pod is bound to it before (nor ever, if no pool host is free for it).
func admitLaunchedNode(node *corev1.Node) {
	if !launched(node) || slices.ContainsFunc(node.Spec.Taints, isNotReadyTaint) {
		return
	}
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
}

func isNotReadyTaint(t corev1.Taint) bool {
	return t.Key == corev1.TaintNodeNotReady && t.Effect == corev1.TaintEffectNoSchedule
}

// nodeChanged follows the launched nodes: created, it is mapped onto a
// free pool host of its instance type; deleted, its host goes back to the
// pool.
func (r *run) nodeChanged(ctx context.Context, c *store.Change) error {
	node, ok := c.Object.Object().(*corev1.Node)
	if !ok || !launched(node) {
		return nil
	}
	switch c.Type {
	case watch.Added:
		return r.mapLaunchedNode(ctx, node)
	case watch.Deleted:
		return r.launchedNodeDeleted(ctx, node)
	}
	return nil
}

// mapLaunchedNode maps a launched node onto a free pool host of its
// instance type, and schedules its readiness after the provisioning delay.
func (r *run) mapLaunchedNode(ctx context.Context, node *corev1.Node) error {
	now := r.opts.Clock.Seconds()
	it := node.Labels[corev1.LabelInstanceTypeStable]
	ln := &launchedNode{name: node.Name, instanceType: it, created: now, ready: -1, deleted: -1}
	if p, err := strconv.ParseFloat(node.Labels[nodePriceLabel], 64); err == nil {
		ln.price = p
	}
	r.pool.nodes[node.Name] = ln
	r.pool.order = append(r.pool.order, ln)
	r.pool.live++
	host, ok := r.pool.pool.Take(it, node.Name)
	if !ok {
		r.pool.unmapped++
		why := "no free pool host of that instance type"
		if !r.pool.pool.Known(it) {
			why = "no pool host is of that instance type"
		}
		r.log.Warn("a launched node is mapped onto no Batsim host: it stays NotReady and tainted, and pods bound to it are rejected",
			"node", node.Name, "instanceType", it, "reason", why, "unmappedSoFar", r.pool.unmapped)
		return nil
	}
	ln.host, ln.mapped = host, true
	if host.Price > 0 || ln.price == 0 {
		ln.price = host.Price
	}
	r.nodes.add(node, host.ID)
	// The host's identity on the node, as on the nodes of ordinary hosts.
	if _, err := r.api.Update(ctx, nodesGVR, "", node.Name, func(cur store.Object) (store.Object, error) {
		n, ok := cur.(*corev1.Node)
		if !ok {
			return nil, fmt.Errorf("stored node is a %T", cur)
		}
		n = n.DeepCopy()
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[translate.ResourceIDKey] = strconv.Itoa(host.ID)
		n.Annotations[translate.HostNameKey] = host.Name
		return n, nil
	}); err != nil {
		return fmt.Errorf("annotating launched node %s with its pool host %s: %w", node.Name, host.Name, err)
	}
	r.log.Info("a launched node is mapped onto a pool host", "node", node.Name, "instanceType", it, "host", host.Name,
		"resourceID", host.ID, "readyAt", now+r.opts.ProvisioningDelay.Seconds())
	r.pool.readyDue = append(r.pool.readyDue, ln)
	if r.opts.ProvisioningDelay <= 0 {
		return r.markDueNodesReady(ctx, now)
	}
	return nil
}

// nodePriceLabel is the price the KWOK provider puts on its nodes (the
// offering's, per hour).
const nodePriceLabel = "eks-node-viewer/instance-price"

// markDueNodesReady marks Ready the mapped nodes whose provisioning delay
// has passed and whose host is on, as a node's kubelet and the node
// lifecycle controller would: the Ready condition True and the not-ready
// taint gone.
func (r *run) markDueNodesReady(ctx context.Context, now float64) error {
	delay := r.opts.ProvisioningDelay.Seconds()
	waiting := r.pool.readyDue[:0]
	for i, ln := range r.pool.readyDue {
		if ln.created+delay-now >= callNoise {
			waiting = append(waiting, r.pool.readyDue[i:]...) // by creation: none later is due
			break
		}
		switch {
		case ln.deleted >= 0:
			continue
		case !r.pool.power.isOn(ln.host.ID):
			waiting = append(waiting, ln) // Ready when Batsim says its host is on
			continue
		}
		if err := r.setLaunchedNodeReady(ctx, ln.name); err != nil {
			return err
		}
		ln.ready = now
		r.step.freed = true
	}
	clear(r.pool.readyDue[len(waiting):])
	r.pool.readyDue = waiting
	return nil
}

// setLaunchedNodeReady writes a launched node's Ready condition and
// removes its not-ready taint.
func (r *run) setLaunchedNodeReady(ctx context.Context, name string) error {
	now := metav1.NewTime(r.opts.Clock.Now())
	if _, err := r.api.UpdateStatus(ctx, nodesGVR, "", name, func(cur store.Object) (store.Object, error) {
		n, ok := cur.(*corev1.Node)
		if !ok {
			return nil, fmt.Errorf("stored node is a %T", cur)
		}
		n = n.DeepCopy()
		n.Status.Phase = corev1.NodeRunning
		n.Status.Conditions = readyConditions(n.Status.Conditions, now)
		return n, nil
	}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // deleted meanwhile
		}
		return fmt.Errorf("marking launched node %s Ready: %w", name, err)
	}
	if _, err := r.api.Update(ctx, nodesGVR, "", name, func(cur store.Object) (store.Object, error) {
		n, ok := cur.(*corev1.Node)
		if !ok {
			return nil, fmt.Errorf("stored node is a %T", cur)
		}
		n = n.DeepCopy()
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, isNotReadyTaint)
		return n, nil
	}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing the not-ready taint of launched node %s: %w", name, err)
	}
	r.log.Info("a launched node is Ready", "node", name, "simulatedTime", r.opts.Clock.Seconds())
	return nil
}

// readyConditions sets Ready True and the pressure conditions False, as
// the nodes of ordinary hosts have them.
func readyConditions(conds []corev1.NodeCondition, now metav1.Time) []corev1.NodeCondition {
	want := []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "simulated by Batkube: a pool host"},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID"},
	}
	for _, w := range want {
		w.LastTransitionTime, w.LastHeartbeatTime = now, now
		if i := slices.IndexFunc(conds, func(c corev1.NodeCondition) bool { return c.Type == w.Type }); i >= 0 {
			conds[i] = w
		} else {
			conds = append(conds, w)
		}
	}
	return conds
}

// nodeReadyWakeUp asks for a call when the next mapped node is due Ready
// (one whose delay has passed waits for its host to switch on: Batsim's
// RESOURCE_STATE_CHANGED is the call).
func (r *run) nodeReadyWakeUp(replyNow float64) {
	for _, ln := range r.pool.readyDue {
		if at := ln.created + r.opts.ProvisioningDelay.Seconds(); at > replyNow {
			r.callAt(at)
			return
		}
	}
}

// launchedNodeDeleted gives a deleted launched node's host back to the
// pool. Its pods were evicted before (Karpenter drains a node before it
// removes its finalizer); any job still on it is killed (or, not started,
// rejected), as the pod garbage collector deletes the pods of a node that
// is gone.
func (r *run) launchedNodeDeleted(ctx context.Context, node *corev1.Node) error {
	ln := r.pool.nodes[node.Name]
	if ln == nil || ln.deleted >= 0 {
		return nil
	}
	ln.deleted = r.opts.Clock.Seconds()
	r.pool.live--
	host, ok := r.pool.pool.Release(node.Name)
	if !ok {
		return nil
	}
	for _, j := range r.jobs.sortedByID() {
		on := false
		for _, n := range j.nodes {
			on = on || n == node.Name
		}
		switch {
		case !on:
		case j.phase == jobRunning:
			r.log.Warn("killing a job whose launched node was deleted", "job", j.id, "node", node.Name)
			r.kill(j)
		case j.phase == jobPending:
			r.log.Warn("rejecting a job with a pod bound to a launched node that was deleted", "job", j.id, "node", node.Name)
			r.reject(ctx, j)
		}
	}
	r.nodes.remove(node.Name)
	r.log.Info("a launched node was deleted: its host is back in the pool", "node", node.Name, "host", host.Name, "simulatedTime", ln.deleted,
		"instanceType", host.InstanceType, "freeOfType", r.pool.pool.Free(host.InstanceType))
	return nil
}
