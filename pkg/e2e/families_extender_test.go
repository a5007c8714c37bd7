package e2e

import (
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"
)

// TestExtenderKeepsNodesBelowOverload: kube-scheduler 1.37 with the
// overload-avoiding extender of examples/schedulers/extender, started by
// the runner as a sidecar on a port it chose: on a contended workload every
// job completes, and at no instant does any node's cpu utilisation
// (requests of its running pods over allocatable) pass the extender's 75 %
// threshold, while the extender did filter nodes out (the workload would
// otherwise fill them).
func TestExtenderKeepsNodesBelowOverload(t *testing.T) {
	const overload = 0.75
	path := filepath.Join(t.TempDir(), "contended.json")
	writeContendedWorkload(t, path, 60, 0.8, 11)
	s := newSimulation(t, platform4, path)
	s.cfg.SchedulerConfig = abs(repoRoot(), "examples/schedulers/extender/config.yaml")
	s.cfg.Sidecars = []string{filepath.Join(s.cfg.BinDir, "extender") +
		" --kubeconfig {kubeconfig} --listen 127.0.0.1:{port:extender} --overload " + strconv.FormatFloat(overload, 'f', -1, 64)}
	sum := s.mustRun(5 * time.Minute)
	jobs := s.jobs()
	if sum.Succeeded != 60 || len(jobs) != 60 {
		t.Fatalf("%d of %d jobs succeeded, want 60", sum.Succeeded, len(jobs))
	}
	found := false
	for _, p := range sum.Processes {
		found = found || p.Name == "sidecar-1"
	}
	if !found {
		t.Errorf("the summary does not list the extender: %+v", sum.Processes)
	}
	if peak, node, at := cpuPeak(t, s, jobs); peak > overload {
		t.Errorf("node %s at %.0f%% cpu at t=%g, above the extender's %.0f%% threshold", node, 100*peak, at, 100*overload)
	}
	log := readFile(t, filepath.Join(s.cfg.OutDir, "sidecar-1.log"))
	m := regexp.MustCompile(`nodesFilteredOut=(\d+)`).FindSubmatch(log)
	if m == nil || string(m[1]) == "0" {
		t.Errorf("the extender filtered no node out (log: %s): the threshold was never put to the test", log)
	}
}

// cpuPeak returns the highest cpu utilisation of any node at any instant
// of the run, from _jobs.csv's start and finish times and the pods' nodes
// and requests as client-go saw them.
func cpuPeak(t *testing.T, s *simulation, jobs map[string]jobRow) (peak float64, node string, at float64) {
	t.Helper()
	type change struct {
		at, cpu float64
	}
	perNode := map[string][]change{}
	for id, j := range jobs {
		for _, p := range s.obs.podsOf(id) {
			cpu := p.requests.Cpu().AsApproximateFloat64()
			perNode[p.node] = append(perNode[p.node], change{j.start, cpu}, change{j.finish, -cpu})
		}
	}
	s.obs.mu.Lock()
	defer s.obs.mu.Unlock()
	for name, changes := range perNode {
		n := s.obs.nodes[name]
		if n == nil {
			t.Fatalf("pods ran on node %s, never seen", name)
		}
		alloc := n.Status.Allocatable.Cpu().AsApproximateFloat64()
		sort.Slice(changes, func(i, j int) bool {
			if changes[i].at != changes[j].at {
				return changes[i].at < changes[j].at
			}
			return changes[i].cpu < changes[j].cpu // ends first
		})
		used := 0.0
		for _, c := range changes {
			used += c.cpu
			if u := used / alloc; u > peak {
				peak, node, at = u, name, c.at
			}
		}
	}
	return peak, node, at
}

// TestFlakyExtenderSettlesExactly: the extender answers one filter call in
// ten with HTTP 500. A pod whose filter failed waits out kube-scheduler's
// error back-off (real time, which no cluster event shortens, and which
// SchedulerPopFromBackoffQ does not skip): the settle policy counts such a
// pod as work to do (scheduler_queued_entities tells it from pod groups
// waiting on their own back-off, whose retries releases replace) and waits
// for its retry. Every job completes, none waited while it fitted, every
// step is exact. (The extender's accounting of pods that passed its filter
// assumes they are bound soon, which pods of a pod group that does not fit
// are not: this test has no gangs; the policy's unit tests mix both.)
func TestFlakyExtenderSettlesExactly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "contended.json")
	writeContendedWorkload(t, path, 80, 0.8, 12)
	s := newSimulation(t, platform4, path)
	s.cfg.SchedulerConfig = abs(repoRoot(), "examples/schedulers/extender/config.yaml")
	// --overload 1: the extender filters only nodes the pod does not fit
	// on, so that "fits" means what the exactness check computes.
	s.cfg.Sidecars = []string{filepath.Join(s.cfg.BinDir, "extender") +
		" --kubeconfig {kubeconfig} --listen 127.0.0.1:{port:extender} --overload 1 --fail-rate 0.1 --seed 3"}
	sum := s.mustRun(15 * time.Minute)
	checkExactRun(t, s, sum, 80, "kube-scheduler")
	log := readFile(t, filepath.Join(s.cfg.OutDir, "sidecar-1.log"))
	if m := regexp.MustCompile(`failedCalls=(\d+)`).FindSubmatch(log); m == nil || string(m[1]) == "0" {
		t.Errorf("the extender failed no call (log: %s)", log)
	}
}
