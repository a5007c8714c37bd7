package broker_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/translate"
)

// beginsWithPool is begins(hosts...) plus one pool host of instance type
// "small" (resource id len(hosts)).
func beginsWithPool(hosts ...string) batsim.SimulationBegins {
	d := begins(hosts...)
	d.NbResources++
	d.NbComputeResources++
	d.ComputeResources = append(d.ComputeResources, batsim.Resource{ID: len(hosts), Name: "pool-0", State: batsim.ResourceIdle,
		Properties: map[string]string{"pool": "cloud", "instance_type": "small", "core": "4", "memory": "8Gi", "price": "0.5"}})
	return d
}

// launchNode creates a node as Karpenter's KWOK provider does: providerID
// kwok://NAME, its instance type's label, unregistered.
func (h *harness) launchNode(name, instanceType string) {
	h.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelInstanceTypeStable: instanceType}},
		Spec: corev1.NodeSpec{ProviderID: broker.LaunchedProviderPrefix + name},
		Status: corev1.NodeStatus{Phase: corev1.NodePending, Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("3900m"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}}}
	if _, err := h.cs.CoreV1().Nodes().Create(h.ctx, n, metav1.CreateOptions{}); err != nil {
		h.t.Fatalf("launching node %s: %v", name, err)
	}
}

// nodeState returns a node's pool host resource id ("" if unmapped),
// whether it is Ready and whether it has the not-ready taint.
func (h *harness) nodeState(name string) (id string, ready, tainted bool) {
	h.t.Helper()
	n, err := h.cs.CoreV1().Nodes().Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatalf("node %s: %v", name, err)
	}
	for _, c := range n.Status.Conditions {
		ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
	}
	tainted = slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
	return n.Annotations[translate.ResourceIDKey], ready, tainted
}

func (h *harness) bind(pod, node string) {
	h.t.Helper()
	if err := h.cs.CoreV1().Pods("default").Bind(h.ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod},
		Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{}); err != nil {
		h.t.Fatalf("binding %s to %s: %v", pod, node, err)
	}
}

