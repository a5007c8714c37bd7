package engine

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// DefaultMasterHost is the name of the host Batsim takes as its master when
// no host has the property role=master (Batsim's --master-host default).
const DefaultMasterHost = "master_host"

// PlatformOptions are the Batsim options that shape what it sees of a
// platform.
type PlatformOptions struct {
	// MasterHost is the name of the host Batsim makes its master (its -m,
	// --master-host; DefaultMasterHost if empty). Batsim gives that host
	// the role master, if it exists: it is then no resource. The platform
	// may name no such host if one has the property role=master instead;
	// it needs one master, and only one.
	MasterHost string
}

func (o PlatformOptions) master() string {
	if o.MasterHost == "" {
		return DefaultMasterHost
	}
	return o.MasterHost
}

// maxHosts bounds the hosts a platform may declare (clusters expand ranges).
const maxHosts = 1 << 20

// Platform is what Batsim sees of a SimGrid platform: its compute resources,
// its storage resources and its master host.
type Platform struct {
	// Resources are the compute resources; Resources[i].ID == i.
	Resources []Resource
	// Storage are the hosts with role=storage; their ids follow the compute
	// resources' (Storage[i].ID == len(Resources)+i).
	Storage []Resource
	// Master is the name of the master host, which computes nothing.
	Master string
	// MasterMessage is the time a message takes from the master host to
	// itself, between two of Batsim's actors there (1e-10 s through
	// SimGrid's default loopback, one byte at 10 GBps). See server.go.
	MasterMessage MessageTime
	// NetworkNotes say what of the platform's network the engine leaves
	// out, if anything: what it does not read (see platform_network.go),
	// and the hosts with no route to the master host (the master host
	// itself included), which real Batsim aborts on.
	NetworkNotes []string

	// net routes between the resources (nil for a platform built in Go:
	// no route then has links); points are the resources' netpoints.
	net    *network
	points []*netPoint
}

// Resource is one host of the platform as Batsim describes it in
// SIMULATION_BEGINS, plus the computing power the engine simulates.
type Resource struct {
	ID   int
	Name string
	// Speed is the speed of one core in flops per second, in the host's
	// initial power state (its pstate attribute, 0 by default).
	Speed float64
	// Cores is the host's core attribute (1 by default).
	Cores int
	// Properties are the host's <prop>s as strings; "role" is always present
	// (empty for compute resources), as Batsim adds it.
	Properties map[string]string
	// ZoneProperties are the properties of the zones around the host, merged
	// from the outermost zone inwards (inner zones win).
	ZoneProperties map[string]string
	// Notice is the time a message of one byte takes from the host to the
	// master host: how much later than its end Batsim's server hears of
	// the end of a job whose first host this is (none where the route has
	// no link). See message_time.go.
	Notice MessageTime
}

// ReadPlatformFile reads a SimGrid platform file, with Batsim's default
// options.
func ReadPlatformFile(path string) (*Platform, error) {
	return ReadPlatformFileWith(path, PlatformOptions{})
}

// ReadPlatformFileWith reads a SimGrid platform file as Batsim does with
// the options given.
func ReadPlatformFileWith(path string, opts PlatformOptions) (*Platform, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("engine: platform: %w", err)
	}
	defer f.Close()
	p, err := ParsePlatformWith(f, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return p, nil
}

// zoneNode is a zone (or a cluster, which is a zone) of the platform.
type zoneNode struct {
	id      string
	routing string
	parent  *zoneNode
	props   map[string]string
	// SimGrid's DTD lets a zone hold hosts or zones (clusters are zones),
	// not both.
	hasHosts, hasZones bool
	net                *zoneNet
}

// holds records that z holds a host (or a zone) and refuses a mix, as
// SimGrid does ("Starting tag <zone> is not allowed here").
func (z *zoneNode) holds(host bool, what string) error {
	if z == nil {
		return nil
	}
	if host {
		z.hasHosts = true
	} else {
		z.hasZones = true
	}
	if z.hasHosts && z.hasZones {
		return fmt.Errorf("zone %q holds both hosts and zones (at %s), which SimGrid refuses: put its hosts in a zone of their own", z.id, what)
	}
	return nil
}

