package engine

import (
	"cmp"
	"container/heap"
	"encoding/xml"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/batkube/batkube/pkg/decimal"
)

// The network, as far as Batsim's own messages cross it.
//
// Batsim runs a job's actor on the first host of its allocation and its
// server on the master host; when the job ends, the actor sends the server
// a message of one byte (send_message in Batsim's ipp.cpp), and the
// decision process hears of the end only when the server has it. With
// SimGrid's ptask_L07 model, the one Batsim sets, a message alone on its
// route takes the route's latency (the sum of its links') plus its size
// over the narrowest bandwidth, with no latency or bandwidth factor. So on
// a platform whose routes have latency every job end reaches the decision
// process that much later (1.6 ms on Batsim's cluster512.xml), although
// the job ends, and its hosts are free, at its own date. The engine
// computes each host's route to the master host as SimGrid does
// (routeTo) and delays JOB_COMPLETED by that message's time.
//
// What is read: <link> (bandwidth, latency), <backbone>, <router>,
// <host_link>, <route>, <zoneRoute> (and the older <ASroute>) with their
// <link_ctn>s, the links, limiters and backbones of <cluster> and
// <cabinet>, and host and router coordinates in Vivaldi zones. Zones
// routed Full, Floyd, Dijkstra(Cache), Cluster, Vivaldi and None route as
// in SimGrid 3.32 (Floyd and Dijkstra by the number of links, ties broken
// as SimGrid breaks them). What is not: bypass routes, <peer>s, the torus,
// fat-tree and dragonfly topologies of <cluster> (routed as a flat
// cluster) and contention (two messages at once on a link each take their
// whole bandwidth: a nanosecond's difference at most, for one byte); each
// is said in Platform.NetworkNotes.

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

// linkPolicy is a link's sharing_policy: SHARED (one bandwidth for both
// directions), SPLITDUPLEX (one each way) or FATPIPE (every flow gets the
// whole bandwidth).
type linkPolicy uint8

const (
	linkShared linkPolicy = iota
	linkSplitDuplex
	linkFatpipe
)

func parseLinkPolicy(s string) linkPolicy {
	switch strings.ToUpper(s) {
	case "SPLITDUPLEX", "FULLDUPLEX":
		return linkSplitDuplex
	case "FATPIPE":
		return linkFatpipe
	}
	return linkShared
}

// netLink is a link: its latency in seconds and bandwidth in bytes/s.
type netLink struct {
	name    string
	latency float64
	bw      float64
	policy  linkPolicy
	id      int // index in network.all
}

// linkUse is a link as a route crosses it: down is the DOWN way of a
// split-duplex link.
type linkUse struct {
	link *netLink
	down bool
}

