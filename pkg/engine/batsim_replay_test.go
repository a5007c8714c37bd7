package engine

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/batsim"
)

// The recordings of real Batsim 4.2.1 runs under testdata/batsim-4.2.1 (see
// the README.md there): each folder holds the outputs of one run and the
// replies the decision process sent in it, as Batsim logged them.
const recordings = "testdata/batsim-4.2.1"

// batsimData holds Batsim 4.2.1's own platforms, workloads and events (its
// repository's platforms/, workloads/ and events/), which CI has in
// ../shared beside the clone.
const batsimData = "../../../shared/data/batsim-4.2.1"

// batsimFile is the path of a file of batsimData; the test fails (it does
// not skip) if it is missing.
func batsimFile(t *testing.T, path string) string {
	t.Helper()
	p := filepath.Join(batsimData, path)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("Batsim 4.2.1's data: %v (../shared/data/batsim-4.2.1 beside the clone, as CI has it)", err)
	}
	return p
}

// recording is one recorded run of real Batsim and what it was run on:
// paths from this package's folder, or from batsimData when data is set.
type recording struct {
	name, platform, workload string
	// events is an external events file (Batsim's --events), if any.
	events string
	// master is the master host (Batsim's -m), if not the default.
	master string
	// data says the platform, workload and events are in batsimData.
	data bool
}

// replayRecording runs the engine on the recording's platform and workload,
// with compute sharing as batkube-run asks Batsim, answering each message
// with the recorded decisions stamped at or before its now, and returns the
// engine's _jobs.csv, _machine_states.csv and schedule.
func replayRecording(t *testing.T, r recording) (jobs, states string, sched Schedule) {
	t.Helper()
	path := func(p string) string {
		if r.data {
			return batsimFile(t, p)
		}
		return p
	}
	replies := readReplies(t, filepath.Join(recordings, r.name, "replies.jsonl"))
	p, err := ReadPlatformFileWith(path(r.platform), PlatformOptions{MasterHost: r.master})
	if err != nil {
		t.Fatal(err)
	}
	w := mustReadWorkload(t, path(r.workload))
	var jobsOut, statesOut bytes.Buffer
	opts := Options{ComputeSharing: true, JobsOutput: &jobsOut, MachineStatesOutput: &statesOut}
	if r.events != "" {
		l, err := ReadEventsFile(path(r.events), BatsimEventListName(0), false)
		if err != nil {
			t.Fatal(err)
		}
		opts.Events = []*EventList{l}
	}
	e := mustNew(t, p, []*Workload{w}, opts)
	next := 0
	heard := map[string]bool{} // the jobs the decision process was told of
	err = loop(e, func(msg Message) (float64, []Decision) {
		for _, ev := range msg.Events {
			if s, ok := ev.(JobSubmitted); ok {
				heard[s.Job.ID] = true
			}
		}
		// Batsim writes the dates of its messages with six decimals:
		// the decision process answered the message with that now,
		// and Batsim applied its decisions at those dates (sleeping
		// until one after its clock).
		now := msg.Now
		sent := batsimDecimals(msg.Now)
		var ds []Decision
		for next < len(replies) && (replies[next].now <= sent || sameDate(replies[next].now, sent)) {
			rep := replies[next]
			if sameDate(rep.now, sent) && !rep.heardOf(heard) {
				// it answers a later message of the same
				// microsecond, which told of its jobs
				break
			}
			if len(rep.decisions) > 0 && !sameDate(rep.now, sent) {
				t.Errorf("recorded reply to %g replayed at %g: the engine sent no message then", rep.now, msg.Now)
			}
			for _, d := range rep.decisions {
				now = max(now, d.Time())
			}
			ds = append(ds, rep.decisions...)
			next++
		}
		return now, ds
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if next != len(replies) {
		t.Fatalf("replay: %d of %d recorded replies left when the simulation ended", len(replies)-next, len(replies))
	}
	return jobsOut.String(), statesOut.String(), e.Schedule(0, 0)
}

// sameDate reports whether a reply to a message Batsim dated now may answer
// the engine's message dated sent (both >= 0): they are at most two doubles
// apart (the engine's clock may be an ulp or two off Batsim's where that is
// less than a microsecond: from 1e10 s on).
func sameDate(now, sent float64) bool {
	a, b := math.Float64bits(now), math.Float64bits(sent)
	return max(a, b)-min(a, b) <= 2
}

// batsimDecimals is x as a decision process reads it from Batsim, which
// writes the dates of its messages with printf("%6f").
func batsimDecimals(x float64) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 6, 64), 64)
	if err != nil {
		panic(err)
	}
	return v
}

