package engine

import (
	"bytes"
	"math"
	"testing"
)

// FuzzParsePlatform checks that any input gives a platform or an error,
// never a panic, and that what it gives is consistent.
func FuzzParsePlatform(f *testing.F) {
	f.Add([]byte(testPlatform))
	f.Add([]byte(`<platform version="4.1"><zone id="z" routing="Full"><host id="master_host" speed="1f"/><host id="a" speed="1Gf,2Gf" pstate="1" core="2"><prop id="k" value="v"/></host></zone></platform>`))
	f.Add([]byte(`<platform><AS id="z" routing="Full"><host id="master_host" speed="1f"/><cluster id="c" prefix="n" suffix="" radical="0-3,7" speed="1Mf" bw="1Bps" lat="0"><prop id="x" value="y"/></cluster></AS></platform>`))
	f.Add([]byte(`<platform><zone id="z"><cabinet id="c" prefix="n" suffix="" radical="1-2" speed="1" bw="1Bps" lat="0"/></zone></platform>`))
	// the network: routes, zone routes, Floyd, Dijkstra, Vivaldi, clusters'
	// links, host links
	f.Add([]byte(`<platform version="4.1"><zone id="AS0" routing="Full"><zone id="a" routing="Floyd"><host id="master_host" speed="1Gf"/><host id="h" speed="1Gf"/><router id="r"/><link id="l1" bandwidth="1GBps" latency="10us" sharing_policy="SPLITDUPLEX"/><link id="l2" bandwidth="8Gbps" latency="1ms" sharing_policy="FATPIPE"/><route src="master_host" dst="r"><link_ctn id="l1" direction="UP"/></route><route src="h" dst="r" symmetrical="NO"><link_ctn id="l2"/></route></zone><cluster id="c" prefix="n" suffix="" radical="0-2" speed="1Gf" bw="125MBps" lat="50us" bb_bw="2GBps" bb_lat="500us" limiter_link="1GBps" loopback_bw="1GBps" loopback_lat="1ns"/><link id="bb" bandwidth="1GBps" latency="100us"/><zoneRoute src="a" dst="c" gw_src="r" gw_dst="nc_router"><link_ctn id="bb"/></zoneRoute></zone></platform>`))
	f.Add([]byte(`<platform version="4.1"><zone id="z" routing="Dijkstra"><host id="master_host" speed="1Gf"/><host id="h" speed="1Gf"/><link id="l" bandwidth="1" latency="1"/><route src="h" dst="master_host"><link_ctn id="l"/></route></zone></platform>`))
	f.Add([]byte(`<platform version="4.1"><zone id="z" routing="Vivaldi"><host id="master_host" speed="1Gf" coordinates="0 0 0"/><host id="h" speed="1Gf" coordinates="1 2 3"/></zone></platform>`))
	f.Add([]byte(`<platform version="4.1"><zone id="z" routing="Cluster"><host id="master_host" speed="1Gf"/><host id="h" speed="1Gf"/><link id="u" bandwidth="1GBps" latency="1us"/><host_link id="h" up="u" down="u"/><router id="r"/><backbone id="b" bandwidth="1GBps" latency="1us"/></zone></platform>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePlatform(bytes.NewReader(data))
		if err != nil {
			return
		}
		finite := func(m MessageTime) bool {
			s := m.Seconds()
			return s >= 0 && !math.IsInf(s, 0) && !math.IsNaN(s)
		}
		if !finite(p.MasterMessage) {
			t.Fatalf("master's messages: %+v", p.MasterMessage)
		}
		for i, r := range p.Resources {
			if !finite(r.Notice) {
				t.Fatalf("resource %d: notice %+v", i, r.Notice)
			}
			rt := p.route(i, 0)
			if rt.latency < 0 || math.IsNaN(rt.latency) {
				t.Fatalf("route %d to 0: %+v", i, rt)
			}
		}
		for i, r := range p.Resources {
			if r.ID != i || !(r.Speed > 0) || r.Cores < 1 || r.Properties == nil || r.ZoneProperties == nil {
				t.Fatalf("resource %d: got %+v", i, r)
			}
			if _, ok := r.Properties["role"]; !ok {
				t.Fatalf("resource %d: no role property", i)
			}
			if i > 0 && p.Resources[i-1].Name >= r.Name {
				t.Fatalf("resources not sorted by name: %q then %q", p.Resources[i-1].Name, r.Name)
			}
		}
		if p.Master == "" {
			t.Fatal("no master")
		}
		if _, err := New(p, nil, Options{}); err != nil {
			t.Fatalf("New on a parsed platform: %v", err)
		}
	})
}

// FuzzParseWorkload checks that any input gives a workload or an error,
// never a panic, and that a parsed workload is accepted by New.
func FuzzParseWorkload(f *testing.F) {
	f.Add([]byte(`{"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d", "walltime": 5, "x": [1]}], "profiles": {"d": {"type": "delay", "delay": 1}}}`))
	f.Add([]byte(`{"nb_res": 2, "jobs": [{"id": "w!a", "subtime": 1.5, "res": 2, "profile": "c"}], "profiles": {"c": {"type": "composed", "repeat": 2, "seq": ["p", "t"]},
		"p": {"type": "parallel", "cpu": [1, 2], "com": [0, 0, 0, 0]}, "t": {"type": "parallel_homogeneous_total", "cpu": 1e9, "com": 0}, "h": {"type": "parallel_homogeneous", "cpu": 1, "com": 0, "ret": 2}}}`))
	f.Add([]byte(`{"nb_res": 1, "jobs": [], "profiles": {"a": {"type": "composed", "seq": ["a"]}}}`))
	f.Add([]byte(`{"nb_res": 1, "jobs": [{"id": null}], "profiles": {}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ParseWorkload(bytes.NewReader(data), "w")
		if err != nil {
			return
		}
		for _, j := range w.Jobs {
			if w.Profiles[j.Profile] == nil || j.ID != "w!"+j.Name {
				t.Fatalf("job %+v: inconsistent", j)
			}
			if _, err := j.Description(); err != nil {
				t.Fatalf("job %s: Description: %v", j.ID, err)
			}
		}
		if _, err := New(hostsPlatform([]float64{1e9}), []*Workload{w}, Options{}); err != nil {
			t.Fatalf("New on a parsed workload: %v", err)
		}
	})
}