// constraint is the key of the bandwidth that a use of a link shares with
// others: the link's, or one way's of a split-duplex link.
func (u linkUse) constraint() int {
	if u.down && u.link.policy == linkSplitDuplex {
		return 2*u.link.id + 1
	}
	return 2 * u.link.id
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

// routeDecl is a <route> or <zoneRoute> as written, resolved once the whole
// platform is read.
type routeDecl struct {
	zone                     *zoneNode
	src, dst, gwSrc, gwDst   string
	links                    []linkRef
	symmetrical, isZoneRoute bool
}

type linkRef struct {
	id   string
	down bool // direction="DOWN" of a split-duplex link
}

// network gathers the platform's routing while it is parsed.
type network struct {
	links map[string]*netLink
	all   []*netLink // every link, by id
	// loopback is the route of a point to itself in Full, Floyd and
	// Dijkstra zones that declare none: SimGrid's network/loopback-bw
	// (10 GBps) and network/loopback-lat (0) defaults, a fat pipe.
	loopback *netLink
	zoneList []*zoneNode
	points   map[string]*netPoint // hosts and routers, by name
	zones    map[string]*zoneNode
	decls    []routeDecl
	// hostLinks are <host_link>s: host name -> up and down link ids.
	hostLinks []hostLinkDecl
	notes     []string
	noted     map[string]bool
}

type hostLinkDecl struct {
	zone           *zoneNode
	host, up, down string
}

func newNetwork() *network {
	n := &network{links: map[string]*netLink{}, points: map[string]*netPoint{}, zones: map[string]*zoneNode{}, noted: map[string]bool{}}
	n.loopback = n.newLink("__loopback__", 0, 10e9, linkFatpipe)
	return n
}

// newLink makes a link (named or not: a cluster's).
func (n *network) newLink(name string, latency, bw float64, policy linkPolicy) *netLink {
	l := &netLink{name: name, latency: latency, bw: bw, policy: policy, id: len(n.all)}
	n.all = append(n.all, l)
	return l
}

// note records something of the network the engine does not model.
func (n *network) note(s string) {
	if !n.noted[s] {
		n.noted[s] = true
		n.notes = append(n.notes, s)
	}
}

// addZone makes z a point of its parent.
func (n *network) addZone(z *zoneNode) {
	z.net = &zoneNet{routing: strings.ToLower(z.routing), routes: map[[2]int]*netRoute{}, up: map[int][]linkUse{}, down: map[int][]linkUse{}}
	n.zoneList = append(n.zoneList, z)
	if z.id != "" {
		n.zones[z.id] = z
	}
	if z.parent != nil {
		z.net.point = n.addPoint(z.parent, z.id, pointZone)
		z.net.point.child = z
	}
}

func (n *network) addPoint(z *zoneNode, name string, kind netPointKind) *netPoint {
	p := &netPoint{name: name, kind: kind, zone: z, id: len(z.net.points)}
	z.net.points = append(z.net.points, p)
	if kind != pointZone {
		n.points[name] = p
	}
	return p
}

// addLink declares a link (a split-duplex one has a bandwidth each way:
// see linkUse).
func (n *network) addLink(id, bandwidth, latency, policy string) (*netLink, error) {
	if id == "" {
		return nil, errors.New("a <link> has no id")
	}
	if _, dup := n.links[id]; dup {
		return nil, fmt.Errorf("link %q is declared twice", id)
	}
	bw, err := parseBandwidth(bandwidth)
	if err != nil {
		return nil, fmt.Errorf("link %q: %w", id, err)
	}
	lat, err := parseLatency(latency)
	if err != nil {
		return nil, fmt.Errorf("link %q: %w", id, err)
	}
	l := n.newLink(id, lat, bw, parseLinkPolicy(policy))
	n.links[id] = l
	return l, nil
}

// addRouter declares a router.
func (n *network) addRouter(z *zoneNode, name, coords string) (*netPoint, error) {
	if z == nil {
		return nil, fmt.Errorf("router %q is outside of any zone", name)
	}
	p := n.addPoint(z, name, pointRouter)
	return p, n.setCoords(p, coords)
}

func (n *network) setCoords(p *netPoint, coords string) error {
	if coords == "" {
		return nil
	}
	fields := strings.Fields(coords)
	if len(fields) != 3 {
		return fmt.Errorf("coordinates of %q: %q: want 3 numbers", p.name, coords)
	}
	for _, f := range fields {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return fmt.Errorf("coordinates of %q: %w", p.name, err)
		}
		p.coords = append(p.coords, v)
	}
	return nil
}

// addClusterHost gives a host of a <cluster> or <cabinet> its private link
// (and limiter), as SimGrid's flat cluster does: up through the limiter,
// the link and the backbone; down the other way.
func (n *network) addClusterHost(z *zoneNode, name string, link, limiter *netLink) {
	p := n.points[name]
	if p == nil {
		return
	}
	var up []linkUse
	if limiter != nil {
		up = append(up, linkUse{link: limiter})
	}
	if link != nil {
		up = append(up, linkUse{link: link})
	}
	z.net.up[p.id] = up
	z.net.down[p.id] = reversed(up)
}

// isStar says whether a zone routes as a star (SimGrid's Cluster and
// Vivaldi zones): through each point's private links and a backbone.
func isStar(z *zoneNode) bool {
	return z.net.routing == "cluster" || z.net.routing == "vivaldi"
}

// resolve checks and builds every declared route once all is read.
func (n *network) resolve() error {
	for _, h := range n.hostLinks {
		p := n.points[h.host]
		if p == nil || p.zone != h.zone {
			return fmt.Errorf("<host_link> %q: no such host in zone %q", h.host, h.zone.id)
		}
		up, down := n.links[h.up], n.links[h.down]
		if up == nil || down == nil {
			return fmt.Errorf("<host_link> %q: no link %q or %q", h.host, h.up, h.down)
		}
		h.zone.net.up[p.id] = []linkUse{{link: up}}
		h.zone.net.down[p.id] = []linkUse{{link: down, down: true}}
	}
	for _, d := range n.decls {
		if err := n.addRoute(d); err != nil {
			return err
		}
	}
	for _, z := range n.zoneList {
		switch z.net.routing {
		case "floyd":
			floydTables(z)
		case "dijkstra", "dijkstracache":
			dijkstraEdges(z)
		}
	}
	return nil
}

