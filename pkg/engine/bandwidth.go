package engine

import (
	"math"
	"slices"
)

// The links' bandwidth, as the flows of parallel tasks share it (SimGrid's
// ptask_L07 model, the one Batsim sets).
//
// A leaf of a parallel, parallel_homogeneous or parallel_homogeneous_total
// profile with a com sends bytes from executor to executor: each such flow
// crosses the route between their hosts (routing.go). The task waits the
// longest latency of those routes first (parallel_task.go); then the
// bandwidth of each link it crosses is a constraint of the fair bottleneck
// solver (fair_sharing.go), which the task uses by the bytes it sends
// across it:
//
//   - a SHARED link has one bandwidth for both ways: the bytes of the
//     task's flows crossing it, either way, add up;
//   - a SPLITDUPLEX link has a bandwidth each way: the bytes of the flows
//     crossing it one way add up on that way's;
//   - a FATPIPE link gives each flow its whole bandwidth: only the task's
//     largest flow on it counts, and the solver offers each task on it all
//     that it has left, not a share.
//
// Tasks crossing a SHARED link or a SPLITDUPLEX link's way share its
// bandwidth in equal bytes per second, unless held back elsewhere. A
// task's rate is also bounded by SimGrid's TCP window: gamma (4 MiB) / (2
// × the largest latency × bytes of its flows). There is no latency or
// bandwidth factor (ptask_L07 has none).

// constraint is the key of the bandwidth that a use of a link shares with
// others: the link's, or one way's of a split-duplex link.
func (u linkUse) constraint() int {
	if u.down && u.link.policy == linkSplitDuplex {
		return 2*u.link.id + 1
	}
	return 2 * u.link.id
}

// communications adds up what a leaf of a parallel task sends: the bytes
// crossing each link's bandwidth (by linkUse.constraint(), in a map reused
// by the next call; for a FATPIPE link, which bounds each flow on its own,
// the bytes of its largest flow, as SimGrid's expand keeps the largest use
// of a FATPIPE constraint), and the latency the task waits first (the longest of
// its routes'), as SimGrid's ptask_L07 model, and the largest latency ×
// bytes of a route (for the TCP window). Executor x sends to executor y Coms[x*n+y]
// bytes (parallel), Com (parallel_homogeneous) or Com / n
// (parallel_homogeneous_total) when x != y.
func (e *Engine) communications(r *run, p *Profile) (latency, latBytes float64, bytes map[int]float64) {
	if p.Coms == nil && p.Com == 0 {
		return 0, 0, nil
	}
	clear(e.linkBytes)
	if e.linkBytes == nil {
		e.linkBytes = map[int]float64{}
	}
	n := len(r.executors)
	for x, hx := range r.executors {
		for y, hy := range r.executors {
			var b float64
			switch {
			case p.Type == ProfileParallel:
				b = p.Coms[x*n+y]
			case x == y:
			case p.Type == ProfileParallelHomogeneous:
				b = p.Com
			case p.Type == ProfileParallelHomogeneousTotal:
				b = p.Com / float64(n)
			}
			if !(b > 0) {
				continue
			}
			rt := e.hostRoute(hx, hy)
			latency = math.Max(latency, rt.latency)
			latBytes = math.Max(latBytes, rt.latency*b)
			for _, u := range rt.uses {
				if u.link.policy == linkFatpipe {
					// a FATPIPE constrains each flow on its own
					e.linkBytes[u.constraint()] = max(e.linkBytes[u.constraint()], b)
				} else {
					e.linkBytes[u.constraint()] += b
				}
			}
		}
	}
	return latency, latBytes, e.linkBytes
}

// useLinks adds to the activity the bandwidth constraints of the links its
// flows cross, by the bytes communications found on each, in the order of
// their keys (the solver sums in this order); a link of no bandwidth
// constrains nothing.
func (e *Engine) useLinks(a *activity, bytes map[int]float64) {
	e.linkKeys = e.linkKeys[:0]
	for key := range bytes {
		e.linkKeys = append(e.linkKeys, key)
	}
	slices.Sort(e.linkKeys)
	for _, key := range e.linkKeys {
		b := bytes[key]
		l := e.platform.net.all[key/2]
		if l.bw > 0 {
			a.hosts = append(a.hosts, e.sharer.link(key, l.bw, l.policy == linkFatpipe))
			a.coef = append(a.coef, b)
		}
	}
}

// tcpGamma is SimGrid's network/TCP-gamma default (4 MiB): the window that
// bounds a flow's rate by gamma / (2 × latency).
const tcpGamma = 4194304

// tcpWindowBound is the most a parallel task's rate may be under SimGrid's
// TCP window: gamma / (2 × the largest latency × bytes of its flows), given
// that largest product (communications' latBytes, > 0).
func tcpWindowBound(latBytes float64) float64 {
	return tcpGamma / (2 * latBytes)
}
