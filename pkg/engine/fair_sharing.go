package engine

import (
	"math"
	"slices"

	"github.com/batkube/batkube/pkg/simtime/timerq"
)

// The fair bottleneck solver of SimGrid's ptask_L07 model (its default
// solver, so Batsim's): it sets the rate of every running parallel task
// (parallel_task.go) from what the hosts (flops per second) and the links
// (bytes per second, bandwidth.go) that the tasks use have to share. The
// tasks on a saturated host or link get equal flops or bytes per second of
// it, unless held back elsewhere (a FATPIPE link offers each all it has
// left); each task is bounded by its own bound.

// SharingModel says how much computing power a host offers to the
// executors that share it: several jobs' (with compute sharing on), or one
// job's mapped onto the host more than once.
type SharingModel int

const (
	// SharePerCore is SimGrid's: a host offers cores × speed flops per
	// second, and each executor uses at most one core.
	SharePerCore SharingModel = iota
	// ShareWholeHost ignores cores: a host offers speed flops per second,
	// and each executor uses at most that.
	ShareWholeHost
)

// sharer sets the rates of the activities running on shared hosts and
// links as SimGrid's ptask_L07 model does, with its default solver (the
// fair bottleneck of host/solver): each host h offers capacity[h] flops per
// second (sum of rate × flops on h), each link its bandwidth (sum of rate ×
// bytes, or for a FATPIPE link each activity's rate × bytes alone), each
// activity is bounded by its bound. See solve.
type sharer struct {
	capacity []float64     // per constraint: hosts, then links
	fatpipe  []bool        // per constraint: a FATPIPE link's
	acts     [][]*activity // per constraint, in the order they were added
	coefs    [][]float64   // per constraint: the acts' coef on it
	hostMark []uint64
	mark     uint64
	// links are the links' constraints, by linkUse.constraint()
	links map[int]int

	// scratch, reused between updates
	compHosts []int
	compActs  []*activity
	remcap    []float64 // what a constraint has left
	share     []float64 // what it offers each activity in this round
	open      []bool    // it is not saturated
	changed   []*activity
}

func newSharer(resources []Resource, model SharingModel) *sharer {
	n := len(resources)
	s := &sharer{
		capacity: make([]float64, n),
		fatpipe:  make([]bool, n),
		acts:     make([][]*activity, n),
		coefs:    make([][]float64, n),
		hostMark: make([]uint64, n),
		remcap:   make([]float64, n),
		share:    make([]float64, n),
		open:     make([]bool, n),
	}
	for i, r := range resources {
		s.capacity[i] = r.Speed
		if model == SharePerCore {
			s.capacity[i] *= float64(r.Cores)
		}
	}
	return s
}

// link returns the constraint of a link's bandwidth (bytes per second),
// adding it the first time; a FATPIPE link bounds each activity alone.
func (s *sharer) link(key int, bw float64, fatpipe bool) int {
	if c, ok := s.links[key]; ok {
		return c
	}
	if s.links == nil {
		s.links = map[int]int{}
	}
	c := len(s.capacity)
	s.links[key] = c
	s.capacity = append(s.capacity, bw)
	s.fatpipe = append(s.fatpipe, fatpipe)
	s.acts = append(s.acts, nil)
	s.coefs = append(s.coefs, nil)
	s.hostMark = append(s.hostMark, 0)
	s.remcap = append(s.remcap, 0)
	s.share = append(s.share, 0)
	s.open = append(s.open, false)
	return c
}

// add starts an activity at now and returns the activities whose rate
// changed (the new one included); the slice is reused by the next call.
func (s *sharer) add(a *activity, now timerq.Time) []*activity {
	a.remaining, a.rate, a.updated = 1, 0, now
	for i, h := range a.hosts {
		s.acts[h] = append(s.acts[h], a)
		s.coefs[h] = append(s.coefs[h], a.coef[i])
	}
	return s.update(a.hosts, now)
}

// remove stops an activity at now and returns the activities whose rate
// changed; the slice is reused by the next call.
func (s *sharer) remove(a *activity, now timerq.Time) []*activity {
	for _, h := range a.hosts {
		// in order: the solver's sums follow it
		if i := slices.Index(s.acts[h], a); i >= 0 {
			s.acts[h] = slices.Delete(s.acts[h], i, i+1)
			s.coefs[h] = slices.Delete(s.coefs[h], i, i+1)
		}
	}
	return s.update(a.hosts, now)
}

