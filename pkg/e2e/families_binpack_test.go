package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestBinPackingProfileAvoidsFragmentation: kube-scheduler 1.37 with its
// default profile (LeastAllocated: spreading) and with the bin-packing one
// of examples/schedulers/binpack (MostAllocated) on a workload where
// spreading fragments the nodes: four 1-core jobs, then three whole-node
// jobs. Spreading leaves no node whole and the whole-node jobs wait for
// the small ones (99 s); packing keeps three nodes whole and nothing waits.
func TestBinPackingProfileAvoidsFragmentation(t *testing.T) {
	const workload = "examples/schedulers/binpack/fragmentation.json"
	wholeWait := map[string]float64{}
	for _, profile := range []string{"default", "binpack"} {
		t.Run(profile, func(t *testing.T) {
			s := newSimulation(t, platform4, workload)
			if profile == "binpack" {
				s.cfg.SchedulerConfig = abs(repoRoot(), "examples/schedulers/binpack/config.yaml")
			}
			sum := s.mustRun(5 * time.Minute)
			jobs := s.jobs()
			if sum.Succeeded != len(jobs) || len(jobs) != 70 {
				t.Fatalf("%d of %d jobs succeeded, want all 70", sum.Succeeded, len(jobs))
			}
			checkNoOvercommit(t, s, jobs)
			n := 0
			for id, j := range jobs {
				if strings.Contains(id, "whole") {
					wholeWait[profile] += j.start - j.submit
					n++
				}
			}
			wholeWait[profile] /= float64(n)
		})
	}
	t.Logf("mean wait of the whole-node jobs: default %.1f s, bin-packing %.1f s", wholeWait["default"], wholeWait["binpack"])
	// Spreading makes every whole-node job wait for the small ones; packing
	// none (ties between empty nodes may go anywhere: no finer bound).
	if wholeWait["default"] < 90 || wholeWait["binpack"] > 0 {
		t.Errorf("mean wait of the whole-node jobs: default %.1f s, bin-packing %.1f s; want ≥ 90 s and 0", wholeWait["default"], wholeWait["binpack"])
	}
}