func (n *network) addRoute(d routeDecl) error {
	what := "route"
	if d.isZoneRoute {
		what = "zoneRoute"
	}
	where := fmt.Sprintf("<%s src=%q dst=%q> in zone %q", what, d.src, d.dst, d.zone.id)
	src, dst := n.pointIn(d.zone, d.src, d.isZoneRoute), n.pointIn(d.zone, d.dst, d.isZoneRoute)
	if src == nil || dst == nil {
		return fmt.Errorf("%s: its ends are not points of the zone", where)
	}
	var gwSrc, gwDst *netPoint
	if d.isZoneRoute {
		gwSrc, gwDst = n.points[d.gwSrc], n.points[d.gwDst]
		if gwSrc == nil || gwDst == nil {
			return fmt.Errorf("%s: gateway %q or %q is no host or router", where, d.gwSrc, d.gwDst)
		}
	}
	links := make([]linkUse, 0, len(d.links))
	for _, ref := range d.links {
		l := n.links[ref.id]
		if l == nil {
			return fmt.Errorf("%s: no link %q", where, ref.id)
		}
		links = append(links, linkUse{link: l, down: ref.down})
	}
	if isStar(d.zone) {
		// A star zone's routes are to or from its centre.
		n.note(fmt.Sprintf("the <route>s of zone %q (routed %s) are not read", d.zone.id, d.zone.routing))
		return nil
	}
	key := [2]int{src.id, dst.id}
	if _, dup := d.zone.net.routes[key]; dup {
		return fmt.Errorf("%s: the route is declared twice (routes are symmetrical by default)", where)
	}
	d.zone.net.routes[key] = &netRoute{links: links, gwSrc: gwSrc, gwDst: gwDst, dst: dst.id}
	if d.symmetrical && src != dst {
		back := [2]int{dst.id, src.id}
		if _, dup := d.zone.net.routes[back]; dup {
			return fmt.Errorf("%s: the route back is declared too: say symmetrical=\"NO\"", where)
		}
		d.zone.net.routes[back] = &netRoute{links: reversed(links), gwSrc: gwDst, gwDst: gwSrc, dst: src.id}
	}
	return nil
}

// pointIn finds a point of zone z by name: a host or router in it or, for
// a zone route, a child zone.
func (n *network) pointIn(z *zoneNode, name string, zone bool) *netPoint {
	if zone {
		if c := n.zones[name]; c != nil && c.parent == z {
			return c.net.point
		}
	}
	if p := n.points[name]; p != nil && p.zone == z {
		return p
	}
	return nil
}

// MessageTime is the time a message of one byte takes on a route when it is
// alone there (SimGrid's ptask_L07 model, with no latency or bandwidth
// factor): the route's latency, then the byte at its narrowest bandwidth.
type MessageTime struct {
	// Latency is the sum of the route's links' latencies, in seconds.
	Latency float64
	// Bandwidth is the narrowest link's, in bytes per second; 0 for a
	// route of no link.
	Bandwidth float64
}

// takesTime reports whether the message takes any time.
func (m MessageTime) takesTime() bool { return m != MessageTime{} }

// Seconds is the message's time: latency plus a byte at the bandwidth.
func (m MessageTime) Seconds() float64 {
	if m.Bandwidth == 0 {
		return m.Latency
	}
	return m.Latency + 1/m.Bandwidth
}

