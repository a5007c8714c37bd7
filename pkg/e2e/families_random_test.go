package e2e

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRandomSchedulerPlacementsFollowItsSeed: the random client-go
// scheduler of examples/schedulers/random on a contended workload: every
// job completes on a node with room; two runs with the same seed give
// byte-identical _jobs.csv (it decides on whole states), another seed
// other placements.
func TestRandomSchedulerPlacementsFollowItsSeed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "contended.json")
	writeContendedWorkload(t, path, 60, 0.8, 5)
	outputs := map[string][]byte{}
	for _, run := range []struct{ name, seed string }{{"seed1", "1"}, {"seed1-again", "1"}, {"seed2", "2"}} {
		t.Run(run.name, func(t *testing.T) {
			s := newSimulation(t, platform4, path)
			s.cfg.SchedulerCommand = fmt.Sprintf("%s --kubeconfig {kubeconfig} --seed %s", filepath.Join(s.cfg.BinDir, "random"), run.seed)
			s.cfg.ServerArgs = []string{"--settle=signal"}
			sum := s.mustRun(5 * time.Minute)
			jobs := s.jobs()
			if sum.Succeeded != 60 || len(jobs) != 60 {
				t.Fatalf("%d of %d jobs succeeded, want 60", sum.Succeeded, len(jobs))
			}
			if sum.Settle.Quiet+sum.Settle.MaxWait > 0 {
				t.Errorf("settling %+v: want every step settled by the idle signal", sum.Settle)
			}
			checkNoOvercommit(t, s, jobs)
			// The first job comes to an empty cluster: it starts at once
			// (a step at the first instant ended before the scheduler saw
			// the nodes: 1 run in 75 under load, before each informer's
			// progress was followed apart).
			if first := jobs["w0!0"]; first.start != first.submit {
				t.Errorf("job 0, submitted at %g to an empty cluster, started at %g", first.submit, first.start)
			}
			data := readFile(t, filepath.Join(s.cfg.OutDir, "_jobs.csv"))
			outputs[run.name] = data
		})
	}
	if !bytes.Equal(outputs["seed1"], outputs["seed1-again"]) {
		t.Errorf("two runs with seed 1 gave different _jobs.csv:\n%s", differingLines(outputs["seed1"], outputs["seed1-again"], 10))
	}
	if bytes.Equal(outputs["seed1"], outputs["seed2"]) {
		t.Error("seeds 1 and 2 gave the same _jobs.csv: the placements do not follow the seed")
	}
}

// differingLines lists up to limit lines where a and b differ, a's line
// then b's.
func differingLines(a, b []byte, limit int) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	line := func(lines []string, i int) string {
		if i < len(lines) {
			return lines[i]
		}
		return "(none)"
	}
	var out []string
	for i := 0; i < max(len(al), len(bl)) && len(out) < 2*limit; i++ {
		if x, y := line(al, i), line(bl, i); x != y {
			out = append(out, fmt.Sprintf("line %d: %s", i+1, x), fmt.Sprintf("line %d: %s", i+1, y))
		}
	}
	return strings.Join(out, "\n")
}
