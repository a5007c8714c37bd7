package e2e

import (
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/launch"
)

// mixedGangsWorkload: 120 jobs on 16 nodes of 8 cores at ~115 % load, half
// of them gangs of 2 to 16 pods of 1 to 3 cores (so that a gang's pods may
// share a node), half single-host jobs (pkg/engine/internal/gen).
const mixedGangsWorkload = "examples/workloads/gangs_mixed_120.json"

// TestMixedGangsSettleExactly: gangs of every size whose pods take part of
// a node, mixed with single-host jobs, with kube-scheduler 1.37 and
// --gangs. kube-scheduler retries a pod group it could not place only on a
// back-off of real time (1 s up to 10 s times the square root of its size),
// whatever the cluster does meanwhile; the settle policy instead has
// Batkube create each gang's PodGroup held (minCount one more than its
// pods) at the job's submission, release it once the scheduler holds all
// its pods, and renew a waiting one (delete, create held, release)
// whenever room was freed since its last release, so that the scheduler
// attempts it at that instant. Checked
// pod by pod (a job's pods may share a node): no job waited at an instant
// when the nodes had room for all its pods, every job's pods were bound at
// one instant, no node was over-committed, every step was exact — on a
// quiet machine, with every core busy with a CPU hog, and with the server
// ending every watch after 300 ms (informers reconnecting all the time). Without the
// releases, such a run took 3x real time and started a gang an event late.
func TestMixedGangsSettleExactly(t *testing.T) {
	newGangs := func(t *testing.T) *simulation {
		s := newSimulation(t, platform16, mixedGangsWorkload)
		s.cfg.Gangs = true
		return s
	}
	runUnder(t, []machineCondition{quietMachine, cpuHogged, watchesEndEvery300ms}, newGangs, func(t *testing.T, s *simulation, sum launch.Summary) {
		checkExactRun(t, s, sum, 120, "kube-scheduler")
		checkGangsBoundAtOnce(t, s)
		if sum.Settle.Releases == 0 {
			t.Error("no pod group was released: the gangs were not held back for kube-scheduler")
		}
		t.Logf("wall %s, kube-scheduler CPU %s (ratio %.2f), %d releases",
			sum.Wall.Round(time.Millisecond), sum.Usage(launch.SchedulerProcess).CPU.Round(time.Millisecond),
			sum.Wall.Seconds()/sum.Usage(launch.SchedulerProcess).CPU.Seconds(), sum.Settle.Releases)
	})
}

// checkGangsBoundAtOnce checks from _pods.csv that the pods of every job
// were bound at one instant.
func checkGangsBoundAtOnce(t *testing.T, s *simulation) {
	t.Helper()
	for id, parts := range boundInstants(t, s) {
		if len(parts) != 1 {
			t.Errorf("job %s: its pods were bound at %d instants %v, want all at one", id, len(parts), parts)
		}
	}
}
