package engine

import (
	"math"

	"github.com/batkube/batkube/pkg/simtime/timerq"
)

// A leaf of a job that computes or communicates runs as a SimGrid parallel
// task (the ptask_L07 model, the one Batsim sets): one activity that
// computes flops on each executor's host (the profile's cpu) and sends
// bytes from executor to executor (its com), the whole at one rate. It
// first waits the longest latency of its flows' routes, sharing nothing;
// then the fair bottleneck solver (fair_sharing.go) sets its rate from
// what its hosts and its links (bandwidth.go) have to share, bounded by
// one core per executor and by the TCP window. A delay leaf is no
// activity: it sleeps (run.go).

// activity is a running parallel task: the current leaf of a job whose
// profile computes flops, sends bytes, or both. Its progress goes from
// remaining = 1 to 0 at rate (fraction of the work per second), its
// computations and its flows alike.
type activity struct {
	run *run
	// hosts are the constraints the activity uses: host ids (flops in
	// coef) and, after them, links' (bytes in coef; see sharer.link).
	// Every coef is > 0.
	hosts []int
	coef  []float64
	// bound is the most the activity's rate may be (SimGrid's variable
	// bound): every executor uses at most one core, so min(speed / flops)
	// over its executors, and its flows are bounded by the TCP window.
	bound     float64
	remaining float64
	rate      float64
	updated   timerq.Time // virtual time
	// latency is the time the parallel task waits before it computes or
	// sends anything (the longest of its routes' latencies), waiting
	// says it is waiting it.
	latency float64
	waiting bool

	// solver scratch
	mark    uint64
	fixed   bool    // it grows no more
	newRate float64 // its rate so far
	inc     float64 // what it grew by in its last round
}

// settle accounts for the work done since the last update.
func (a *activity) settle(now timerq.Time) {
	if a.updated.Before(now) {
		a.remaining -= a.rate * now.Minus(a.updated)
		if a.remaining < 0 {
			a.remaining = 0
		}
		a.updated = now
	}
}

// newActivity builds the parallel task of a leaf on the run's executors,
// or returns nil if it computes nothing and sends nothing. Each executor
// that computes uses its host on its own (SimGrid gives each its own share
// of the host's cpu, so two executors on one host take two shares); its
// flows use the links' bandwidth (useLinks).
func (e *Engine) newActivity(r *run, p *Profile) *activity {
	n := len(r.executors)
	bound := math.Inf(1)
	computes := false
	for i, h := range r.executors {
		if f := executorFlops(p, i, n); f > 0 {
			computes = true
			bound = math.Min(bound, e.platform.Resources[h].Speed/f)
		}
	}
	latency, latBytes, bytes := e.communications(r, p)
	if !computes && len(bytes) == 0 {
		return nil
	}
	var a *activity
	if n := len(e.freeActs); n > 0 {
		a = e.freeActs[n-1]
		e.freeActs = e.freeActs[:n-1]
	} else {
		a = &activity{}
	}
	a.run, a.latency, a.waiting = r, latency, false
	a.hosts, a.coef = a.hosts[:0], a.coef[:0]
	for i, h := range r.executors {
		if f := executorFlops(p, i, n); f > 0 {
			a.hosts = append(a.hosts, h)
			a.coef = append(a.coef, f)
		}
	}
	e.useLinks(a, bytes)
	if latBytes > 0 {
		bound = math.Min(bound, tcpWindowBound(latBytes))
	}
	a.bound = bound
	return a
}

// executorFlops is what executor i of n computes in a leaf.
func executorFlops(p *Profile, i, n int) float64 {
	switch p.Type {
	case ProfileParallelHomogeneous:
		return p.CPU
	case ProfileParallelHomogeneousTotal:
		return p.CPU / float64(n)
	case ProfileParallel:
		return p.CPUs[i]
	}
	return 0
}

// reschedule moves the timers of the runs whose parallel task changed
// pace.
func (e *Engine) reschedule(changed []*activity) {
	for _, a := range changed {
		left := math.Inf(1)
		if a.rate > 0 {
			left = a.remaining / a.rate
		}
		e.computeEnds(&a.run.timer, left)
	}
}

// stopActivity ends the run's parallel task and lets the others speed up.
func (e *Engine) stopActivity(r *run) {
	a := r.act
	r.act = nil
	if !a.waiting {
		e.reschedule(e.sharer.remove(a, e.vt))
	}
	a.run = nil
	e.freeActs = append(e.freeActs, a)
}