// hostNode is a host being parsed.
type hostNode struct {
	point *netPoint
	name  string
	speed float64
	cores int
	zone  *zoneNode
	props map[string]string
}

type frameKind int

const (
	frameOther frameKind = iota
	framePlatform
	frameZone
	frameHost
	frameRoute
)

type frame struct {
	kind frameKind
	zone *zoneNode // frameZone: the zone; others: the enclosing zone
	host *hostNode // frameHost
	// cluster are the hosts of a <cluster> (a frameZone): SimGrid gives
	// the cluster's <prop>s to its zone and to each of its hosts.
	cluster []*hostNode
	route   *routeDecl // frameRoute
}

// ParsePlatform reads a SimGrid platform (XML, version 4.1 as Batsim uses
// it) with Batsim's default options: zones (and the older AS) with their
// properties, hosts, clusters and cabinets. As in SimGrid, a <cluster> is a
// zone of its own whose <prop>s are both the zone's properties and each of
// its hosts' properties; a <cabinet> adds hosts named prefix, number and
// suffix (one per number of its radical), of one core at its speed, to its
// zone (which must be routed as a cluster). Links and routes give each
// host's Notice (see message_time.go).
func ParsePlatform(r io.Reader) (*Platform, error) {
	return ParsePlatformWith(r, PlatformOptions{})
}

// ParsePlatformWith is ParsePlatform with Batsim's options.
func ParsePlatformWith(r io.Reader, opts PlatformOptions) (*Platform, error) {
	p, err := parsePlatform(r, opts)
	if err != nil {
		return nil, fmt.Errorf("engine: platform: %w", err)
	}
	return p, nil
}

