package engine

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// delayJobs is a workload of n single-host delay jobs of 10 s, one every
// spacing seconds.
func delayJobs(n int, spacing float64) *Workload {
	w := &Workload{Name: "w", NbRes: 1, Profiles: map[string]*Profile{
		"d10": {Name: "d10", Type: ProfileDelay, Delay: 10},
	}}
	w.Jobs = make([]*Job, n)
	for i := range w.Jobs {
		name := strconv.Itoa(i)
		w.Jobs[i] = &Job{ID: "w!" + name, Name: name, Workload: "w", Subtime: float64(i) * spacing, Res: 1, Profile: "d10", Walltime: -1}
	}
	return w
}

// firstFit is a trivial decision process: it starts waiting jobs, in
// submission order, on the free hosts (lowest id first).
type firstFit struct {
	free    []int // a stack of free host ids
	waiting []string
	head    int
	ds      []Decision
	done    int // jobs completed
}

func newFirstFit(hosts int) *firstFit {
	f := &firstFit{}
	for h := hosts - 1; h >= 0; h-- {
		f.free = append(f.free, h)
	}
	return f
}

func (f *firstFit) decide(msg Message) (float64, []Decision) {
	for _, ev := range msg.Events {
		switch ev := ev.(type) {
		case JobSubmitted:
			f.waiting = append(f.waiting, ev.Job.ID)
		case JobCompleted:
			f.free = append(f.free, ev.Alloc[0])
			f.done++
		}
	}
	f.ds = f.ds[:0]
	for f.head < len(f.waiting) && len(f.free) > 0 {
		h := f.free[len(f.free)-1]
		f.free = f.free[:len(f.free)-1]
		f.ds = append(f.ds, ExecuteJob{Timestamp: msg.Now, JobID: f.waiting[f.head], Alloc: []int{h}})
		f.head++
	}
	if f.head == len(f.waiting) { // keep the queue from growing with finished jobs
		f.waiting, f.head = f.waiting[:0], 0
	}
	return msg.Now, f.ds
}

// BenchmarkDelayJobs runs 100,000 delay jobs on 1,000 hosts with a
// first-fit decision loop; ns/job includes the decision loop.
func BenchmarkDelayJobs(b *testing.B) {
	benchDelayJobs(b, homogeneous(1000))
}

// BenchmarkDelayJobsOverTheNetwork is BenchmarkDelayJobs on a cluster512
// style platform of 1,000 hosts: every job's end crosses 1.6 ms of network
// to the master host, and every message of Batsim's actors there 600 µs
// (server.go), so the engine runs Batsim's messages one by one.
func BenchmarkDelayJobsOverTheNetwork(b *testing.B) {
	p, err := ParsePlatform(strings.NewReader(`<platform version="4.1"><zone id="AS0" routing="Full">
  <cluster id="c1" prefix="n" suffix="" radical="0-999" speed="1Gf" bw="125MBps" lat="50us" bb_bw="2.25GBps" bb_lat="500us"/>
  <cluster id="c2" prefix="master_host" suffix="" radical="0-0" speed="1Gf" bw="125MBps" lat="50us" bb_bw="2.25GBps" bb_lat="500us"><prop id="role" value="master"/></cluster>
  <link id="backbone" bandwidth="1.25GBps" latency="500us"/>
  <zoneRoute src="c1" dst="c2" gw_src="nc1_router" gw_dst="master_hostc2_router"><link_ctn id="backbone"/></zoneRoute>
</zone></platform>`))
	if err != nil {
		b.Fatal(err)
	}
	if !p.MasterMessage.takesTime() {
		b.Fatal("the master's messages take no time")
	}
	benchDelayJobs(b, p)
}

// benchDelayJobs runs 100,000 delay jobs (about 830 at a time) on the
// platform's resources, and reports the time, allocations and bytes a job.
func benchDelayJobs(b *testing.B, p *Platform) {
	const jobs = 100_000
	hosts := len(p.Resources)
	w := delayJobs(jobs, 0.012)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for b.Loop() {
		e := mustNew(b, p, []*Workload{w}, Options{})
		f := newFirstFit(hosts)
		if err := loop(e, f.decide); err != nil {
			b.Fatal(err)
		}
		if f.done != jobs {
			b.Fatalf("got %d jobs completed, want %d", f.done, jobs)
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	n := float64(b.N) * jobs
	b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/job")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/job")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/job")
}

// BenchmarkSharedComputations runs 10,000 computations of 3 s on 100
// four-core hosts, one new job per host per second (3 at a time on average,
// often more than 4), so starts and ends change the pace of the others.
func BenchmarkSharedComputations(b *testing.B) {
	const jobs, hosts = 10_000, 100
	w := &Workload{Name: "w", NbRes: 1, Profiles: map[string]*Profile{
		"c": {Name: "c", Type: ProfileParallelHomogeneous, CPU: 3e9},
	}}
	for i := range jobs {
		name := strconv.Itoa(i)
		w.Jobs = append(w.Jobs, &Job{ID: "w!" + name, Name: name, Workload: "w", Subtime: float64(i) * 0.01, Res: 1, Profile: "c", Walltime: -1})
	}
	p := homogeneous(hosts)
	for i := range p.Resources {
		p.Resources[i].Cores = 4
	}
	for b.Loop() {
		e := mustNew(b, p, []*Workload{w}, Options{ComputeSharing: true})
		next := 0
		err := loop(e, func(msg Message) (float64, []Decision) {
			var ds []Decision
			for _, ev := range msg.Events {
				if s, ok := ev.(JobSubmitted); ok {
					ds = append(ds, ExecuteJob{Timestamp: msg.Now, JobID: s.Job.ID, Alloc: []int{next % hosts}})
					next++
				}
			}
			return msg.Now, ds
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*jobs), "ns/job")
}

// TestMemoryDoesNotGrowWithFinishedJobs checks that what the engine keeps
// while it runs does not grow with the jobs already finished: everything
// but the input is released when a job ends.
func TestMemoryDoesNotGrowWithFinishedJobs(t *testing.T) {
	const jobs, hosts = 40_000, 1000
	w := delayJobs(jobs, 0.012)
	e := mustNew(t, homogeneous(hosts), []*Workload{w}, Options{})
	f := newFirstFit(hosts)
	var early, late uint64
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	if err := loop(e, func(msg Message) (float64, []Decision) {
		now, ds := f.decide(msg)
		switch {
		case early == 0 && f.done >= jobs/5:
			early = heap()
		case late == 0 && f.done >= jobs-2*hosts:
			late = heap()
		}
		return now, ds
	}); err != nil {
		t.Fatal(err)
	}
	finished := float64(jobs - 2*hosts - jobs/5)
	perJob := (float64(late) - float64(early)) / finished
	t.Logf("heap: %d B after %d jobs, %d B after %d jobs: %+.2f B per finished job", early, jobs/5, late, jobs-2*hosts, perJob)
	if perJob > 8 {
		t.Errorf("heap grew by %.1f B per finished job (from %d to %d B), want no growth", perJob, early, late)
	}
	busy := 0
	for _, r := range e.runs {
		if r != nil {
			busy++
		}
	}
	if busy != 0 || e.timers.Len() != 0 || len(e.meta) != 0 || len(e.freeRuns) > hosts || e.nbRunning != 0 {
		t.Errorf("after the end: got %d runs, %d timers, %d metadata, %d pooled runs, %d running; want 0, 0, 0, <= %d, 0",
			busy, e.timers.Len(), len(e.meta), len(e.freeRuns), e.nbRunning, hosts)
	}
}
