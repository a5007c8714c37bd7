package engine

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Routes between hosts, as SimGrid 3.32 computes them
// (NetZoneImpl::get_global_route): the route between the two points that
// stand for the hosts in their deepest common zone, as that zone's routing
// computes it, and around it the routes from the source to its gateway and
// from its other gateway to the destination. Zones routed Full, Floyd,
// Dijkstra (and DijkstraCache), Cluster and Vivaldi route as in SimGrid
// (Floyd and Dijkstra by the number of links, ties broken as SimGrid
// breaks them); a zone routed None routes nothing, as in SimGrid. A route
// is its links in order, each crossed one way, and its latency (its
// links', plus the distance between Vivaldi coordinates): a message's time
// comes from it (message_time.go), and so do the links a parallel task's
// flows cross (bandwidth.go).

// netPointKind is what a point of a zone's routing stands for.
type netPointKind uint8

const (
	pointHost netPointKind = iota
	pointRouter
	pointZone
)

// netPoint is a vertex of a zone's routing: a host, a router or a child
// zone (SimGrid's NetPoint).
type netPoint struct {
	name   string
	kind   netPointKind
	zone   *zoneNode // the zone the point is in
	child  *zoneNode // pointZone: the zone it stands for
	id     int       // its index in zone.net.points, creation order
	coords []float64 // Vivaldi coordinates, if given
}

// linkUse is a link as a route crosses it: down is the DOWN way of a
// split-duplex link.
type linkUse struct {
	link *netLink
	down bool
}

// reversed is a route's links the other way.
func reversed(uses []linkUse) []linkUse {
	out := make([]linkUse, len(uses))
	for i, u := range uses {
		out[len(uses)-1-i] = linkUse{link: u.link, down: !u.down}
	}
	return out
}

// netRoute is a route of a zone's table: its links in order and, between
// zones, its gateways.
type netRoute struct {
	links        []linkUse
	gwSrc, gwDst *netPoint
	dst          int // the index of the point it goes to, in its zone
}

// zoneNet is a zone's routing.
type zoneNet struct {
	routing string    // the zone's routing, lower case ("full", "cluster"...)
	point   *netPoint // the zone as a point of its parent (nil for the root)
	points  []*netPoint
	// routes are the routes declared in the zone (Full, Floyd, Dijkstra),
	// symmetrical ones in both directions.
	routes map[[2]int]*netRoute
	// Floyd: the predecessor of each point on the cheapest path, computed
	// once.
	pred [][]int
	// Dijkstra: each point's routes out, by the index of their end.
	out map[int][]*netRoute
	// star routing (Cluster, Vivaldi): each point's links towards the
	// centre (up) and from it (down), and the backbone. (Zone routes name
	// the cluster's router as their gateway: it needs no links.)
	up, down map[int][]linkUse
	backbone *netLink
	// loopback is a <cluster>'s (loopback_bw, loopback_lat): the route of
	// a host to itself.
	loopback *netLink
}

// isStar says whether a zone routes as a star (SimGrid's Cluster and
// Vivaldi zones): through each point's private links and a backbone.
func isStar(z *zoneNode) bool {
	return z.net.routing == "cluster" || z.net.routing == "vivaldi"
}

// pathAcc accumulates a route: its latency and narrowest bandwidth, and
// the links crossed if collect is set.
type pathAcc struct {
	latency float64
	minBW   float64
	collect bool
	uses    []linkUse
}

func (r *pathAcc) add(uses []linkUse) {
	if r.collect {
		r.uses = append(r.uses, uses...)
	}
	for _, u := range uses {
		r.latency += u.link.latency
		r.narrow(u.link.bw)
	}
}

// narrow takes a bandwidth on the route into account (0: none).
func (r *pathAcc) narrow(bw float64) {
	if bw > 0 && (r.minBW == 0 || bw < r.minBW) {
		r.minBW = bw
	}
}

// merge appends the route o after r.
func (r *pathAcc) merge(o *pathAcc) {
	r.latency += o.latency
	r.uses = append(r.uses, o.uses...)
	r.narrow(o.minBW)
}

// maxRouteDepth bounds the recursion over gateways (a platform whose zone
// routes loop).
const maxRouteDepth = 64

// route adds the route from src to dst as SimGrid's
// NetZoneImpl::get_global_route builds it: the route between the two
// children of their deepest common zone, then recursively from src to that
// route's source gateway and from its destination gateway to dst.
func (n *network) route(src, dst *netPoint, r *pathAcc, depth int) error {
	if depth > maxRouteDepth {
		return errors.New("the zone routes loop")
	}
	common, srcAnc, dstAnc := commonAncestors(src, dst)
	if srcAnc == dstAnc {
		_, _, err := n.localRoute(common, src, dst, r, depth)
		return err
	}
	mid := pathAcc{collect: r.collect}
	gwSrc, gwDst, err := n.localRoute(common, srcAnc, dstAnc, &mid, depth)
	if err != nil {
		return err
	}
	if gwSrc == nil || gwDst == nil {
		return fmt.Errorf("no zone route between %q and %q in zone %q (SimGrid: \"Bad gateways\")", srcAnc.name, dstAnc.name, common.id)
	}
	if src != gwSrc {
		if err := n.route(src, gwSrc, r, depth+1); err != nil {
			return err
		}
	}
	r.merge(&mid)
	if gwDst != dst {
		return n.route(gwDst, dst, r, depth+1)
	}
	return nil
}