// reply is one reply of the decision process: the now it answered and its
// decisions.
type reply struct {
	now       float64
	decisions []Decision
}

// heardOf reports whether every job the reply's decisions name was in
// JOB_SUBMITTED events already.
func (r reply) heardOf(heard map[string]bool) bool {
	for _, d := range r.decisions {
		var id string
		switch d := d.(type) {
		case ExecuteJob:
			id = d.JobID
		case RejectJob:
			id = d.JobID
		default:
			continue
		}
		if !heard[id] {
			return false
		}
	}
	return true
}

// readReplies reads the replies recorded in path, one protocol message per
// line, in order. Only EXECUTE_JOB, CALL_ME_LATER, REJECT_JOB and KILL_JOB
// are expected in the recordings (a scheduler through Batkube decides
// nothing else).
func readReplies(t *testing.T, path string) []reply {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []reply
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		msg, err := batsim.Decode(sc.Bytes(), batsim.FromScheduler)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		dates, err := batsimDates(sc.Bytes())
		if err != nil || len(dates) != len(msg.Events) {
			t.Fatalf("%s:%d: the dates as Batsim reads them: %v", path, line, err)
		}
		rep := reply{now: msg.Now}
		for i, ev := range msg.Events {
			at := dates[i].timestamp
			switch d := ev.Data.(type) {
			case batsim.CallMeLater:
				rep.decisions = append(rep.decisions, CallMeLater{Timestamp: at, When: dates[i].data})
				continue
			case batsim.RejectJob:
				rep.decisions = append(rep.decisions, RejectJob{Timestamp: at, JobID: string(d.JobID)})
				continue
			case batsim.KillJob:
				ids := make([]string, len(d.JobIDs))
				for i, id := range d.JobIDs {
					ids[i] = string(id)
				}
				rep.decisions = append(rep.decisions, KillJob{Timestamp: at, JobIDs: ids})
				continue
			}
			d, ok := ev.Data.(batsim.ExecuteJob)
			if !ok || len(d.StorageMapping) > 0 {
				t.Fatalf("%s:%d: %s: only EXECUTE_JOB without storage mapping, CALL_ME_LATER, REJECT_JOB and KILL_JOB are replayed", path, line, ev.Type())
			}
			var mapping []int
			if len(d.Mapping) > 0 {
				mapping = make([]int, len(d.Mapping))
				for executor, index := range d.Mapping {
					mapping[executor] = index
				}
			}
			rep.decisions = append(rep.decisions, ExecuteJob{Timestamp: at, JobID: string(d.JobID), Alloc: d.Alloc.IDs(), Mapping: mapping})
		}
		out = append(out, rep)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// eventDates are an event's timestamp, and its data's (CALL_ME_LATER's
// date), as Batsim reads them.
type eventDates struct{ timestamp, data float64 }

// batsimDates reads the dates of a reply's events as Batsim 4.2.1 reads
// them, with RapidJSON's default parsing (rapidJSONDouble).
func batsimDates(line []byte) ([]eventDates, error) {
	var raw struct {
		Events []struct {
			Timestamp json.Number `json:"timestamp"`
			Data      struct {
				Timestamp json.Number `json:"timestamp"`
			} `json:"data"`
		} `json:"events"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	out := make([]eventDates, len(raw.Events))
	for i, ev := range raw.Events {
		var err error
		if out[i].timestamp, err = rapidJSONDouble(ev.Timestamp.String()); err != nil {
			return nil, err
		}
		if ev.Data.Timestamp != "" {
			if out[i].data, err = rapidJSONDouble(ev.Data.Timestamp.String()); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func readRecorded(t *testing.T, name, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recordings, name, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readScheduleCSV reads a _schedule.csv into a map column -> value.
func readScheduleCSV(t *testing.T, content string) map[string]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(content)).ReadAll()
	if err != nil || len(rows) != 2 || len(rows[0]) != len(rows[1]) {
		t.Fatalf("bad _schedule.csv (%v):\n%s", err, content)
	}
	out := map[string]string{}
	for i, k := range rows[0] {
		out[k] = rows[1][i]
	}
	return out
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: engine %q, Batsim %q (%d and %d lines)", i+1, gl, wl, len(g), len(w))
		}
	}
	return "no difference"
}

// checkSchedule compares the engine's _schedule.csv with Batsim's, column by
// column; only the version and the wall-clock times differ by nature.
func checkSchedule(t *testing.T, sched Schedule, want string) {
	t.Helper()
	var b bytes.Buffer
	if err := sched.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	got, exp := readScheduleCSV(t, b.String()), readScheduleCSV(t, want)
	for k, v := range exp {
		switch k {
		case "batsim_version", "scheduling_time", "simulation_time":
			continue
		}
		if got[k] != v {
			t.Errorf("_schedule.csv %s: engine %s, Batsim %s", k, got[k], v)
		}
	}
	if len(got) != len(exp) {
		t.Errorf("_schedule.csv: engine has %d columns, Batsim %d", len(got), len(exp))
	}
}

// replayed are the recordings under testdata/batsim-4.2.1, each replayed by
// TestReplayBatsim.
var replayed = []recording{
	// Batkube's examples
	{name: "delay_30", platform: "../../examples/platforms/platform_4.xml", workload: "../../examples/workloads/delay_30.json"},
	// the 1,000-job trace on 16 hosts whose time_idle differed between
	// live runs: with the same decisions it is the same
	{name: "trace_10h", platform: "../../examples/platforms/platform_16.xml", workload: "../../examples/workloads/trace_10h.json"},
	// multi-host, composed, walltime
	{name: "parallel", platform: "../../examples/platforms/platform_4.xml", workload: "../../examples/workloads/parallel.json"},
	// a platform whose routes have latency: each job's end reaches the
	// server 20 or 120 µs after it, one message at a time
	{name: "latency", platform: "../e2e/testdata/batsim_like_platform.xml", workload: "../e2e/testdata/batsim_like_workload.json"},
	// the master host 600 µs from itself: every message of Batsim's own
	// actors takes that long, one at a time (server.go)
	{name: "master_delay_30", platform: "testdata/platforms/master_cluster.xml", workload: "../../examples/workloads/delay_30.json"},
	{name: "master_parallel", platform: "testdata/platforms/master_cluster.xml", workload: "../../examples/workloads/parallel.json"},
	// parallel tasks that communicate, at once: they share the cluster's
	// links and backbone
	{name: "master_comms", platform: "testdata/platforms/master_cluster.xml", workload: "testdata/comms.json"},
	// a FATPIPE backbone (each flow bounded alone) and SPLITDUPLEX links
	// crossed both ways, by several flows of one job and by jobs at once
	{name: "fatpipe", platform: "testdata/platforms/fatpipe.xml", workload: "testdata/fatpipe.json"},
	// jobs of different flops sharing a core get equal flops per second
	{name: "sharing", platform: "testdata/platforms/sharing.xml", workload: "testdata/sharing.json"},
	// jobs ending at their walltime, or within an ulp of it (walltime_test.go)
	{name: "walltime", platform: "../../examples/platforms/platform_4.xml", workload: "testdata/walltime/walltime.json"},
	// submissions from 1 s to 1e17 s (far_future_test.go)
	{name: "far_future", platform: "../../examples/platforms/platform_16.xml", workload: "testdata/far_future/far_future.json"},
	// Batsim's own platforms and workloads (batsimData)
	{name: "small_platform.test_delays", platform: "platforms/small_platform.xml", workload: "workloads/test_delays.json", data: true},
	{name: "small_platform.test_sequence_delay", platform: "platforms/small_platform.xml", workload: "workloads/test_sequence_delay.json", data: true},
	{name: "small_platform.test_various_profile_types", platform: "platforms/small_platform.xml", workload: "workloads/test_various_profile_types.json", data: true},
	{name: "small_platform.test_walltime", platform: "platforms/small_platform.xml", workload: "workloads/test_walltime.json", data: true},
	{name: "small_platform.test_same_submit_time", platform: "platforms/small_platform.xml", workload: "workloads/test_same_submit_time.json", data: true},
	{name: "small_platform.test_delays.events", platform: "platforms/small_platform.xml", workload: "workloads/test_delays.json", events: "events/test_events_4hosts.txt", data: true},
	// dates up to 1e17 s, where Batsim reads some of the decisions' dates
	// an ulp off (rapidJSONDouble)
	{name: "small_platform.test_long_workload", platform: "platforms/small_platform.xml", workload: "workloads/test_long_workload.json", data: true},
	{name: "small_platform.test_case_study1", platform: "platforms/small_platform.xml", workload: "workloads/test_case_study1.json", data: true},
	{name: "energy_platform.test_same_submit_time", platform: "platforms/energy_platform.xml", workload: "workloads/test_same_submit_time.json", data: true},
	{name: "simple_coalloc_platform.test_delays", platform: "platforms/simple_coalloc_platform.xml", workload: "workloads/test_delays.json", data: true},
	{name: "properties_example.test_delays", platform: "platforms/properties_example.xml", workload: "workloads/test_delays.json", data: true},
	{name: "cluster512.test_walltime", platform: "platforms/cluster512.xml", workload: "workloads/test_walltime.json", data: true},
	{name: "cluster512.test_one_computation_job", platform: "platforms/cluster512.xml", workload: "workloads/test_one_computation_job.json", data: true},
	{name: "cluster512.test_one_computation_job_tot", platform: "platforms/cluster512.xml", workload: "workloads/test_one_computation_job_tot.json", data: true},
	{name: "cluster512.test_batsim_paper_workload_seed1", platform: "platforms/cluster512.xml", workload: "workloads/test_batsim_paper_workload_seed1.json", data: true},
	{name: "cluster512.example_workload_hpc_seed1_jobs250", platform: "platforms/cluster512.xml", workload: "workloads/example_workload_hpc_seed1_jobs250.json", data: true},
	{name: "cluster512.example_workload_hpc_seed4_jobs250", platform: "platforms/cluster512.xml", workload: "workloads/example_workload_hpc_seed4_jobs250.json", data: true},
	{name: "cluster_energy_128.example_workload_hpc_seed3_jobs250", platform: "platforms/cluster_energy_128.xml", workload: "workloads/example_workload_hpc_seed3_jobs250.json", data: true},
	{name: "energy_platform_homogeneous_no_net_128.example_workload_hpc_seed5_jobs250", platform: "platforms/energy_platform_homogeneous_no_net_128.xml", workload: "workloads/example_workload_hpc_seed5_jobs250.json", data: true},
	{name: "cluster_locality_8x16.example_workload_hpc_seed2_jobs250", platform: "platforms/cluster_locality_8x16.xml", workload: "workloads/example_workload_hpc_seed2_jobs250.json", master: "master_host0", data: true},
	{name: "cluster_locality_32x16.example_workload_hpc_seed3_jobs250", platform: "platforms/cluster_locality_32x16.xml", workload: "workloads/example_workload_hpc_seed3_jobs250.json", master: "master_host0", data: true},
	{name: "cluster_locality_4x128.example_workload_hpc_seed1_jobs250", platform: "platforms/cluster_locality_4x128.xml", workload: "workloads/example_workload_hpc_seed1_jobs250.json", master: "master_host0", data: true},
}

// TestReplayBatsim replays the decisions of real Batsim 4.2.1 runs
// (Batkube's FIFO example or kube-scheduler deciding, compute sharing on)
// through the engine: _jobs.csv and _machine_states.csv must be byte for
// byte Batsim's, and _schedule.csv column for column (time_idle and
// time_computing included), but for the version and wall-clock times.
func TestReplayBatsim(t *testing.T) {
	for _, r := range replayed {
		t.Run(r.name, func(t *testing.T) {
			jobs, states, sched := replayRecording(t, r)
			if want := readRecorded(t, r.name, "_jobs.csv"); jobs != want {
				t.Errorf("_jobs.csv differs: %s", firstDiff(jobs, want))
			}
			if want := readRecorded(t, r.name, "_machine_states.csv"); states != want {
				t.Errorf("_machine_states.csv differs: %s", firstDiff(states, want))
			}
			checkSchedule(t, sched, readRecorded(t, r.name, "_schedule.csv"))
		})
	}
}