func parsePlatform(r io.Reader, opts PlatformOptions) (*Platform, error) {
	d := xml.NewDecoder(r)
	var (
		stack []frame
		hosts []*hostNode
		names = map[string]bool{}
		root  bool
		net   = newNetwork()
	)
	addHost := func(h *hostNode) error {
		if names[h.name] {
			return fmt.Errorf("host %q is declared twice", h.name)
		}
		if len(hosts) >= maxHosts {
			return fmt.Errorf("more than %d hosts", maxHosts)
		}
		names[h.name] = true
		hosts = append(hosts, h)
		h.point = net.addPoint(h.zone, h.name, pointHost)
		return nil
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			var top frame
			if len(stack) > 0 {
				top = stack[len(stack)-1]
			}
			if len(stack) == 0 {
				if t.Name.Local != "platform" || root {
					return nil, fmt.Errorf("the root element is <%s>, want <platform>", t.Name.Local)
				}
				root = true
				stack = append(stack, frame{kind: framePlatform})
				continue
			}
			f := frame{kind: frameOther, zone: top.zone}
			switch t.Name.Local {
			case "zone", "AS":
				id := attr(t, "id")
				if err := top.zone.holds(false, "zone "+strconv.Quote(id)); err != nil {
					return nil, err
				}
				f = frame{kind: frameZone, zone: &zoneNode{id: id, routing: attr(t, "routing"), parent: top.zone, props: map[string]string{}}}
				net.addZone(f.zone)
			case "host":
				h, err := parseHost(t, top.zone)
				if err != nil {
					return nil, err
				}
				if err := top.zone.holds(true, "host "+strconv.Quote(h.name)); err != nil {
					return nil, err
				}
				if err := addHost(h); err != nil {
					return nil, err
				}
				if err := net.setCoords(h.point, attr(t, "coordinates")); err != nil {
					return nil, err
				}
				f = frame{kind: frameHost, zone: top.zone, host: h}
			case "cluster", "cabinet":
				zone := top.zone
				id := attr(t, "id")
				if t.Name.Local == "cluster" {
					// A cluster is a zone of its own; its <prop>s are the zone's.
					if err := top.zone.holds(false, "cluster "+strconv.Quote(id)); err != nil {
						return nil, err
					}
					zone = &zoneNode{id: id, routing: "Cluster", parent: top.zone, props: map[string]string{}}
					net.addZone(zone)
					f = frame{kind: frameZone, zone: zone}
				} else {
					// SimGrid creates a cabinet's hosts when it seals a
					// zone routed as a cluster, and only then.
					if zone != nil && !strings.EqualFold(zone.routing, "Cluster") {
						return nil, fmt.Errorf("<cabinet> %q is in zone %q, routed %q: SimGrid only builds the cabinets of zones routed as a Cluster", id, zone.id, zone.routing)
					}
					if err := zone.holds(true, "cabinet "+strconv.Quote(id)); err != nil {
						return nil, err
					}
				}
				expanded, err := expandCluster(t, zone, len(hosts))
				if err != nil {
					return nil, err
				}
				for _, h := range expanded {
					if err := addHost(h); err != nil {
						return nil, err
					}
				}
				if err := net.addClusterLinks(t, zone, expanded); err != nil {
					return nil, err
				}
				if t.Name.Local == "cluster" {
					f.cluster = expanded
				}
			case "link", "backbone":
				l, err := net.addLink(attr(t, "id"), attr(t, "bandwidth"), attr(t, "latency"), attr(t, "sharing_policy"))
				if err != nil {
					return nil, err
				}
				if t.Name.Local == "backbone" && top.zone != nil {
					top.zone.net.backbone = l
				}
			case "router":
				if _, err := net.addRouter(top.zone, attr(t, "id"), attr(t, "coordinates")); err != nil {
					return nil, err
				}
			case "host_link":
				if top.zone == nil {
					return nil, errors.New("a <host_link> is outside of any zone")
				}
				net.hostLinks = append(net.hostLinks, hostLinkDecl{zone: top.zone, host: attr(t, "id"), up: attr(t, "up"), down: attr(t, "down")})
			case "route", "zoneRoute", "ASroute":
				if top.zone == nil {
					return nil, fmt.Errorf("a <%s> is outside of any zone", t.Name.Local)
				}
				f = frame{kind: frameRoute, zone: top.zone, route: &routeDecl{
					zone: top.zone, src: attr(t, "src"), dst: attr(t, "dst"),
					gwSrc: attr(t, "gw_src"), gwDst: attr(t, "gw_dst"),
					symmetrical: !strings.EqualFold(attr(t, "symmetrical"), "NO"),
					isZoneRoute: t.Name.Local != "route",
				}}
			case "bypassRoute", "bypassZoneRoute", "bypassASroute":
				net.note("bypass routes are not read")
			case "peer":
				net.note("<peer>s are not read")
			case "link_ctn":
				if top.kind == frameRoute {
					top.route.links = append(top.route.links, linkRef{id: attr(t, "id"), down: strings.EqualFold(attr(t, "direction"), "DOWN")})
				}
			case "prop":
				id, value := attr(t, "id"), attr(t, "value")
				if id == "" {
					return nil, errors.New("a <prop> has no id")
				}
				switch top.kind {
				case frameZone:
					top.zone.props[id] = value
					for _, h := range top.cluster {
						h.props[id] = value
					}
				case frameHost:
					top.host.props[id] = value
				}
			}
			stack = append(stack, f)
		case xml.EndElement:
			if len(stack) > 0 {
				if top := stack[len(stack)-1]; top.kind == frameRoute {
					net.decls = append(net.decls, *top.route)
				}
				stack = stack[:len(stack)-1]
			}
		}
	}
	if !root {
		return nil, errors.New("no <platform> element")
	}
	p, err := buildPlatform(hosts, opts.master())
	if err != nil {
		return nil, err
	}
	if err := net.resolve(); err != nil {
		return nil, fmt.Errorf("network: %w", err)
	}
	unrouted, first := 0, ""
	for i := range p.Resources {
		r := &p.Resources[i]
		if r.Notice, err = net.messageTime(r.Name, p.Master); err != nil {
			if unrouted == 0 {
				first = err.Error()
			}
			unrouted++
		}
	}
	if unrouted > 0 {
		// Real Batsim aborts when a job ends on such a host; the engine
		// hears of the end at once.
		net.note(fmt.Sprintf("%d host(s) have no route to the master host, which real Batsim aborts on when a job ends there (%s): their job ends are heard of at once", unrouted, first))
	}
	if self, err := net.messageTime(p.Master, p.Master); err != nil {
		net.note(fmt.Sprintf("the master host %q has no route to itself, which real Batsim aborts on at its first message (%v)", p.Master, err))
	} else {
		p.MasterMessage = self
	}
	p.NetworkNotes = net.notes
	p.net = net
	p.points = make([]*netPoint, len(p.Resources)+len(p.Storage))
	for i, r := range p.Resources {
		p.points[i] = net.points[r.Name]
	}
	for i, r := range p.Storage {
		p.points[len(p.Resources)+i] = net.points[r.Name]
	}
	return p, nil
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func hasAttr(e xml.StartElement, name string) bool {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return true
		}
	}
	return false
}

