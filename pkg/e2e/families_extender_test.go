package e2e

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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
// of the run.
func cpuPeak(t *testing.T, s *simulation, jobs map[string]jobRow) (peak float64, node string, at float64) {
	t.Helper()
	eachNodeUsage(t, s, jobs, func(name string, allocatable, used corev1.ResourceList, when float64) {
		if u := used.Cpu().AsApproximateFloat64() / allocatable.Cpu().AsApproximateFloat64(); u > peak {
			peak, node, at = u, name, when
		}
	})
	return peak, node, at
}

// TestFlakyExtenderSettlesExactly: the extender answers one filter call in
// ten with HTTP 500. A pod whose filter failed waits out kube-scheduler's
// error back-off (real time, which no cluster event shortens, and which
// SchedulerPopFromBackoffQ does not skip): the settle policy counts such a
// pod as work to do (scheduler_queued_entities tells it from pod groups
// waiting on their own back-off, whose retries releases replace) and waits
// for its retry. Every job completes, none waited while it fitted, every
// step is exact. The extender too must know at least the pod ends that
// kube-scheduler knows of when it asks: with an informer of its own, which
// may lag kube-scheduler's, it refused pods on nodes with room now and then
// (3 runs in about 19 with every core busy), which kube-scheduler then
// left unschedulable until the next event. (The extender's accounting of
// pods that passed its filter assumes they are bound soon, which pods of a
// pod group that does not fit are not: this test has no gangs; the
// policy's unit tests mix both.)
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
