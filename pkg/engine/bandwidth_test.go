package engine

import (
	"math"
	"strings"
	"testing"
)

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
