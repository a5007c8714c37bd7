package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestPreemption: low-priority whole-node jobs fill the cluster; two
// high-priority ones arrive at t=100 and kube-scheduler 1.37 preempts two
// of them. Batkube kills the victims' jobs (COMPLETED_KILLED) at that
// instant and, with --preempted=resubmit, submits their work again as new
// jobs, which complete once the urgent jobs are done.
func TestPreemption(t *testing.T) {
	const workload = "examples/schedulers/preemption/workload.json"
	for _, policy := range []string{"kill", "resubmit"} {
		t.Run(policy, func(t *testing.T) {
			s := newSimulation(t, platform4, workload)
			s.cfg.Objects = []string{abs(repoRoot(), "examples/workloads/priority-classes.yaml")}
			s.cfg.ServerArgs = []string{"--preempted=" + policy}
			s.cfg.DynamicJobs = policy == "resubmit"
			sum := s.mustRun(5 * time.Minute)
			jobs := s.jobs()
			states := map[string]int{}
			var killed []string
			for id, j := range jobs {
				states[j.state]++
				switch {
				case strings.Contains(id, "urgent"):
					// Preempting and killing take no simulated time: the
					// urgent jobs start the instant they are submitted.
					if j.state != "COMPLETED_SUCCESSFULLY" || j.start != 100 {
						t.Errorf("%s: %s at %g, want COMPLETED_SUCCESSFULLY starting at 100 (its victims killed at once)", id, j.state, j.start)
					}
				case j.state == "COMPLETED_KILLED":
					killed = append(killed, id)
					if j.finish != 100 {
						t.Errorf("%s: killed at %g, want 100, the instant of the preemption", id, j.finish)
					}
				}
			}
			if len(killed) != 2 || sum.Preempted != 2 {
				t.Fatalf("killed jobs %v, summary says %d preempted; want 2 and 2", killed, sum.Preempted)
			}
			checkNoOvercommit(t, s, jobs)
			if policy == "kill" {
				if len(jobs) != 6 || states["COMPLETED_SUCCESSFULLY"] != 4 || sum.Resubmitted != 0 {
					t.Errorf("%d jobs %v, %d resubmitted; want 6 jobs: 4 succeeded, 2 killed, none resubmitted", len(jobs), states, sum.Resubmitted)
				}
				return
			}
			if len(jobs) != 8 || states["COMPLETED_SUCCESSFULLY"] != 6 || sum.Resubmitted != 2 {
				t.Errorf("%d jobs %v, %d resubmitted; want 8 jobs: 6 succeeded, 2 killed, 2 resubmitted", len(jobs), states, sum.Resubmitted)
			}
			for _, id := range killed {
				again, ok := jobs[id+"-r1"]
				if !ok {
					t.Errorf("%s was killed but not resubmitted as %s-r1", id, id)
					continue
				}
				// Submitted at the preemption; room comes back when the
				// urgent jobs end at 200.
				if again.state != "COMPLETED_SUCCESSFULLY" || again.submit != 100 || again.start != 200 {
					t.Errorf("%s-r1: %s, submitted at %g, started at %g; want COMPLETED_SUCCESSFULLY, submitted at 100, started at 200",
						id, again.state, again.submit, again.start)
				}
			}
		})
	}
}

// TestPreemptionOfManyVictimsIsExact: kube-scheduler 1.37 preempts
// asynchronously: a goroutine that none of its gauges counts deletes the
// victims while the preemptor waits, unschedulable, in its queue. Eleven
// victims on three nodes (pkg/e2e/testdata/preemption_victims.json): the
// step must not end before every victim's deletion has reached Batkube
// (the policy waits until as many preemption goroutines have ended as
// preemptions started), so that the victims are killed and the urgent jobs
// start at the instant they are submitted, t=100. (Independent pods: with
// gangs, kube-scheduler 1.37 preempts for a pod group only with the alpha
// PodGroupPreemptionPolicy feature gate.)
func TestPreemptionOfManyVictimsIsExact(t *testing.T) {
	s := newSimulation(t, platform4, "pkg/e2e/testdata/preemption_victims.json")
	s.cfg.NoGangs = true
	s.cfg.Objects = []string{abs(repoRoot(), "examples/workloads/priority-classes.yaml")}
	sum := s.mustRun(5 * time.Minute)
	jobs := s.jobs()
	killed := 0
	for id, j := range jobs {
		switch {
		case strings.HasPrefix(id, "w0!urgent"):
			if j.state != "COMPLETED_SUCCESSFULLY" || j.start != 100 {
				t.Errorf("%s: %s starting at %g, want COMPLETED_SUCCESSFULLY starting at 100 (its victims killed at once)", id, j.state, j.start)
			}
		case j.state == "COMPLETED_KILLED":
			killed++
			if j.finish != 100 {
				t.Errorf("%s: killed at %g, want 100, the instant of the preemption", id, j.finish)
			}
		}
	}
	if killed != 11 || sum.Preempted != 11 {
		t.Errorf("%d jobs killed, summary says %d preempted; want 11", killed, sum.Preempted)
	}
	wantEveryStepExact(t, sum)
	checkNoOvercommit(t, s, jobs)
}
