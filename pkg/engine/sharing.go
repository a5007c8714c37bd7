package engine

import (
	"math"

	"github.com/batkube/batkube/pkg/simtime/timerq"
)

// SharingModel says how much computing power a host offers to the jobs that
// share it (with compute sharing on).
type SharingModel int

const (
	// SharePerCore is SimGrid's: a host offers cores × speed flops per
	// second, and each executor uses at most one core.
	SharePerCore SharingModel = iota
	// ShareWholeHost ignores cores: a host offers speed flops per second,
	// and each executor uses at most that.
	ShareWholeHost
)

// activity is a running computation: the current step of a job whose
// profile computes flops. Its progress goes from remaining = 1 to 0 at rate
// (fraction of the work per second).
type activity struct {
	run *run
	// hosts are the constraints the activity uses: host ids (flops in
	// coef) and, after them, links' (bytes in coef; see sharer.link).
	hosts []int
	coef  []float64
	// bound is the rate at which the activity runs alone: every executor
	// uses one core, so min(speed / flops) over its executors.
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
	fixed   bool
	newRate float64
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

// sharer sets the rates of the activities running on shared hosts, as
// SimGrid's ptask_L07 model without network does: max-min fairness over the
// activities' rates, each host h bounded by capacity[h] flops per second
// (sum of rate × flops on h), each activity by its bound.
type sharer struct {
	capacity []float64     // per constraint: hosts, then links
	acts     [][]*activity // per constraint
	hostMark []uint64
	mark     uint64
	// links are the links' constraints, by linkUse.constraint()
	links map[int]int

	// scratch, reused between updates
	compHosts []int
	compActs  []*activity
	remcap    []float64
	sumcoef   []float64
	changed   []*activity
}

func newSharer(resources []Resource, model SharingModel) *sharer {
	s := &sharer{
		capacity: make([]float64, len(resources)),
		acts:     make([][]*activity, len(resources)),
		hostMark: make([]uint64, len(resources)),
		remcap:   make([]float64, len(resources)),
		sumcoef:  make([]float64, len(resources)),
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
// adding it the first time.
func (s *sharer) link(key int, bw float64) int {
	if c, ok := s.links[key]; ok {
		return c
	}
	if s.links == nil {
		s.links = map[int]int{}
	}
	c := len(s.capacity)
	s.links[key] = c
	s.capacity = append(s.capacity, bw)
	s.acts = append(s.acts, nil)
	s.hostMark = append(s.hostMark, 0)
	s.remcap = append(s.remcap, 0)
	s.sumcoef = append(s.sumcoef, 0)
	return c
}

// add starts an activity at now and returns the activities whose rate
// changed (the new one included); the slice is reused by the next call.
func (s *sharer) add(a *activity, now timerq.Time) []*activity {
	a.remaining, a.rate, a.updated = 1, 0, now
	for _, h := range a.hosts {
		s.acts[h] = append(s.acts[h], a)
	}
	return s.update(a.hosts, now)
}

// remove stops an activity at now and returns the activities whose rate
// changed; the slice is reused by the next call.
func (s *sharer) remove(a *activity, now timerq.Time) []*activity {
	for _, h := range a.hosts {
		list := s.acts[h]
		for i, other := range list {
			if other == a {
				last := len(list) - 1
				list[i] = list[last]
				list[last] = nil
				s.acts[h] = list[:last]
				break
			}
		}
	}
	return s.update(a.hosts, now)
}

// update recomputes the rates of the activities connected to the seed hosts
// (through hosts they share).
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

// solve sets newRate for the activities of the component by progressive
// filling: all rates grow together until a host is saturated or an activity
// reaches its bound; those are fixed, and the others go on growing.
func (s *sharer) solve() {
	for _, h := range s.compHosts {
		s.remcap[h] = s.capacity[h]
	}
	unfixed := len(s.compActs)
	for _, a := range s.compActs {
		a.fixed = false
	}
	for unfixed > 0 {
		for _, h := range s.compHosts {
			s.sumcoef[h] = 0
		}
		minBound := math.Inf(1)
		for _, a := range s.compActs {
			if a.fixed {
				continue
			}
			for i, h := range a.hosts {
				s.sumcoef[h] += a.coef[i]
			}
			minBound = math.Min(minBound, a.bound)
		}
		share, saturated := math.Inf(1), -1
		for _, h := range s.compHosts {
			if s.sumcoef[h] > 0 {
				if v := s.remcap[h] / s.sumcoef[h]; v < share {
					share, saturated = v, h
				}
			}
		}
		for _, a := range s.compActs {
			if a.fixed {
				continue
			}
			switch {
			case minBound <= share && a.bound <= minBound:
				s.fix(a, a.bound)
				unfixed--
			case minBound > share && touches(a, saturated):
				s.fix(a, share)
				unfixed--
			}
		}
	}
}

func (s *sharer) fix(a *activity, rate float64) {
	a.fixed = true
	a.newRate = rate
	for i, h := range a.hosts {
		s.remcap[h] = math.Max(0, s.remcap[h]-a.coef[i]*rate)
	}
}

func touches(a *activity, host int) bool {
	for _, h := range a.hosts {
		if h == host {
			return true
		}
	}
	return false
}