// FuzzParseEvents checks that any input gives events or an error, never a
// panic, that the events are sorted as Batsim sorts them, and that events
// naming existing machines are accepted by New and simulated.
func FuzzParseEvents(f *testing.F) {
	f.Add([]byte(`{"timestamp": 1, "type": "machine_unavailable", "resources": "0-1 3"}
{"timestamp": 0.5, "type": "machine_available", "resources": "2"}`))
	f.Add([]byte(`{"type": "x", "timestamp": 1e17, "y": [1]}` + "\n\n" + `{"type": "machine_unavailable", "timestamp": 1e17, "resources": "0"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseEvents(bytes.NewReader(data), "we0", true)
		if err != nil {
			return
		}
		for i, ev := range l.Events {
			if !(ev.Timestamp >= 0) || (i > 0 && l.Events[i-1].Timestamp > ev.Timestamp) {
				t.Fatalf("event %d: timestamp %g out of order", i, ev.Timestamp)
			}
			if ev.generic() != (len(ev.Resources) == 0) {
				t.Fatalf("event %d: type %q with resources %v", i, ev.Type, ev.Resources)
			}
			for _, id := range ev.Resources {
				if id > 3 {
					return
				}
			}
		}
		e := mustNew(t, hostsPlatform([]float64{1, 1, 1, 1}), nil, Options{Events: []*EventList{l}})
		// A machine made unavailable twice or available while idle ends
		// the run with an error; anything else runs to the end.
		_, _ = drive(e, nil)
	})
}
