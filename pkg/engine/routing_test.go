package engine

import (
	"bytes"
	"fmt"
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

func TestNetworkUnits(t *testing.T) {
	for s, want := range map[string]float64{
		"10Gbps": 1.25e9, "1.25E8": 1.25e8, "1.25E8Bps": 1.25e8, "1KiBps": 1024, "2MBps": 2e6, "1kbps": 125,
	} {
		if got, err := parseBandwidth(s); err != nil || got != want {
			t.Errorf("bandwidth %q: %v, %v, want %v", s, got, err, want)
		}
	}
	for s, want := range map[string]float64{"1.5E-9s": 1.5e-9, "500us": 500e-6, "1ms": 1e-3, "0": 0, "2m": 120, "3ns": 3e-9, "": 0} {
		if got, err := parseLatency(s); err != nil || math.Abs(got-want) > 1e-24 {
			t.Errorf("latency %q: %v, %v, want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"fast", "10 parsecs", "-1GBps", "0Bps", "1e400Bps"} {
		if _, err := parseBandwidth(s); err == nil {
			t.Errorf("bandwidth %q: no error", s)
		}
	}
	if _, err := ParsePlatform(strings.NewReader(`<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/><link id="l" bandwidth="fast" latency="1us"/></zone></platform>`)); err == nil || !strings.Contains(err.Error(), `link "l"`) {
		t.Errorf("a link of bandwidth \"fast\": %v, want an error naming it", err)
	}
}

// Batsim's server gets one message at a time: two jobs ending together on
// hosts 1 ms from the master host are heard of at +1 ms and +2 ms, in one
// message sent at +2 ms, and a job submitted meanwhile waits its turn; the
// jobs' rows keep their own end. With NoNetwork, all is heard of at once.
func TestJobEndsReachTheServerOneAtATime(t *testing.T) {
	p := mustPlatform(t, `<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/><host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/>
  <link id="l0" bandwidth="1e15Bps" latency="1ms"/><link id="l1" bandwidth="1e15Bps" latency="1ms"/>
  <route src="h0" dst="master_host"><link_ctn id="l0"/></route>
  <route src="h1" dst="master_host"><link_ctn id="l1"/></route>
</zone></platform>`)
	const workload = `{"nb_res": 2, "jobs": [
	  {"id": "a", "subtime": 0, "res": 1, "profile": "d10"},
	  {"id": "b", "subtime": 0, "res": 1, "profile": "d10"},
	  {"id": "c", "subtime": 10.0005, "res": 1, "profile": "d10"}],
	  "profiles": {"d10": {"type": "delay", "delay": 10}}}`
	run := func(opts Options) ([]Message, string) {
		var jobs bytes.Buffer
		opts.JobsOutput = &jobs
		e := mustNew(t, p, []*Workload{mustWorkload(t, "w", workload)}, opts)
		msgs, err := drive(e, placer(map[string][]int{"w!a": {0}, "w!b": {1}, "w!c": {0}}, nil))
		if err != nil {
			t.Fatal(err)
		}
		return msgs, jobs.String()
	}
	// check finds the message telling of job a's end and compares its
	// date and its events' with want ("TYPE job@date", dates to the ns).
	check := func(msgs []Message, want ...string) {
		t.Helper()
		for _, m := range msgs {
			if c, ok := m.Events[0].(JobCompleted); !ok || c.JobID != "w!a" {
				continue
			}
			var got []string
			for _, ev := range m.Events {
				id := ""
				switch ev := ev.(type) {
				case JobCompleted:
					id = ev.JobID
				case JobSubmitted:
					id = ev.Job.ID
				}
				got = append(got, fmt.Sprintf("%s %s@%.9f", ev.Type(), id, ev.Time()))
			}
			got = append(got, fmt.Sprintf("now %.9f", m.Now))
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Errorf("the message telling of a's end:\n%s\nwant\n%s\n(all: %s)", strings.Join(got, ", "), strings.Join(want, ", "), trace(msgs))
			}
			return
		}
		t.Errorf("no message starts with a's end:\n%s", trace(msgs))
	}
	msgs, rows := run(Options{})
	// c's submission and the NOTIFY after it each cross the master's
	// loopback (1e-10 s, and the NOTIFY then comes alone)
	check(msgs, "JOB_COMPLETED w!a@10.001000000", "JOB_COMPLETED w!b@10.002000000", "JOB_SUBMITTED w!c@10.002000001", "now 10.002000001")
	for _, row := range []string{"\na,w,d10,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,10.000000,10.000000,", "\nc,w,d10,10.000500,1,-1.000000,1,COMPLETED_SUCCESSFULLY,10.002000,"} {
		if !strings.Contains(rows, row) {
			t.Errorf("_jobs.csv:\n%s\nwants a row starting %s", rows, row[1:])
		}
	}
	msgs, _ = run(Options{NoNetwork: true})
	check(msgs, "JOB_COMPLETED w!a@10.000000000", "JOB_COMPLETED w!b@10.000000000", "now 10.000000000")
}

// communicatingPlatform is a cluster of seven 2 Gf hosts with 1.25 GBps
// private links (SPLITDUPLEX) and a backbone of the given bandwidth and
// sharing policy, no latency; its last host, h6, is the master host.
func communicatingPlatform(t *testing.T, bbBW, bbPolicy string) *Platform {
	t.Helper()
	p, err := ParsePlatformWith(strings.NewReader(`<platform version="4.1">
  <cluster id="c" prefix="h" suffix="" radical="0-6" speed="2Gf" bw="1.25GBps" lat="0"
           bb_bw="`+bbBW+`" bb_lat="0" bb_sharing_policy="`+bbPolicy+`"/>
</platform>`), PlatformOptions{MasterHost: "h6"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// endsOf runs the jobs of workload on p, placed as allocs says, and
// returns when each ended.
func endsOf(t *testing.T, p *Platform, workload string, allocs map[string][]int) map[string]float64 {
	t.Helper()
	e := mustNew(t, p, []*Workload{mustWorkload(t, "w", workload)}, Options{ComputeSharing: true, NoNetwork: true})
	msgs, err := drive(e, placer(allocs, nil))
	if err != nil {
		t.Fatalf("drive: %v\n%s", err, trace(msgs))
	}
	ends := map[string]float64{}
	for id, c := range completions(msgs) {
		ends[id] = c.Timestamp
	}
	return ends
}

// A FATPIPE link constrains each flow on its own: a job's 30 flows of
// 1.33e8 bytes across a 5 GBps FATPIPE backbone take 1.33e8 / 5e9 s each,
// the job's pace set by its hosts' private links (5 flows of 1.33e8 bytes
// out of each host at 1.25 GBps: 0.533 s), as in real Batsim 4.2.1
// (testdata/batsim-4.2.1/fatpipe). Adding up the flows' bytes on the
// backbone (4e9 bytes at 5 GBps: 0.8 s) was the engine's old mistake. A
// SHARED backbone carries their sum.
func TestFatpipeBoundsEachFlow(t *testing.T) {
	const workload = `{"nb_res": 6, "jobs": [{"id": "j", "subtime": 0, "res": 6, "profile": "spread"}],
	  "profiles": {"spread": {"type": "parallel_homogeneous_total", "cpu": 4e9, "com": 8e8}}}`
	all := map[string][]int{"w!j": {0, 1, 2, 3, 4, 5}}
	for _, c := range []struct {
		policy string
		want   float64
	}{
		{"FATPIPE", 8e8 / 6 * 5 / 1.25e9},
		{"SHARED", 8e8 / 6 * 30 / 5e9},
	} {
		if got := endsOf(t, communicatingPlatform(t, "5GBps", c.policy), workload, all)["w!j"]; math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s backbone: the job ends at %.9f, want %.9f", c.policy, got, c.want)
		}
	}
}

// Jobs crossing one FATPIPE link each go at the pace of their own largest
// flow (1e9 bytes over 1 GBps: 1 s; 2.5e8: 0.25 s), not at the pace of the
// largest flow on the link, as in real Batsim 4.2.1
// (testdata/batsim-4.2.1/fatpipe, a1 and a2).
func TestFatpipeJobsApart(t *testing.T) {
	const workload = `{"nb_res": 4, "jobs": [
	    {"id": "big", "subtime": 0, "res": 2, "profile": "big"}, {"id": "small", "subtime": 0, "res": 2, "profile": "small"}],
	  "profiles": {"big": {"type": "parallel", "cpu": [0, 0], "com": [0, 1e9, 0, 0]},
	    "small": {"type": "parallel", "cpu": [0, 0], "com": [0, 2.5e8, 0, 0]}}}`
	got := endsOf(t, communicatingPlatform(t, "1GBps", "FATPIPE"), workload, map[string][]int{"w!big": {0, 1}, "w!small": {2, 3}})
	if want := map[string]float64{"w!big": 1, "w!small": 0.25}; math.Abs(got["w!big"]-1) > 1e-9 || math.Abs(got["w!small"]-0.25) > 1e-9 {
		t.Errorf("ends %v, want %v", got, want)
	}
}

// A SPLITDUPLEX link has a bandwidth each way: a job's flows from h0 to h1
// and back (1e9 and 6e8 bytes) each have a way of the hosts' private links
// (1.25 GBps), so the larger takes 0.8 s; a SHARED link would carry both
// (1.28 s). Sharing a SHARED backbone (2.5 GBps) with a job of six 5e8-byte
// flows, each job gets half of it, in bytes per second (SimGrid's fair
// bottleneck, not equal paces): 1.6e9 bytes at 1.25 GBps, 1.28 s; the
// other's 3e9 bytes have 1.4e9 left then, alone at 2.5 GBps: 1.84 s, as
// real Batsim 4.2.1 (testdata/batsim-4.2.1/fatpipe, jobs both and all3).
func TestSplitDuplexBothWays(t *testing.T) {
	const profiles = `"profiles": {"both": {"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 1e9, 6e8, 0]},
	    "all3": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 5e8}}`
	both := `{"id": "both", "subtime": 0, "res": 2, "profile": "both"}`
	alone := `{"nb_res": 5, "jobs": [` + both + `], ` + profiles + `}`
	if got := endsOf(t, communicatingPlatform(t, "100GBps", "SHARED"), alone, map[string][]int{"w!both": {0, 1}})["w!both"]; math.Abs(got-0.8) > 1e-9 {
		t.Errorf("alone, both ends at %.9f, want 0.8", got)
	}
	together := `{"nb_res": 5, "jobs": [` + both + `, {"id": "all3", "subtime": 0, "res": 3, "profile": "all3"}], ` + profiles + `}`
	got := endsOf(t, communicatingPlatform(t, "2.5GBps", "SHARED"), together, map[string][]int{"w!both": {0, 1}, "w!all3": {2, 3, 4}})
	if math.Abs(got["w!both"]-1.28) > 1e-9 || math.Abs(got["w!all3"]-1.84) > 1e-9 {
		t.Errorf("together, ends %v, want both at 1.28, all3 at 1.84", got)
	}
}
