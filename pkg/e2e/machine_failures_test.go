package e2e

import (
	"fmt"
	"os"
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

// sharedData is the path of a file of ../shared/data (other people's
// data: Batsim 4.2.1's inputs...), which CI has beside the clone.
func sharedData(t testing.TB, path string) string {
	t.Helper()
	p := filepath.Join(repoRoot(), "..", "shared", "data", path)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v (the shared data, ../shared/data beside the clone, as CI has it)", p, err)
	}
	return p
}

// TestMachineLostAtTheFirstInstant runs Batsim 4.2.1's own failure test
// (small_platform.xml, test_delays.json: ten 1-host jobs 3 s apart, and
// test_events_4hosts.txt, whose first event makes machine 0 unavailable at
// t=0, before kube-scheduler's informers have listed the nodes) with
// kube-scheduler 1.37 and 1.18. The node's taint at the first instant
// reaches the scheduler folded into the node it lists, not as a
// NodeUpdateNodeTaint event it handles: the settle policy must not wait
// for that event (it did, a whole --settle-max per step). Every step is
// exact, none ends on --settle-max; the jobs end as Batsim's semantics
// say (7 succeeded, 3 killed by the machines lost at t=20); none runs on
// a machine while it is unavailable; and no job waits at an instant when
// an available machine is free (each job holds its host alone).
func TestMachineLostAtTheFirstInstant(t *testing.T) {
	for _, version := range []string{"1.37", "1.18"} {
		t.Run("kube-scheduler-"+version, func(t *testing.T) {
			s := newSimulation(t, sharedData(t, "batsim-4.2.1/platforms/small_platform.xml"), sharedData(t, "batsim-4.2.1/workloads/test_delays.json"))
			s.cfg.Events = []string{sharedData(t, "batsim-4.2.1/events/test_events_4hosts.txt")}
			if version == "1.18" {
				s.cfg.KubeScheduler = binary(t, "kube-scheduler-1.18")
				s.cfg.SchedulerConfig = filepath.Join(repoRoot(), "examples/scheduler/kube-scheduler-1.18.yaml")
			}
			sum := s.mustRunExact(10 * time.Minute)
			if sum.Settle.MaxWait > 0 || sum.Succeeded != 7 || sum.Killed != 3 {
				t.Errorf("%d succeeded, %d killed, settling %+v; want 7 and 3, no step on settle-max", sum.Succeeded, sum.Killed, sum.Settle)
			}
			// Machine (resource id) → its unavailable intervals [from, to).
			down := map[int][][2]float64{0: {{0, 10}, {20, 250}}, 1: {{20, 250}}, 3: {{20, 300}}}
			// Batsim's messages take simulated time (small_platform's
			// links): the broker hears of a change a few µs to ms after it.
			const heard = 0.01
			isDown := func(host int, at float64) bool {
				return slices.ContainsFunc(down[host], func(iv [2]float64) bool { return iv[0] <= at && at < iv[1]+heard })
			}
			// Instants as the broker saw them: a job is pending from its
			// pods' creation (known) to their binding (placed), and holds
			// its machine from then until the broker heard it end (Batsim's
			// messages take simulated time between them).
			jobs := s.jobs()
			var instants []float64
			for _, j := range jobs {
				instants = append(instants, j.known, j.placed, j.heard)
			}
			for _, ivs := range down {
				for _, iv := range ivs {
					instants = append(instants, iv[0], iv[1])
				}
			}
			slices.Sort(instants)
			instants = slices.Compact(instants)
			for id, j := range jobs {
				for _, h := range j.alloc {
					for _, iv := range down[h] {
						if j.placed < iv[1] && iv[0]+heard < j.finish {
							t.Errorf("job %s ran on machine %d over %g-%g, while it was unavailable over %g-%g", id, h, j.placed, j.finish, iv[0], iv[1])
						}
					}
				}
			}
			for _, at := range instants {
				busy := map[int]bool{}
				for _, j := range jobs {
					if j.placed <= at && at < j.heard {
						for _, h := range j.alloc {
							busy[h] = true
						}
					}
				}
				for id, j := range jobs {
					if j.known > at || at >= j.placed {
						continue
					}
					for h := range 4 {
						if !busy[h] && !isDown(h, at) {
							t.Errorf("t=%g: job %s waits (placed at %g) while machine %d is available and free", at, id, j.placed, h)
						}
					}
				}
			}
			t.Logf("kube-scheduler %s: %d steps %+v, wall %s", version, sum.Steps, sum.Settle, sum.Wall.Round(time.Millisecond))
		})
	}
}
