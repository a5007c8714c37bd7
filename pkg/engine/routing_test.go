package engine

import (
	"math"
	"strings"
	"testing"
)

func mustPlatform(t *testing.T, xml string) *Platform {
	t.Helper()
	p, err := ParsePlatform(strings.NewReader(xml))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func noticeDelays(p *Platform) map[string]float64 {
	out := map[string]float64{}
	for _, r := range p.Resources {
		out[r.Name] = r.Notice.Seconds()
	}
	return out
}

func checkDelays(t *testing.T, p *Platform, want map[string]float64) {
	t.Helper()
	got := noticeDelays(p)
	for host, w := range want {
		if g, ok := got[host]; !ok || math.Abs(g-w) > 1e-15 {
			t.Errorf("host %s: end heard of %v s later, want %v s", host, g, w)
		}
	}
}

// A Full zone: the route written, in the direction written (or back, when
// symmetrical); latency summed, one byte at the narrowest bandwidth; no
// route, no time.
func TestNoticeDelayFullRoutes(t *testing.T) {
	p := mustPlatform(t, `<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
  <host id="c" speed="1Gf"/><host id="d" speed="1Gf"/>
  <link id="l1" bandwidth="1GBps" latency="10us"/>
  <link id="l2" bandwidth="100MBps" latency="1ms"/>
  <link id="l3" bandwidth="8Gbps" latency="0"/>
  <link id="lo" bandwidth="1GBps" latency="15us"/>
  <route src="master_host" dst="master_host"><link_ctn id="lo"/></route>
  <route src="a" dst="master_host"><link_ctn id="l1"/><link_ctn id="l2"/></route>
  <route src="master_host" dst="b" symmetrical="NO"><link_ctn id="l1"/></route>
  <route src="master_host" dst="c"><link_ctn id="l3"/></route>
</zone></platform>`)
	checkDelays(t, p, map[string]float64{
		"a": 10e-6 + 1e-3 + 1/100e6,
		"b": 0, // the route is one way: none back
		"c": 1 / 1e9,
		"d": 0,
	})
	if want := 15e-6 + 1/1e9; math.Abs(p.MasterMessage.Seconds()-want) > 1e-15 || len(p.NetworkNotes) != 0 {
		t.Errorf("master's messages to itself: %v s, notes %q; want %v s, no note", p.MasterMessage.Seconds(), p.NetworkNotes, want)
	}
}

// Zones joined by a zone route through gateways (Floyd, Cluster, Full), as
// on the Batsim-like platform that real Batsim 4.2.1 ran (see the replay
// of testdata/batsim-4.2.1/latency): 20 µs from the Floyd site, 120 µs
// from the cluster.
func TestNoticeDelayAcrossZones(t *testing.T) {
	p, err := ReadPlatformFile("../e2e/testdata/batsim_like_platform.xml")
	if err != nil {
		t.Fatal(err)
	}
	site, grid := 20e-6+1/1e9, 120e-6+1/1e9
	checkDelays(t, p, map[string]float64{
		"Tremblay": site, "Jacquelin": site, "Node_A.1": site, "node-a.1": site,
		"Grid_0.lan": grid, "Grid_3.lan": grid,
	})
	if want := (MessageTime{Bandwidth: 10e9}); len(p.NetworkNotes) != 0 || p.MasterMessage != want {
		t.Errorf("notes %q, master's messages %+v: want none, and %+v (the master's route to itself is SimGrid's loopback, 1e-10 s)", p.NetworkNotes, p.MasterMessage, want)
	}
}

// Floyd and Dijkstra take the path of fewest links, not of least latency.
func TestNoticeDelayFewestLinks(t *testing.T) {
	for _, routing := range []string{"Floyd", "Dijkstra"} {
		p := mustPlatform(t, `<platform version="4.1"><zone id="z" routing="`+routing+`">
  <host id="master_host" speed="1Gf"/><host id="x" speed="1Gf"/><host id="y" speed="1Gf"/>
  <router id="r"/>
  <link id="k1" bandwidth="1GBps" latency="1ms"/><link id="k2" bandwidth="2GBps" latency="1ms"/>
  <link id="d1" bandwidth="1GBps" latency="0.1ms"/><link id="d2" bandwidth="1GBps" latency="0.1ms"/>
  <link id="d3" bandwidth="1GBps" latency="0.1ms"/><link id="k3" bandwidth="1GBps" latency="3ms"/>
  <route src="x" dst="r"><link_ctn id="k1"/></route>
  <route src="r" dst="master_host"><link_ctn id="k2"/></route>
  <route src="x" dst="master_host"><link_ctn id="d1"/><link_ctn id="d2"/><link_ctn id="d3"/></route>
  <route src="y" dst="r"><link_ctn id="k3"/></route>
</zone></platform>`)
		t.Run(routing, func(t *testing.T) {
			checkDelays(t, p, map[string]float64{"x": 2e-3 + 1/1e9, "y": 4e-3 + 1/1e9})
		})
	}
}

// A <cluster>: up through the limiter and the host's link, the backbone,
// and down; between clusters, through their routers (Batsim's
// cluster512.xml: 1.6 ms, and 600 µs from the master host to itself).
func TestNoticeDelayClusters(t *testing.T) {
	p := mustPlatform(t, `<platform version="4.1"><zone id="AS0" routing="Full">
  <cluster id="c1" prefix="a" suffix="" radical="0-3" speed="1Gf" bw="125MBps" lat="50us"
    bb_bw="2.25GBps" bb_lat="500us" limiter_link="100MBps"/>
  <cluster id="c2" prefix="master_host" suffix="" radical="0-0" speed="1Gf" bw="125MBps" lat="50us"
    bb_bw="2.25GBps" bb_lat="500us"><prop id="role" value="master"/></cluster>
  <link id="backbone" bandwidth="1.25GBps" latency="500us"/>
  <zoneRoute src="c1" dst="c2" gw_src="ac1_router" gw_dst="master_hostc2_router"><link_ctn id="backbone"/></zoneRoute>
</zone></platform>`)
	checkDelays(t, p, map[string]float64{"a0": 1.6e-3 + 1/100e6, "a3": 1.6e-3 + 1/100e6})
	if want := 600e-6 + 1/125e6; math.Abs(p.MasterMessage.Seconds()-want) > 1e-15 || len(p.NetworkNotes) != 0 {
		t.Errorf("master's messages to itself: %v s, notes %q; want %v s, no note", p.MasterMessage.Seconds(), p.NetworkNotes, want)
	}
}

// Vivaldi: the distance between the coordinates, in milliseconds.
func TestNoticeDelayVivaldi(t *testing.T) {
	p := mustPlatform(t, `<platform version="4.1"><zone id="z" routing="Vivaldi">
  <host id="master_host" speed="1Gf" coordinates="0 0 0"/><host id="h" speed="1Gf" coordinates="3 4 1"/>
</zone></platform>`)
	checkDelays(t, p, map[string]float64{"h": 6e-3})
}

// Platforms real Batsim cannot route are run, and said so: hosts with no
// route to the master, a master in a zone routed None.
func TestNoticeDelayUnroutedIsNoted(t *testing.T) {
	p := mustPlatform(t, `<platform version="4.1"><zone id="root" routing="Full">
  <zone id="m" routing="None"><host id="master_host" speed="1Gf"/></zone>
  <zone id="n" routing="Full"><host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/></zone>
</zone></platform>`)
	checkDelays(t, p, map[string]float64{"h0": 0, "h1": 0})
	notes := strings.Join(p.NetworkNotes, "\n")
	for _, want := range []string{"2 host(s) have no route to the master host", "Bad gateways", "has no route to itself", "routed None"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}
