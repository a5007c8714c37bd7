package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestMachineFailuresAsLostNodes runs Batsim external events through the
// whole stack (the engine with --events, Batkube, kube-scheduler with the
// defaults): four 100 s jobs fill platform_4's four hosts at t=0; hosts 0
// and 1 become unavailable at t=10 and available again at t=50; two 5 s
// jobs are submitted at t=20. The jobs on the lost hosts are killed at
// t=10 (COMPLETED_KILLED, finished at 10); the jobs submitted at t=20 are
// not placed on the lost hosts, free as they are, but start at t=50, the
// instant those come back; a client-go watch sees nodes node0 and node1
// go NotReady (Ready Unknown), then take the node.kubernetes.io/unreachable
// NoSchedule and NoExecute taints, and come back Ready, then untainted.
func TestMachineFailuresAsLostNodes(t *testing.T) {
	dir := t.TempDir()
	workload := filepath.Join(dir, "jobs.json")
	var jobs []map[string]any
	for i := range 4 {
		jobs = append(jobs, map[string]any{"id": fmt.Sprintf("a%d", i), "subtime": 0, "res": 1, "profile": "d100"})
	}
	for i := range 2 {
		jobs = append(jobs, map[string]any{"id": fmt.Sprintf("b%d", i), "subtime": 20, "res": 1, "profile": "d5"})
	}
	writeJSON(t, workload, map[string]any{"nb_res": 4, "jobs": jobs, "profiles": map[string]any{
		"d100": map[string]any{"type": "delay", "delay": 100},
		"d5":   map[string]any{"type": "delay", "delay": 5},
	}})
	s := newSimulation(t, "examples/platforms/platform_4.xml", workload)
	s.addMachineOutage("0-1", 10, 50)
	seen := &nodeStates{}
	s.onReady = seen.watch
	s.mustRunExact(5 * time.Minute)
	killed := 0
	for id, j := range s.jobs() {
		lost := slices.ContainsFunc(j.alloc, func(h int) bool { return h <= 1 })
		switch {
		case strings.HasPrefix(id, "w0!a") && lost:
			killed++
			if j.state != "COMPLETED_KILLED" || j.finish != 10 {
				t.Errorf("job %s on lost host %v: %s at t=%g, want COMPLETED_KILLED at t=10", id, j.alloc, j.state, j.finish)
			}
		case strings.HasPrefix(id, "w0!a"):
			if j.state != "COMPLETED_SUCCESSFULLY" || j.finish != 100 {
				t.Errorf("job %s on host %v: %s at t=%g, want COMPLETED_SUCCESSFULLY at t=100", id, j.alloc, j.state, j.finish)
			}
		default:
			if j.state != "COMPLETED_SUCCESSFULLY" || j.start != 50 {
				t.Errorf("job %s (submitted at 20) on host %v: %s, started at t=%g, want started at t=50, when hosts 0 and 1 came back", id, j.alloc, j.state, j.start)
			}
		}
	}
	if killed != 2 {
		t.Errorf("%d jobs killed, want the 2 on hosts 0 and 1", killed)
	}
	for _, node := range []string{"node0", "node1"} {
		// Two writes each way, as the node lifecycle controller makes
		// them: the condition, then the taints.
		if got, want := seen.history(node), "Ready,NotReady,NotReady+unreachable,Ready+unreachable,Ready"; got != want {
			t.Errorf("node %s as client-go saw it: %s, want %s", node, got, want)
		}
	}
	if got := seen.history("node2"); got != "Ready" {
		t.Errorf("node node2 as client-go saw it: %s, want Ready all along", got)
	}
}

// nodeStates records, through a client-go watch, each node's successive
// states: Ready or NotReady, with "+unreachable" when both unreachable
// taints are on.
type nodeStates struct {
	mu     sync.Mutex
	states map[string][]string
}

func (n *nodeStates) watch(s *simulation) {
	n.states = map[string][]string{}
	watchObjects(s, "nodes", s.client.CoreV1().Nodes().Watch, n.record)
}

func (n *nodeStates) record(node *corev1.Node) {
	state := "NotReady"
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			state = "Ready"
		}
	}
	effects := map[corev1.TaintEffect]bool{}
	for _, taint := range node.Spec.Taints {
		if taint.Key == corev1.TaintNodeUnreachable {
			effects[taint.Effect] = true
		}
	}
	if effects[corev1.TaintEffectNoSchedule] && effects[corev1.TaintEffectNoExecute] {
		state += "+unreachable"
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if h := n.states[node.Name]; len(h) == 0 || h[len(h)-1] != state {
		n.states[node.Name] = append(h, state)
	}
}

// history is a node's successive states, comma-separated.
func (n *nodeStates) history(node string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.states[node], ",")
}
