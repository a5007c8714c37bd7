package e2e

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"runtime"
	"sort"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/batkube/batkube/pkg/launch"
)

// writeContendedWorkload writes n single-host delay jobs arriving as a
// Poisson process of the given rate (jobs/s), of 1, 2 or 4 cores and 10 to
// 60 s: with rate ≈ cores/70 the nodes are about fully loaded and jobs
// queue. Deterministic for a seed.
func writeContendedWorkload(t testing.TB, path string, n int, rate float64, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	type job struct {
		ID      int     `json:"id"`
		Subtime float64 `json:"subtime"`
		Res     int     `json:"res"`
		Profile string  `json:"profile"`
	}
	profiles := map[string]any{}
	jobs := make([]job, n)
	at := 0.0
	for i := range jobs {
		d, c := []int{10, 20, 40, 60}[rng.IntN(4)], []int{1, 2, 4}[rng.IntN(3)]
		name := fmt.Sprintf("d%d_c%d", d, c)
		profiles[name] = map[string]any{"type": "delay", "delay": d, "cpu": c, "memory": "1Gi"}
		jobs[i] = job{ID: i, Subtime: math.Round(at*1000) / 1000, Res: 1, Profile: name}
		at += rng.ExpFloat64() / rate
	}
	writeJSON(t, path, map[string]any{"nb_res": 4, "jobs": jobs, "profiles": profiles})
}

// checkExact checks that no job waited while it fitted: at no instant of
// its wait (a submission or an end, once every job started at that instant
// is placed) did the nodes have room for all its pods' cpu and memory
// requests (for a job of several alike pods: as many pods of its size as it
// has, counted over the nodes). It returns how many jobs waited. The jobs'
// requests and the nodes' room come from the client-go observer.
func checkExact(t *testing.T, s *simulation, jobs map[string]jobRow) (waited int) {
	t.Helper()
	const eps = 1e-6
	type run struct {
		id            string
		start, finish float64
		nodes         []string // one per pod
		req           corev1.ResourceList
	}
	var runs []*run
	var instants []float64
	for id, j := range jobs {
		instants = append(instants, j.submit)
		if j.state == "REJECTED" {
			continue
		}
		instants = append(instants, j.finish)
		pods := s.obs.podsOf(id)
		if len(pods) == 0 {
			t.Fatalf("job %s: no pod seen", id)
		}
		r := &run{id: id, start: j.start, finish: j.finish, req: pods[0].requests}
		for _, p := range pods {
			if p.node == "" || !equality.Semantic.DeepEqual(p.requests, r.req) {
				t.Fatalf("job %s: a pod on node %q requesting %v, the first %v: want every pod bound, alike", id, p.node, p.requests, r.req)
			}
			r.nodes = append(r.nodes, p.node)
		}
		runs = append(runs, r)
	}
	sort.Float64s(instants)
	s.obs.mu.Lock()
	alloc := map[string]corev1.ResourceList{}
	for name, n := range s.obs.nodes {
		alloc[name] = n.Status.Allocatable
	}
	s.obs.mu.Unlock()
	violations := 0
	for _, r := range runs {
		if r.start > jobs[r.id].submit+eps {
			waited++
		}
	}
	last := math.Inf(-1)
	for _, at := range instants {
		if at-last < eps {
			continue
		}
		last = at
		used := map[string]corev1.ResourceList{}
		for _, r := range runs {
			if r.start <= at+eps && r.finish > at+eps {
				for _, node := range r.nodes {
					used[node] = addRequests(used[node], r.req)
				}
			}
		}
		for _, r := range runs {
			if j := jobs[r.id]; !(j.submit <= at+eps && r.start > at+eps) {
				continue // not waiting at this instant
			}
			room := 0
			for node, a := range alloc {
				room += slots(a, used[node], r.req, len(r.nodes))
			}
			if room >= len(r.nodes) {
				violations++
				if violations <= 10 {
					t.Errorf("job %s of %d pods (submitted at %g, started at %g) waited at t=%g although the nodes had room for %d of its pods", r.id, len(r.nodes), jobs[r.id].submit, r.start, at, room)
				}
			}
		}
	}
	if violations > 10 {
		t.Errorf("... %d such instants in all", violations)
	}
	return waited
}

// addRequests returns used plus req (used may be nil).
func addRequests(used, req corev1.ResourceList) corev1.ResourceList {
	out := used.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for name, q := range req {
		v := out[name]
		v.Add(q)
		out[name] = v
	}
	return out
}

// slots returns how many pods requesting req fit in alloc once used is
// taken, up to most.
func slots(alloc, used, req corev1.ResourceList, most int) int {
	n := 0
	for n < most && fitsIn(alloc, used, req) {
		used = addRequests(used, req)
		n++
	}
	return n
}

// fitsIn reports whether req fits in alloc once used is taken.
func fitsIn(alloc, used, req corev1.ResourceList) bool {
	for name, want := range req {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			continue
		}
		free := alloc[name].DeepCopy()
		free.Sub(used[name])
		if free.Cmp(want) < 0 {
			return false
		}
	}
	return true
}

// A machineCondition is a condition a run must stay exact under.
type machineCondition struct {
	name string
	hog  bool     // every core busy with a CPU hog (cpuHog)
	args []string // more arguments of kubernetes-server
}

var (
	quietMachine = machineCondition{name: "quiet-machine"}
	cpuHogged    = machineCondition{name: "cpu-hog", hog: true}
	// client-go ends and reopens its watches every 5 to 10 minutes; here
	// every 300 ms, so that many job ends happen while an informer of the
	// scheduler is between two watches.
	watchesEndEvery300ms = machineCondition{name: "watches-end-every-300ms", args: []string{"--max-watch-timeout=300ms"}}
)

// runUnder runs, as a subtest per condition, a simulation newSimulation
// sets up, under that condition, then check on what it gave.
func runUnder(t *testing.T, conditions []machineCondition, newSimulation func(t *testing.T) *simulation,
	check func(t *testing.T, s *simulation, sum launch.Summary)) {
	for _, c := range conditions {
		t.Run(c.name, func(t *testing.T) {
			s := newSimulation(t)
			s.cfg.ServerArgs = append(s.cfg.ServerArgs, c.args...)
			if c.hog {
				cpuHog(t)
			}
			check(t, s, s.mustRun(15*time.Minute))
		})
	}
}

// cpuHog keeps every core of the machine busy with processes of its own
// until the test ends: the scheduler and Batkube then compete for CPU, as
// on a loaded machine.
func cpuHog(t testing.TB) {
	t.Helper()
	for range runtime.NumCPU() {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting a CPU hog: %v", err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
}