// messageTime is the time one byte takes from host src to host dst.
func (n *network) messageTime(src, dst string) (MessageTime, error) {
	s, d := n.points[src], n.points[dst]
	if s == nil || d == nil {
		return MessageTime{}, fmt.Errorf("no host %q or %q", src, dst)
	}
	var r pathAcc
	if err := n.route(s, d, &r, 0); err != nil {
		return MessageTime{}, fmt.Errorf("route from %q to %q: %w", src, dst, err)
	}
	return MessageTime{Latency: r.latency, Bandwidth: r.minBW}, nil
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

// latencyUnits are SimGrid's time units.
var latencyUnits = map[string]float64{
	"": 1, "ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1,
	"m": 60, "h": 3600, "d": 86400, "w": 604800,
}

// bandwidthUnits are SimGrid's bandwidth units: bytes (Bps) or bits (bps)
// per second, with decimal (k, M, G...) or binary (Ki, Mi, Gi...)
// prefixes.
var bandwidthUnits = func() map[string]float64 {
	units := map[string]float64{"": 1}
	decimal := []string{"k", "M", "G", "T", "P", "E", "Z", "Y"}
	binary := []string{"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"}
	for _, base := range []struct {
		unit  string
		scale float64
	}{{"Bps", 1}, {"bps", 0.125}} {
		units[base.unit] = base.scale
		d, b := base.scale, base.scale
		for i := range decimal {
			d *= 1000
			b *= 1024
			units[decimal[i]+base.unit] = d
			units[binary[i]+base.unit] = b
		}
		units["K"+base.unit] = units["k"+base.unit]
	}
	return units
}()

// parseLatency reads a SimGrid latency ("10us", "1.5E-9s", "0"); none is 0.
func parseLatency(s string) (float64, error) {
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	return parseQuantity("latency", s, latencyUnits)
}

// parseBandwidth reads a SimGrid bandwidth ("1GBps", "10Gbps", "1.25E8").
func parseBandwidth(s string) (float64, error) {
	v, err := parseQuantity("bandwidth", s, bandwidthUnits)
	if err == nil && v <= 0 {
		err = fmt.Errorf("bandwidth %q: want a positive number", s)
	}
	return v, err
}

func parseQuantity(what, s string, units map[string]float64) (float64, error) {
	num := strings.TrimSpace(s)
	n := decimal.Prefix(num)
	if n == 0 {
		return 0, fmt.Errorf("%s %q: not a number", what, s)
	}
	v, err := strconv.ParseFloat(num[:n], 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", what, s, err)
	}
	scale, ok := units[num[n:]]
	if !ok {
		return 0, fmt.Errorf("%s %q: unknown unit %q", what, s, num[n:])
	}
	v *= scale
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%s %q: want a finite, non-negative number", what, s)
	}
	return v, nil
}

// addClusterLinks gives the hosts of a <cluster> or <cabinet> their private
// links (bw, lat; a limiter of limiter_link) and, for a <cluster>, its
// backbone (bb_bw, bb_lat) and its router (router_id, or prefix, id,
// "_router", suffix), as SimGrid builds a flat cluster.
func (n *network) addClusterLinks(e xml.StartElement, z *zoneNode, hosts []*hostNode) error {
	id := attr(e, "id")
	what := fmt.Sprintf("<%s> %q", e.Name.Local, id)
	lat, err := parseLatency(attr(e, "lat"))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	// A cabinet's links are split-duplex; a cluster's as it says, and
	// split-duplex by default (SimGrid's DTD).
	policy := linkSplitDuplex
	if s := attr(e, "sharing_policy"); s != "" && e.Name.Local == "cluster" {
		policy = parseLinkPolicy(s)
	}
	var bw, limiter float64
	if s := attr(e, "bw"); s != "" {
		if bw, err = parseBandwidth(s); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if s := attr(e, "limiter_link"); s != "" && e.Name.Local == "cluster" {
		if limiter, err = parseBandwidth(s); err != nil {
			return fmt.Errorf("%s: limiter_link: %w", what, err)
		}
	}
	for _, h := range hosts {
		var link, lim *netLink
		if bw > 0 {
			link = n.newLink(id+"_link_"+h.name, lat, bw, policy)
		}
		if limiter > 0 {
			lim = n.newLink(id+"_limiter_"+h.name, 0, limiter, linkShared)
		}
		n.addClusterHost(z, h.name, link, lim)
	}
	if e.Name.Local != "cluster" {
		return nil
	}
	if topo := attr(e, "topology"); topo != "" && !strings.EqualFold(topo, "FLAT") {
		n.note(fmt.Sprintf("%s: its %s topology is routed as a flat cluster", what, topo))
	}
	var bbBW, bbLat float64
	if s := attr(e, "bb_bw"); s != "" {
		if bbBW, err = parseBandwidth(s); err != nil {
			return fmt.Errorf("%s: bb_bw: %w", what, err)
		}
	}
	if bbLat, err = parseLatency(attr(e, "bb_lat")); err != nil {
		return fmt.Errorf("%s: bb_lat: %w", what, err)
	}
	if s := attr(e, "loopback_bw"); s != "" {
		bw, err := parseBandwidth(s)
		if err != nil {
			return fmt.Errorf("%s: loopback_bw: %w", what, err)
		}
		lat, err := parseLatency(attr(e, "loopback_lat"))
		if err != nil {
			return fmt.Errorf("%s: loopback_lat: %w", what, err)
		}
		z.net.loopback = n.newLink(id+"_loopback", lat, bw, linkFatpipe)
	}
	if bbBW > 0 || bbLat > 0 {
		z.net.backbone = n.newLink(id+"_backbone", bbLat, bbBW, parseLinkPolicy(attr(e, "bb_sharing_policy")))
	}
	router := attr(e, "router_id")
	if router == "" {
		router = attr(e, "prefix") + id + "_router" + attr(e, "suffix")
	}
	_, err = n.addRouter(z, router, "")
	return err
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