func parseHost(e xml.StartElement, zone *zoneNode) (*hostNode, error) {
	name := attr(e, "id")
	if name == "" {
		return nil, errors.New("a <host> has no id")
	}
	if zone == nil {
		return nil, fmt.Errorf("host %q is outside of any zone", name)
	}
	speed, err := hostSpeed(e)
	if err != nil {
		return nil, fmt.Errorf("host %q: %w", name, err)
	}
	cores, err := coreCount(e)
	if err != nil {
		return nil, fmt.Errorf("host %q: %w", name, err)
	}
	return &hostNode{name: name, speed: speed, cores: cores, zone: zone, props: map[string]string{}}, nil
}

// hostSpeed is the speed of the host's initial pstate.
func hostSpeed(e xml.StartElement) (float64, error) {
	if !hasAttr(e, "speed") {
		return 0, errors.New("no speed attribute")
	}
	speeds, err := parseSpeeds(attr(e, "speed"))
	if err != nil {
		return 0, err
	}
	pstate := 0
	if s := strings.TrimSpace(attr(e, "pstate")); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || v >= float64(len(speeds)) || math.IsNaN(v) {
			return 0, fmt.Errorf("pstate %q: want an index into the %d speeds", s, len(speeds))
		}
		pstate = int(v)
	}
	return speeds[pstate], nil
}

func coreCount(e xml.StartElement) (int, error) {
	s := strings.TrimSpace(attr(e, "core"))
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("core %q: want a positive integer", s)
	}
	return n, nil
}

// expandCluster returns the hosts prefix+i+suffix of a <cluster> or
// <cabinet>, i ranging over its radical ("0-15", "1-4,6,9-11").
func expandCluster(e xml.StartElement, zone *zoneNode, already int) ([]*hostNode, error) {
	id := attr(e, "id")
	if zone == nil {
		return nil, fmt.Errorf("<%s> %q is outside of any zone", e.Name.Local, id)
	}
	var speed float64
	var err error
	if e.Name.Local == "cabinet" {
		// one speed: SimGrid reads no power states for a cabinet
		if !hasAttr(e, "speed") {
			err = errors.New("no speed attribute")
		} else {
			speed, err = parseSpeed(attr(e, "speed"))
		}
	} else {
		speed, err = hostSpeed(e)
	}
	if err != nil {
		return nil, fmt.Errorf("<%s> %q: %w", e.Name.Local, id, err)
	}
	cores := 1
	if e.Name.Local == "cluster" {
		if cores, err = coreCount(e); err != nil {
			return nil, fmt.Errorf("<%s> %q: %w", e.Name.Local, id, err)
		}
	}
	radicals, err := parseRadical(attr(e, "radical"), maxHosts-already)
	if err != nil {
		return nil, fmt.Errorf("<%s> %q: %w", e.Name.Local, id, err)
	}
	prefix, suffix := attr(e, "prefix"), attr(e, "suffix")
	hosts := make([]*hostNode, 0, len(radicals))
	for _, i := range radicals {
		hosts = append(hosts, &hostNode{
			name:  prefix + strconv.Itoa(i) + suffix,
			speed: speed,
			cores: cores,
			zone:  zone,
			props: map[string]string{},
		})
	}
	return hosts, nil
}