// TestLaunchedNodesAreMappedOntoPoolHosts: a pool host is no node; a node
// launched with providerID kwok:// is mapped onto a free pool host of its
// instance type, tainted not-ready until its provisioning delay has passed
// (a call asked at that instant), and its pods run on that host (an
// eviction, as Karpenter drains a node, kills the job); a node
// launched when no host of its type is free stays unmapped and tainted,
// and a pod bound to it is rejected; a deleted node's host goes back to
// the pool.
func TestLaunchedNodesAreMappedOntoPoolHosts(t *testing.T) {
	var nodesCSV bytes.Buffer
	h := start(t, broker.Options{Quiet: 20 * time.Millisecond, ProvisioningDelay: 5 * time.Second, NodesCSV: &nodesCSV})
	h.send(0, beginsWithPool("node0"))
	nodes, err := h.cs.CoreV1().Nodes().List(h.ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 1 {
		t.Fatalf("nodes: %v, %d, want 1 (the pool host is no node)", err, len(nodes.Items))
	}

	h.launchNode("kwok-a", "small")
	if at, _ := calls(h.send(1, batsim.RequestedCall{})); !slices.Contains(at, 6.0) {
		t.Errorf("after a node was launched at 1 with a provisioning delay of 5 s: calls at %v, want one at 6", at)
	}
	if id, ready, tainted := h.nodeState("kwok-a"); id != "1" || ready || !tainted {
		t.Errorf("kwok-a before its delay: host %q, Ready %t, not-ready taint %t; want host 1, not Ready, tainted", id, ready, tainted)
	}
	h.launchNode("kwok-b", "small") // no host of its type left
	h.send(2, submitted("w!0"))     // on node0: the scheduler is seen to act
	h.send(6, batsim.RequestedCall{})
	if id, ready, tainted := h.nodeState("kwok-a"); id != "1" || !ready || tainted {
		t.Errorf("kwok-a after its delay: host %q, Ready %t, not-ready taint %t; want host 1, Ready, untainted", id, ready, tainted)
	}
	if id, ready, tainted := h.nodeState("kwok-b"); id != "" || ready || !tainted {
		t.Errorf("kwok-b (no free host): host %q, Ready %t, not-ready taint %t; want none, not Ready, tainted", id, ready, tainted)
	}

	h.send(7, stuckJob("w!1"), stuckJob("w!2"))
	h.bind("w-1", "kwok-a")
	h.bind("w-2", "kwok-b")
	_, decisions := calls(h.send(8, batsim.RequestedCall{}))
	var executed, rejected bool
	for _, d := range decisions {
		switch d := d.(type) {
		case batsim.ExecuteJob:
			executed = d.JobID == "w!1" && d.Alloc.String() == "1"
		case batsim.RejectJob:
			rejected = d.JobID == "w!2"
		}
	}
	if !executed || !rejected {
		t.Fatalf("decisions %+v, want EXECUTE_JOB w!1 on resource 1 (kwok-a's pool host) and REJECT_JOB w!2 (bound to the unmapped kwok-b)", decisions)
	}
	h.send(12, batsim.JobCompleted{JobID: "w!0", JobState: batsim.JobStateCompletedSuccessfully})
	// Karpenter drains a node it terminates through pods/eviction: the
	// job is killed.
	if err := h.cs.PolicyV1().Evictions("default").Evict(h.ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "w-1", Namespace: "default"}}); err != nil {
		t.Fatalf("evicting w-1: %v", err)
	}
	if _, decisions := calls(h.send(18, batsim.RequestedCall{})); len(decisions) != 1 || !slices.Contains(decisionKills(decisions[0]), batsim.JobID("w!1")) {
		t.Fatalf("after the eviction of w-1: decisions %+v, want KILL_JOB w!1", decisions)
	}
	h.send(18, batsim.JobCompleted{JobID: "w!1", JobState: batsim.JobStateCompletedKilled, ReturnCode: -1}, batsim.JobKilled{JobIDs: []batsim.JobID{"w!1"}})

	if err := h.cs.CoreV1().Nodes().Delete(h.ctx, "kwok-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.send(19, batsim.RequestedCall{})
	h.launchNode("kwok-c", "small")
	h.send(20, batsim.RequestedCall{})
	if id, _, _ := h.nodeState("kwok-c"); id != "1" {
		t.Errorf("kwok-c, launched once kwok-a was deleted: host %q, want 1 (back in the pool)", id)
	}
	// A node deleted under a running job (no drain): the job is killed.
	h.send(25, stuckJob("w!3"))
	h.bind("w-3", "kwok-c")
	if _, decisions := calls(h.send(26, batsim.RequestedCall{})); len(decisions) != 1 {
		t.Fatalf("w-3 bound to kwok-c, Ready at 25: decisions %+v, want EXECUTE_JOB w!3", decisions)
	}
	if err := h.cs.CoreV1().Nodes().Delete(h.ctx, "kwok-c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, decisions := calls(h.send(27, batsim.RequestedCall{})); len(decisions) != 1 || !slices.Contains(decisionKills(decisions[0]), batsim.JobID("w!3")) {
		t.Fatalf("kwok-c deleted under w!3: decisions %+v, want KILL_JOB w!3", decisions)
	}
	h.send(27, batsim.JobCompleted{JobID: "w!3", JobState: batsim.JobStateCompletedKilled, ReturnCode: -1}, batsim.JobKilled{JobIDs: []batsim.JobID{"w!3"}})
	h.end(28)

	// The nodes' log: kwok-a from 1 to 19 on pool-0 (18 s at 0.5 an
	// hour), one job (killed); kwok-b unmapped to the end (28 s); kwok-c
	// from 20 to 27, Ready at 25, one job.
	want := "node,instance_type,host,resource_id,created,ready,deleted,lifetime,price,cost,jobs,state\n" +
		"kwok-a,small,pool-0,1,1.000000,6.000000,19.000000,18.000000,0.5,0.002500,1,deleted\n" +
		"kwok-b,small,,,2.000000,,,26.000000,0,0.000000,0,unmapped\n" +
		"kwok-c,small,pool-0,1,20.000000,25.000000,27.000000,7.000000,0.5,0.000972,1,deleted\n"
	if got := nodesCSV.String(); got != want {
		t.Errorf("_nodes.csv:\n%s\nwant:\n%s", got, want)
	}
}
