package broker_test

import (
	"bytes"
	"fmt"
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

// powerRules checks a reply's decisions against what real Batsim 4.2.1
// aborts on or never answers: SET_RESOURCE_STATE for a host running a job
// or still switching, EXECUTE_JOB onto a host that is not on. It returns
// the power requests, as "id→pstate".
type powerRules struct {
	t         *testing.T
	switching map[int]bool
	asleep    map[int]bool
	running   map[batsim.JobID][]int
}

func (p *powerRules) check(m batsim.Message) []string {
	p.t.Helper()
	var sets []string
	for _, ev := range m.Events {
		switch d := ev.Data.(type) {
		case batsim.SetResourceState:
			for _, id := range d.Resources.IDs() {
				for job, ids := range p.running {
					if slices.Contains(ids, id) {
						p.t.Fatalf("at %g: SET_RESOURCE_STATE for host %d while job %s runs on it (Batsim aborts)", m.Now, id, job)
					}
				}
				if p.switching[id] {
					p.t.Fatalf("at %g: SET_RESOURCE_STATE for host %d while it switches (Batsim never answers)", m.Now, id)
				}
				p.switching[id] = true
				sets = append(sets, fmt.Sprintf("%d→%s", id, d.State))
			}
		case batsim.ExecuteJob:
			for _, id := range d.Alloc.IDs() {
				if p.switching[id] || p.asleep[id] {
					p.t.Fatalf("at %g: EXECUTE_JOB %s onto host %d, which is not on (Batsim aborts)", m.Now, d.JobID, id)
				}
			}
			p.running[d.JobID] = d.Alloc.IDs()
		}
	}
	return sets
}

// switched is Batsim's RESOURCE_STATE_CHANGED for one host.
func (p *powerRules) switched(id int, state string) batsim.ResourceStateChanged {
	p.switching[id] = false
	p.asleep[id] = state != "0"
	set, _ := batsim.IntervalSetFromIDs([]int{id})
	return batsim.ResourceStateChanged{Resources: set, State: state}
}

// TestPoolHostsSleepWhileNoNodeIsOnThem: with SwitchOffPool, the pool
// hosts that have sleep pstates are switched to sleep at the start, one
// request each; a node launched onto a host still switching off waits for
// the switch to end, then its host is switched on, and the node is Ready
// only once Batsim says the host is on, even though its provisioning
// delay has passed; a deleted node's host is switched off only once the
// job killed on it has ended.
func TestPoolHostsSleepWhileNoNodeIsOnThem(t *testing.T) {
	var nodesCSV bytes.Buffer
	h := start(t, broker.Options{Quiet: 20 * time.Millisecond, ProvisioningDelay: 5 * time.Second, NodesCSV: &nodesCSV, SwitchOffPool: true})
	p := &powerRules{t: t, switching: map[int]bool{}, asleep: map[int]bool{}, running: map[batsim.JobID][]int{}}
	begin := beginsWithPool("node0")
	sleepy := map[string]string{"pool": "cloud", "instance_type": "small", "core": "4", "memory": "8Gi", "price": "0.5", "sleep_pstates": "1:2:3"}
	begin.ComputeResources[1].Properties = sleepy
	begin.ComputeResources = append(begin.ComputeResources, batsim.Resource{ID: 2, Name: "pool-1", State: batsim.ResourceIdle, Properties: sleepy})
	begin.NbResources++
	begin.NbComputeResources++
	if got := p.check(h.send(0, begin)); !slices.Equal(got, []string{"1→1", "2→1"}) {
		t.Fatalf("at the start: power requests %v, want both pool hosts to sleep (1→1, 2→1)", got)
	}

	h.launchNode("kwok-a", "small")
	if got := p.check(h.send(1, batsim.RequestedCall{})); len(got) != 0 {
		t.Errorf("kwok-a launched onto host 1 while it switches off: requests %v, want none until the switch ends", got)
	}
	if got := p.check(h.send(2, p.switched(1, "1"))); !slices.Equal(got, []string{"1→0"}) {
		t.Errorf("host 1 asleep with kwok-a mapped onto it: requests %v, want 1→0", got)
	}
	if got := p.check(h.send(3, p.switched(2, "1"))); len(got) != 0 {
		t.Errorf("host 2 asleep, no node on it: requests %v, want none", got)
	}
	p.check(h.send(4, submitted("w!0")))       // on node0: the scheduler is seen to act
	p.check(h.send(6, batsim.RequestedCall{})) // kwok-a's delay has passed
	if _, ready, tainted := h.nodeState("kwok-a"); ready || !tainted {
		t.Errorf("kwok-a at 6, its host still switching on: Ready %t, tainted %t; want neither Ready nor untainted", ready, tainted)
	}
	p.check(h.send(9, p.switched(1, "0")))
	if id, ready, tainted := h.nodeState("kwok-a"); id != "1" || !ready || tainted {
		t.Errorf("kwok-a once host 1 is on: host %q, Ready %t, tainted %t; want host 1, Ready, untainted", id, ready, tainted)
	}

	h.send(10, stuckJob("w!1"))
	h.bind("w-1", "kwok-a")
	// The rules look at every reply's decisions, whatever else it holds
	// (w!0's EXECUTE_JOB on node0 may come late on a loaded machine).
	reply := h.send(11, batsim.RequestedCall{})
	p.check(reply)
	if ids := p.running["w!1"]; !slices.Equal(ids, []int{1}) {
		t.Fatalf("w-1 bound to the Ready kwok-a: w!1 runs on %v, want EXECUTE_JOB w!1 on host 1 (decisions %+v)", ids, reply.Events)
	}
	if err := h.cs.CoreV1().Nodes().Delete(h.ctx, "kwok-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// No SET_RESOURCE_STATE for host 1 while w!1 is on it: p.check fails
	// on one.
	reply = h.send(12, batsim.RequestedCall{})
	p.check(reply)
	_, decisions := calls(reply)
	if !slices.ContainsFunc(decisions, func(d batsim.EventData) bool { return slices.Contains(decisionKills(d), batsim.JobID("w!1")) }) {
		t.Fatalf("kwok-a deleted under w!1: decisions %+v, want KILL_JOB w!1", decisions)
	}
	delete(p.running, "w!1")
	if got := p.check(h.send(12, batsim.JobCompleted{JobID: "w!1", JobState: batsim.JobStateCompletedKilled, ReturnCode: -1},
		batsim.JobKilled{JobIDs: []batsim.JobID{"w!1"}})); !slices.Equal(got, []string{"1→1"}) {
		t.Errorf("w!1 killed, kwok-a gone: requests %v, want host 1 to sleep (1→1)", got)
	}
	p.check(h.send(14, p.switched(1, "1")))
	h.end(15)

	want := "node,instance_type,host,resource_id,created,ready,deleted,lifetime,price,cost,jobs,state\n" +
		"kwok-a,small,pool-0,1,1.000000,9.000000,12.000000,11.000000,0.5,0.001528,1,deleted\n"
	if got := nodesCSV.String(); got != want {
		t.Errorf("_nodes.csv:\n%s\nwant:\n%s", got, want)
	}
}
