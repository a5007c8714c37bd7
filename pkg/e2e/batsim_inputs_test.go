package e2e

import (
	"math"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/batkube/batkube/pkg/translate"
)

// TestBatsimInputsWithBatsimSemantics: a platform and a workload in the
// style of Batsim's own (pkg/e2e/testdata/batsim_like_*: host names that
// are not node names, a cluster, zones of two routings, a speed list; jobs
// of 1 to 6 hosts whose profiles request no cpu or memory), run with the
// defaults and nothing else. Every host becomes a node with a valid, unique
// name that keeps the Batsim name in an annotation; every job completes;
// as in Batsim, a job holds its hosts alone (no host runs two jobs at any
// instant) and starts as soon as enough hosts are free (no job waits at an
// instant when as many hosts as it asks for are free, its multi-host pods
// placed all at once); every step is exact.
func TestBatsimInputsWithBatsimSemantics(t *testing.T) {
	s := newSimulation(t, "pkg/e2e/testdata/batsim_like_platform.xml", "pkg/e2e/testdata/batsim_like_workload.json")
	sum := s.mustRun(10 * time.Minute)
	jobs := s.jobs()
	if sum.Succeeded != 40 || len(jobs) != 40 {
		t.Fatalf("%d of %d jobs succeeded, want 40", sum.Succeeded, len(jobs))
	}
	wantEveryStepExact(t, sum)
	s.obs.mu.Lock()
	hosts := map[string]bool{}
	for name, n := range s.obs.nodes {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("node %q: not a valid name: %v", name, errs)
		}
		hosts[n.Annotations[translate.HostNameKey]] = true
	}
	s.obs.mu.Unlock()
	for _, h := range []string{"Tremblay", "Jacquelin", "Node_A.1", "node-a.1", "Grid_0.lan", "Grid_3.lan"} {
		if !hosts[h] {
			t.Errorf("no node for Batsim host %q (nodes' host names: %v)", h, hosts)
		}
	}
	if len(hosts) != 8 {
		t.Errorf("%d nodes, want 8 (every host but the master)", len(hosts))
	}
	if waited := checkBatsimSemantics(t, jobs, 8); waited == 0 {
		t.Error("no job waited: the workload is meant to make jobs queue")
	}
	checkGangsBoundAtOnce(t, s)
}

// TestBatsimNetworkThroughTheStack runs a platform in the style of Batsim's
// cluster512.xml (a cluster with a backbone, the master host in a cluster
// of its own: each job's end reaches Batsim's server 1.6 ms after it, and
// every message between Batsim's actors on the master host takes 600 µs)
// and jobs that communicate over it (pkg/engine/testdata/comms.json), with
// kube-scheduler and the defaults: every job completes, every step is
// exact, a job holds its hosts alone, and none waits at an instant when its
// hosts were known to be free (ends are known when heard of, pods placed
// when bound).
func TestBatsimNetworkThroughTheStack(t *testing.T) {
	s := newSimulation(t, "pkg/engine/testdata/platforms/master_cluster.xml", "pkg/engine/testdata/comms.json")
	sum := s.mustRun(10 * time.Minute)
	jobs := s.jobs()
	if sum.Succeeded+sum.WalltimeReached != 24 || len(jobs) != 24 {
		t.Fatalf("%d succeeded and %d reached their walltime, of %d jobs; want all 24 ended", sum.Succeeded, sum.WalltimeReached, len(jobs))
	}
	wantEveryStepExact(t, sum)
	late := 0
	for _, j := range jobs {
		// Batsim hears of a job's end 1.6 ms after it at least
		if j.heard < j.finish+1.6e-3-1e-9 {
			t.Errorf("job %s ended at %g and was heard of at %g: want 1.6 ms later at least", j.id, j.finish, j.heard)
		}
		if j.start > j.placed+1e-9 {
			late++
		}
	}
	if late == 0 {
		t.Error("no job started after its pods were bound: the master host's messages took no time")
	}
	checkBatsimSemantics(t, jobs, 8)
}

// checkBatsimSemantics checks, from _jobs.csv's allocations, that no host
// ran two jobs at any instant and that no job waited at an instant (when a
// submission or an end was heard of, once the jobs placed then are placed)
// when at least as many hosts as it asks for were known to be free. It
// returns how many jobs waited.
func checkBatsimSemantics(t *testing.T, jobs map[string]jobRow, nHosts int) (waited int) {
	t.Helper()
	const eps = 1e-6
	var instants []float64
	for _, j := range jobs {
		instants = append(instants, j.known)
		if !math.IsNaN(j.finish) {
			instants = append(instants, j.finish, j.heard)
		}
		if j.start > j.submit+eps {
			waited++
		}
	}
	sort.Float64s(instants)
	shared, late := 0, 0
	last := math.Inf(-1)
	for _, at := range instants {
		if at-last < eps {
			continue
		}
		last = at
		busy := map[int]string{}
		for id, j := range jobs {
			if !(j.start <= at+eps && j.finish > at+eps) {
				continue
			}
			for _, h := range j.alloc {
				if other, ok := busy[h]; ok {
					if shared++; shared <= 5 {
						t.Errorf("t=%g: host %d runs jobs %s and %s", at, h, other, id)
					}
				}
				busy[h] = id
			}
		}
		known := 0 // hosts busy, or whose job's end is not heard of yet
		for _, j := range jobs {
			if j.placed <= at+eps && j.heard > at+eps {
				known += len(j.alloc)
			}
		}
		free := nHosts - known
		for id, j := range jobs {
			if j.known <= at+eps && j.placed > at+eps && len(j.alloc) <= free {
				if late++; late <= 5 {
					t.Errorf("job %s of %d hosts (submitted at %g, started at %g) waited at t=%g with %d hosts free", id, len(j.alloc), j.submit, j.start, at, free)
				}
			}
		}
	}
	if shared > 5 || late > 5 {
		t.Errorf("... %d instants with a shared host, %d late jobs in all", shared, late)
	}
	return waited
}
