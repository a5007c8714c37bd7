package e2e

import (
	"path/filepath"
	"testing"
	"time"
)

// TestShellSchedulerFinishesDelay10: the bash + kubectl scheduler of
// examples/schedulers/shell runs the delay_10 example to its end: every job
// completes, no node over-committed, and every step is settled by its idle
// signal (none on a guessed quiet window), so no job waits (the 16 nodes
// have room for all: kube-scheduler's waiting is 0 too). delay_10 rather
// than the README's delay_30: the same steps a third as many times, each
// look at the cluster a few kubectl and awk processes (a third of the time).
func TestShellSchedulerFinishesDelay10(t *testing.T) {
	const want = 10
	s := newSimulation(t, "examples/platforms/platform_16.xml", "examples/workloads/delay_10.json")
	s.cfg.SchedulerCommand = filepath.Join(repoRoot(), "examples/schedulers/shell/scheduler.sh")
	s.cfg.ServerArgs = []string{"--settle=signal"}
	t.Setenv("KUBECTL", binary(t, "kubectl"))
	sum := s.mustRun(10 * time.Minute)
	jobs := s.jobs()
	if sum.Succeeded != want || len(jobs) != want {
		t.Fatalf("%d of %d jobs succeeded, want %d", sum.Succeeded, len(jobs), want)
	}
	checkNoOvercommit(t, s, jobs)
	if sum.Settle.Quiet+sum.Settle.MaxWait > 0 {
		t.Errorf("settling %+v: want every step settled by the idle signal", sum.Settle)
	}
	for id, j := range jobs {
		if j.start != j.submit {
			t.Errorf("%s started at %g, submitted at %g: want no waiting on 16 free nodes", id, j.start, j.submit)
		}
	}
}
