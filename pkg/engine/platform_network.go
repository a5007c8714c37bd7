package engine

import (
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The network of a SimGrid platform, as the engine reads it: the links,
// routers and routes that parsePlatform (platform.go) finds in the XML,
// checked and resolved into each zone's routing (routing.go) once the
// whole platform is read.
//
// What is read: <link> and <backbone> (bandwidth, latency and
// sharing_policy: SHARED, SPLITDUPLEX or FATPIPE), <router>,
// <host_link>, <route>, <zoneRoute> (and the older <ASroute>) with their
// <link_ctn>s (direction="DOWN" takes a SPLITDUPLEX link's other way),
// the private links, limiters, backbones and loopbacks of <cluster>, the
// private links of <cabinet>, and host and router coordinates in Vivaldi
// zones; bandwidths and latencies are in SimGrid's units (units.go). What
// is not: bypass routes, <peer>s, the <route>s of a zone routed Cluster or
// Vivaldi, and the torus, fat-tree and dragonfly topologies of <cluster>
// (routed as a flat cluster); each is said in Platform.NetworkNotes. A
// WIFI link is taken as SHARED (without a note).

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