// update recomputes the rates of the activities connected to the seed
// constraints (through the hosts and links they share).
func (s *sharer) update(seed []int, now timerq.Time) []*activity {
	s.mark++
	s.compHosts = s.compHosts[:0]
	s.compActs = s.compActs[:0]
	for _, h := range seed {
		if s.hostMark[h] != s.mark {
			s.hostMark[h] = s.mark
			s.compHosts = append(s.compHosts, h)
		}
	}
	for i := 0; i < len(s.compHosts); i++ {
		for _, a := range s.acts[s.compHosts[i]] {
			if a.mark == s.mark {
				continue
			}
			a.mark = s.mark
			s.compActs = append(s.compActs, a)
			for _, h := range a.hosts {
				if s.hostMark[h] != s.mark {
					s.hostMark[h] = s.mark
					s.compHosts = append(s.compHosts, h)
				}
			}
		}
	}
	for _, a := range s.compActs {
		a.settle(now)
	}
	s.solve()
	s.changed = s.changed[:0]
	for _, a := range s.compActs {
		if a.newRate != a.rate {
			a.rate = a.newRate
			s.changed = append(s.changed, a)
		}
	}
	return s.changed
}

// solverPrecision is SimGrid's maxmin/precision: what a constraint has left
// below it is nothing.
const solverPrecision = 1e-5

// maxSolverRounds bounds the rounds of solve, which end after a few in
// practice (each saturates a constraint or bounds an activity).
const maxSolverRounds = 1 << 16

// solve sets newRate for the activities of the component as SimGrid 3.32's
// fair bottleneck solver does (the ptask_L07 model's default), in rounds:
//
//   - each constraint still open offers each of its activities that still
//     grow an equal part of what it has left (a FATPIPE link offers each
//     all it has left);
//   - each growing activity grows by the least of its constraints' offers
//     (over its use of each) and of what its bound leaves, and grows no
//     more once at its bound;
//   - each constraint loses what every activity on it grew by in its last
//     round (a FATPIPE link the least of those), the grown ones' included;
//     a constraint with less than solverPrecision left is saturated, and
//     its activities grow no more.
//
// So activities sharing a saturated constraint get equal shares of it (in
// flops or bytes per second, not equal rates), unless bounded elsewhere.
func (s *sharer) solve() {
	growing := 0
	for _, a := range s.compActs {
		a.fixed, a.newRate, a.inc = false, 0, 0
		growing++
	}
	for _, c := range s.compHosts {
		s.remcap[c], s.open[c] = s.capacity[c], true
	}
	for round := 0; growing > 0 && round < maxSolverRounds; round++ {
		for _, c := range s.compHosts {
			if !s.open[c] {
				continue
			}
			n := 0
			for _, a := range s.acts[c] {
				if !a.fixed {
					n++
				}
			}
			switch {
			case n == 0:
				s.open[c] = false
			case s.fatpipe[c]:
				s.share[c] = s.remcap[c]
			default:
				s.share[c] = s.remcap[c] / float64(n)
			}
		}
		for _, a := range s.compActs {
			if a.fixed {
				continue
			}
			inc := math.Inf(1)
			for i, c := range a.hosts {
				inc = math.Min(inc, s.share[c]/a.coef[i])
			}
			if !math.IsInf(a.bound, 1) {
				inc = math.Min(inc, a.bound-a.newRate)
			}
			a.inc = inc
			a.newRate += inc
			if a.newRate == a.bound || math.IsInf(inc, 1) {
				a.fixed = true
				growing--
			}
		}
		for _, c := range s.compHosts {
			if !s.open[c] {
				continue
			}
			// the newest activity first, as SimGrid lists them
			acts, coefs := s.acts[c], s.coefs[c]
			if s.fatpipe[c] {
				used := s.share[c]
				for i := len(acts) - 1; i >= 0; i-- {
					used = math.Min(used, coefs[i]*acts[i].inc)
				}
				s.remcap[c] = lessPrecise(s.remcap[c], used)
			} else {
				for i := len(acts) - 1; i >= 0; i-- {
					s.remcap[c] = lessPrecise(s.remcap[c], coefs[i]*acts[i].inc)
				}
			}
			if s.remcap[c] > 0 {
				continue
			}
			s.open[c] = false
			for _, a := range acts {
				if !a.fixed {
					a.fixed = true
					growing--
				}
			}
		}
	}
}

// lessPrecise is x - y, or 0 if that is below solverPrecision.
func lessPrecise(x, y float64) float64 {
	if x -= y; x < solverPrecision {
		return 0
	}
	return x
}