// commonAncestors finds the deepest zone holding both points, and the
// points that stand for each of them in it (the points themselves, or the
// child zones they are in).
func commonAncestors(src, dst *netPoint) (common *zoneNode, srcAnc, dstAnc *netPoint) {
	if src.zone == dst.zone {
		return src.zone, src, src
	}
	chain := func(z *zoneNode) []*zoneNode {
		var out []*zoneNode
		for ; z != nil; z = z.parent {
			out = append(out, z)
		}
		return out
	}
	sc, dc := chain(src.zone), chain(dst.zone)
	i, j := len(sc)-1, len(dc)-1
	for i >= 0 && j >= 0 && sc[i] == dc[j] {
		common = sc[i]
		i--
		j--
	}
	srcAnc, dstAnc = src, dst
	if i >= 0 {
		srcAnc = sc[i].net.point
	}
	if j >= 0 {
		dstAnc = dc[j].net.point
	}
	return common, srcAnc, dstAnc
}

// localRoute adds the route between two points of zone z, as its routing
// computes it, and returns its gateways.
func (n *network) localRoute(z *zoneNode, src, dst *netPoint, r *pathAcc, depth int) (gwSrc, gwDst *netPoint, err error) {
	switch z.net.routing {
	case "full", "", "floyd", "dijkstra", "dijkstracache":
		if src == dst && z.net.routes[[2]int{src.id, dst.id}] == nil {
			r.add([]linkUse{{link: n.loopback}})
			return nil, nil, nil
		}
	}
	switch z.net.routing {
	case "full", "":
		route := z.net.routes[[2]int{src.id, dst.id}]
		if route == nil {
			return nil, nil, nil
		}
		r.add(route.links)
		return route.gwSrc, route.gwDst, nil
	case "floyd":
		return n.floydRoute(z, src, dst, r, depth)
	case "dijkstra", "dijkstracache":
		return n.dijkstraRoute(z, src, dst, r, depth)
	case "cluster", "vivaldi":
		return n.starRoute(z, src, dst, r)
	case "none":
		return nil, nil, fmt.Errorf("zone %q is routed None: SimGrid routes nothing in it (\"There can't be route in an Empty zone\")", z.id)
	default:
		return nil, nil, fmt.Errorf("zone %q: routing %q is not modelled", z.id, z.routing)
	}
}

// starRoute is SimGrid's flat cluster (and Vivaldi) route: the source's
// links up, the backbone once, the destination's links down; a zone
// stands for itself through its router. Vivaldi adds the distance between
// the coordinates (in ms).
func (n *network) starRoute(z *zoneNode, src, dst *netPoint, r *pathAcc) (gwSrc, gwDst *netPoint, err error) {
	if src.kind == pointZone {
		// a child zone of a star zone: not in Batsim's platforms
		return nil, nil, fmt.Errorf("zone %q routed %s holds zones", z.id, z.routing)
	}
	if src == dst && z.net.loopback != nil {
		r.add([]linkUse{{link: z.net.loopback}})
		return nil, nil, nil
	}
	r.add(z.net.up[src.id])
	if z.net.backbone != nil {
		r.add([]linkUse{{link: z.net.backbone}})
	}
	r.add(z.net.down[dst.id])
	if z.net.routing == "vivaldi" {
		if src.coords == nil || dst.coords == nil {
			return nil, nil, fmt.Errorf("zone %q is routed Vivaldi: %q and %q need coordinates", z.id, src.name, dst.name)
		}
		dx, dy := src.coords[0]-dst.coords[0], src.coords[1]-dst.coords[1]
		r.latency += (math.Sqrt(dx*dx+dy*dy) + math.Abs(src.coords[2]) + math.Abs(dst.coords[2])) / 1000
	}
	return nil, nil, nil
}

// floydRoute is SimGrid's Floyd zone: the path of fewest links over the
// declared routes (ties kept as its Floyd–Warshall loop keeps them),
// following each route of the path in turn.
func (n *network) floydRoute(z *zoneNode, src, dst *netPoint, r *pathAcc, depth int) (gwSrc, gwDst *netPoint, err error) {
	zn := z.net
	var stack []*netRoute
	for cur := dst.id; ; {
		p := zn.pred[src.id][cur]
		if p < 0 {
			return nil, nil, fmt.Errorf("zone %q (Floyd): no route from %q to %q", z.id, src.name, dst.name)
		}
		stack = append(stack, zn.routes[[2]int{p, cur}])
		cur = p
		if cur == src.id || len(stack) > len(zn.points) {
			break
		}
	}
	return n.followRoutes(stack, r, depth)
}