// parseRadical expands "1-4,6,9-11" into 1 2 3 4 6 9 10 11, refusing more
// than limit numbers.
func parseRadical(s string, limit int) ([]int, error) {
	var out []int
	for _, group := range strings.Split(s, ",") {
		ends := strings.Split(group, "-")
		if len(ends) > 2 {
			return nil, fmt.Errorf("radical %q: malformed group %q", s, group)
		}
		start, err := strconv.Atoi(strings.TrimSpace(ends[0]))
		if err != nil {
			return nil, fmt.Errorf("radical %q: %w", s, err)
		}
		end := start
		if len(ends) == 2 {
			if end, err = strconv.Atoi(strings.TrimSpace(ends[1])); err != nil {
				return nil, fmt.Errorf("radical %q: %w", s, err)
			}
		}
		if end >= start && end-start >= limit-len(out) {
			return nil, fmt.Errorf("radical %q: more than %d hosts", s, maxHosts)
		}
		for i := start; i <= end; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

// buildPlatform sorts the hosts into compute, storage and master, as
// Batsim's Machines::create_machines does: the host named master (its
// --master-host) gets the role master, appended to its role property if it
// has one (which no role then matches: Batsim aborts); a role is master,
// compute_node (or empty) or storage. The resources are numbered in the
// order of SimGrid's Engine::get_all_hosts, by name (byte order: capitals
// first, node10 before node2), compute resources first (Batsim's sort of
// them by name has no effect: it sorts a copy).
func buildPlatform(hosts []*hostNode, master string) (*Platform, error) {
	p := &Platform{}
	var compute, storage []*hostNode
	for _, h := range hosts {
		role, hasRole := h.props["role"]
		if !hasRole {
			h.props["role"] = ""
		}
		if h.name == master && hasRole {
			return nil, fmt.Errorf("host %q has the role %q: Batsim would make it %q as its master host (--master-host) and abort; drop the role property (the name makes it the master)",
				h.name, role, role+",master")
		}
		switch {
		case role == "master" || h.name == master:
			if p.Master != "" {
				return nil, fmt.Errorf("two master hosts: %q and %q (Batsim needs one: a host with the property role=master, or the one named by --master-host, %s)", p.Master, h.name, master)
			}
			p.Master = h.name
		case role == "" || role == "compute_node":
			if h.speed <= 0 {
				return nil, fmt.Errorf("host %q is a compute node but its speed is not positive", h.name)
			}
			compute = append(compute, h)
		case role == "storage":
			storage = append(storage, h)
		default:
			return nil, fmt.Errorf("host %q: unknown role %q (want master, compute_node or storage)", h.name, role)
		}
	}
	if p.Master == "" {
		return nil, fmt.Errorf("no master host: Batsim needs a host named %s (its --master-host, -m) or with <prop id=\"role\" value=\"master\"/>", master)
	}
	byName := func(hs []*hostNode) {
		sort.Slice(hs, func(i, j int) bool { return hs[i].name < hs[j].name })
	}
	byName(compute)
	byName(storage)
	for _, h := range compute {
		p.Resources = append(p.Resources, h.resource(len(p.Resources)))
	}
	for _, h := range storage {
		p.Storage = append(p.Storage, h.resource(len(p.Resources)+len(p.Storage)))
	}
	return p, nil
}

func (h *hostNode) resource(id int) Resource {
	return Resource{
		ID:             id,
		Name:           h.name,
		Speed:          h.speed,
		Cores:          h.cores,
		Properties:     h.props,
		ZoneProperties: h.zone.merged(),
	}
}

// merged returns the properties of the zone and its ancestors, inner zones
// winning.
func (z *zoneNode) merged() map[string]string {
	var chain []*zoneNode
	for ; z != nil; z = z.parent {
		chain = append(chain, z)
	}
	out := map[string]string{}
	for i := len(chain) - 1; i >= 0; i-- {
		for k, v := range chain[i].props {
			out[k] = v
		}
	}
	return out
}