// floydTables computes a Floyd zone's paths, once the platform is read (the
// network is then only read, by any number of engines at once).
func floydTables(z *zoneNode) {
	zn := z.net
	size := len(zn.points)
	cost := make([][]int, size)
	zn.pred = make([][]int, size)
	const inf = math.MaxInt
	for a := range size {
		cost[a] = make([]int, size)
		zn.pred[a] = make([]int, size)
		for b := range size {
			cost[a][b], zn.pred[a][b] = inf, -1
			if route := zn.routes[[2]int{a, b}]; route != nil {
				cost[a][b], zn.pred[a][b] = len(route.links), a
			}
		}
	}
	for c := range size {
		for a := range size {
			for b := range size {
				if cost[a][c] < inf && cost[c][b] < inf && (cost[a][b] == inf || cost[a][c]+cost[c][b] < cost[a][b]) {
					cost[a][b] = cost[a][c] + cost[c][b]
					zn.pred[a][b] = zn.pred[c][b]
				}
			}
		}
	}
}

// dijkstraEdges lists each point's routes out, once the platform is read.
func dijkstraEdges(z *zoneNode) {
	zn := z.net
	zn.out = map[int][]*netRoute{}
	keys := slices.SortedFunc(maps.Keys(zn.routes), func(a, b [2]int) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	for _, k := range keys {
		zn.out[k[0]] = append(zn.out[k[0]], zn.routes[k])
	}
}

// dijkstraRoute is SimGrid's Dijkstra zone: the path of fewest links, the
// points taken by (cost, index) as its priority queue takes them.
func (n *network) dijkstraRoute(z *zoneNode, src, dst *netPoint, r *pathAcc, depth int) (gwSrc, gwDst *netPoint, err error) {
	zn := z.net
	size := len(zn.points)
	const inf = math.MaxInt
	cost := make([]int, size)
	pred := make([]int, size)
	for i := range cost {
		cost[i], pred[i] = inf, -1
	}
	cost[src.id] = 0
	q := &costQueue{{0, src.id}}
	for q.Len() > 0 {
		top := heap.Pop(q).(costEntry)
		v := top.point
		if top.cost > cost[v] {
			continue // stale
		}
		for _, route := range zn.out[v] {
			u := route.dst
			if c := cost[v] + len(route.links); c < cost[u] {
				cost[u], pred[u] = c, v
				heap.Push(q, costEntry{c, u})
			}
		}
	}
	var stack []*netRoute
	for cur := dst.id; cur != src.id; cur = pred[cur] {
		if pred[cur] < 0 {
			return nil, nil, fmt.Errorf("zone %q (Dijkstra): no route from %q to %q", z.id, src.name, dst.name)
		}
		stack = append(stack, zn.routes[[2]int{pred[cur], cur}])
	}
	return n.followRoutes(stack, r, depth)
}

// costEntry is a point of a Dijkstra zone at a cost; costQueue orders
// them by cost, then index.
type costEntry struct{ cost, point int }

type costQueue []costEntry

func (q costQueue) Len() int { return len(q) }
func (q costQueue) Less(i, j int) bool {
	return q[i].cost < q[j].cost || q[i].cost == q[j].cost && q[i].point < q[j].point
}
func (q costQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *costQueue) Push(x any)   { *q = append(*q, x.(costEntry)) }
func (q *costQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// followRoutes adds the routes of a path given from its end back to its
// start; between zones, the route from one route's destination gateway to
// the next one's source gateway is added in between, as SimGrid does.
func (n *network) followRoutes(stack []*netRoute, r *pathAcc, depth int) (gwSrc, gwDst *netPoint, err error) {
	if len(stack) == 0 {
		return nil, nil, nil
	}
	gwSrc, gwDst = stack[len(stack)-1].gwSrc, stack[0].gwDst
	var prevDst *netPoint
	for i := len(stack) - 1; i >= 0; i-- {
		route := stack[i]
		if prevDst != nil && route.gwSrc != nil && prevDst.name != route.gwSrc.name {
			if err := n.route(prevDst, route.gwSrc, r, depth+1); err != nil {
				return nil, nil, err
			}
		}
		r.add(route.links)
		prevDst = route.gwDst
	}
	return gwSrc, gwDst, nil
}

// hostRoute is a route between two resources as a parallel task crosses
// it: its latency and its links.
type hostRoute struct {
	latency float64
	uses    []linkUse
}

// route returns the route from resource i to resource j (from a host to
// itself: its loopback), or an empty one where the platform routes nothing.
func (p *Platform) route(i, j int) hostRoute {
	if p.net == nil || i >= len(p.points) || j >= len(p.points) || p.points[i] == nil || p.points[j] == nil {
		return hostRoute{}
	}
	acc := pathAcc{collect: true}
	if err := p.net.route(p.points[i], p.points[j], &acc, 0); err != nil {
		return hostRoute{}
	}
	return hostRoute{latency: acc.latency, uses: acc.uses}
}

// hostRoute is the route between two resources, computed once.
func (e *Engine) hostRoute(i, j int) hostRoute {
	key := [2]int{i, j}
	if rt, ok := e.routes[key]; ok {
		return rt
	}
	if e.routes == nil {
		e.routes = map[[2]int]hostRoute{}
	}
	rt := e.platform.route(i, j)
	e.routes[key] = rt
	return rt
}
