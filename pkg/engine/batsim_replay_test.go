package engine

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/batsim"
)

// The recordings of real Batsim 4.2.1 runs under testdata/batsim-4.2.1 (see
// the README.md there): each folder holds the outputs of one run and the
// replies the decision process sent in it, as Batsim logged them.
const recordings = "testdata/batsim-4.2.1"

// recording is one recorded run of real Batsim and what it was run on.
type recording struct {
	name, platform, workload string
}

// replayRecording runs the engine on the recording's platform and workload,
// with compute sharing as batkube-run asks Batsim, answering each message
// with the recorded decisions stamped at or before its now, and returns the
// engine's _jobs.csv, _machine_states.csv and schedule.
func replayRecording(t *testing.T, r recording) (jobs, states string, sched Schedule) {
	t.Helper()
	decisions := readReplies(t, filepath.Join(recordings, r.name, "replies.jsonl"))
	p, err := ReadPlatformFile(r.platform)
	if err != nil {
		t.Fatal(err)
	}
	w := mustReadWorkload(t, r.workload)
	var jobsOut, statesOut bytes.Buffer
	e := mustNew(t, p, []*Workload{w}, Options{ComputeSharing: true, JobsOutput: &jobsOut, MachineStatesOutput: &statesOut})
	next := 0
	err = loop(e, func(msg Message) (float64, []Decision) {
		// Batsim writes the dates of its messages with six decimals:
		// the decision process answered the message with that now,
		// and Batsim applied its decisions at those dates (sleeping
		// until one after its clock).
		now := msg.Now
		sent := batsimDecimals(msg.Now)
		var ds []Decision
		for next < len(decisions) && decisions[next].Time() <= sent {
			if d := decisions[next]; d.Time() != sent {
				t.Errorf("recorded %s at %g replayed at %g: the engine sent no message then", d.Type(), d.Time(), msg.Now)
			}
			ds = append(ds, decisions[next])
			now = max(now, decisions[next].Time())
			next++
		}
		return now, ds
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if next != len(decisions) {
		t.Fatalf("replay: %d of %d recorded decisions left when the simulation ended", len(decisions)-next, len(decisions))
	}
	return jobsOut.String(), statesOut.String(), e.Schedule(0, 0)
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

// readReplies reads the decisions of the replies recorded in path, one
// protocol message per line, in order. Only EXECUTE_JOB, CALL_ME_LATER and
// REJECT_JOB are expected in the recordings (a scheduler through Batkube decides
// nothing else).
func readReplies(t *testing.T, path string) []Decision {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Decision
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		msg, err := batsim.Decode(sc.Bytes(), batsim.FromScheduler)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		for _, ev := range msg.Events {
			switch d := ev.Data.(type) {
			case batsim.CallMeLater:
				out = append(out, CallMeLater{Timestamp: ev.Timestamp, When: d.At})
				continue
			case batsim.RejectJob:
				out = append(out, RejectJob{Timestamp: ev.Timestamp, JobID: string(d.JobID)})
				continue
			}
			d, ok := ev.Data.(batsim.ExecuteJob)
			if !ok || len(d.StorageMapping) > 0 {
				t.Fatalf("%s:%d: %s: only EXECUTE_JOB without storage mapping, CALL_ME_LATER and REJECT_JOB are replayed", path, line, ev.Type())
			}
			var mapping []int
			if len(d.Mapping) > 0 {
				mapping = make([]int, len(d.Mapping))
				for executor, index := range d.Mapping {
					mapping[executor] = index
				}
			}
			out = append(out, ExecuteJob{Timestamp: ev.Timestamp, JobID: string(d.JobID), Alloc: d.Alloc.IDs(), Mapping: mapping})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
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

// TestReplayBatsimDelayRunsIdentical replays the decisions of real Batsim
// 4.2.1 runs of delay workloads (kube-scheduler through Batkube, compute
// sharing on) through the engine: _jobs.csv and _machine_states.csv must be
// byte for byte Batsim's, and _schedule.csv column for column (time_idle
// and time_computing included), but for the version and wall-clock times.
// trace_10h is the 1,000-job trace on 16 hosts whose time_idle differed
// between live runs: with the same decisions it is the same.
func TestReplayBatsimDelayRunsIdentical(t *testing.T) {
	for _, r := range []recording{
		{"delay_30", "../../examples/platforms/platform_4.xml", "../../examples/workloads/delay_30.json"},
		{"trace_10h", "../../examples/platforms/platform_16.xml", "../../examples/workloads/trace_10h.json"},
		// a platform whose routes have latency: each job's end reaches
		// the server 20 or 120 µs after it, one message at a time
		{"latency", "../e2e/testdata/batsim_like_platform.xml", "../e2e/testdata/batsim_like_workload.json"},
		// the master host 600 µs from itself: every message of Batsim's
		// own actors takes that long, one at a time (server.go)
		{"master_delay_30", "testdata/platforms/master_cluster.xml", "../../examples/workloads/delay_30.json"},
		{"master_parallel", "testdata/platforms/master_cluster.xml", "../../examples/workloads/parallel.json"},
		// parallel tasks that communicate, at once: they share the
		// cluster's links and backbone
		{"master_comms", "testdata/platforms/master_cluster.xml", "testdata/comms.json"},
	} {
		t.Run(r.name, func(t *testing.T) {
			jobs, states, sched := replayRecording(t, r)
			if want := readRecorded(t, r.name, "_jobs.csv"); jobs != want {
				t.Errorf("_jobs.csv differs: %s", firstDiff(jobs, want))
			}
			want := readRecorded(t, r.name, "_machine_states.csv")
			if r.name == "delay_30" || r.name == "latency" {
				// The first job starts at 0 plus the 4e-10 s
				// its EXECUTE_JOB takes to reach the job's
				// host in Batsim (SimGrid's loopback), which
				// %g shows at 0 only; the engine writes 0.
				want = strings.Replace(want, "\n4e-10,", "\n0,", 1)
			}
			if states != want {
				t.Errorf("_machine_states.csv differs: %s", firstDiff(states, want))
			}
			checkSchedule(t, sched, readRecorded(t, r.name, "_schedule.csv"))
		})
	}
}

// TestReplayBatsimComputeRunStates replays a real Batsim 4.2.1 run of
// computing jobs (parallel.json: multi-host, composed, walltime). Where jobs
// end at the instant others start, Batsim's order of the rows (in both
// files) follows sub-nanosecond latencies of its internal messages (see
// the package documentation): _jobs.csv must have the same rows, in any
// order; _schedule.csv the same columns; _machine_states.csv the same
// number of rows at each instant, ending on the same numbers of idle and
// computing hosts.
func TestReplayBatsimComputeRunStates(t *testing.T) {
	r := recording{"parallel", "../../examples/platforms/platform_4.xml", "../../examples/workloads/parallel.json"}
	jobs, states, sched := replayRecording(t, r)
	sortedLines := func(s string) string {
		lines := strings.Split(s, "\n")
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	if want := readRecorded(t, r.name, "_jobs.csv"); sortedLines(jobs) != sortedLines(want) {
		t.Errorf("_jobs.csv rows differ (sorted): %s", firstDiff(sortedLines(jobs), sortedLines(want)))
	}
	checkSchedule(t, sched, readRecorded(t, r.name, "_schedule.csv"))
	got, want := instants(parseStates(t, states)), instants(parseStates(t, readRecorded(t, r.name, "_machine_states.csv")))
	if len(got) != len(want) {
		t.Fatalf("_machine_states.csv: engine has %d instants, Batsim %d", len(got), len(want))
	}
	for i := range got {
		if g, w := got[i], want[i]; math.Abs(g.time-w.time) > 1e-6 || g.rows != w.rows || g.last != w.last {
			t.Errorf("_machine_states.csv instant %d: engine %+v, Batsim %+v", i, g, w)
		}
	}
}

// instant sums up the rows of _machine_states.csv at one time (within a
// microsecond): how many, and the numbers of idle and computing hosts after
// the last.
type instant struct {
	time float64
	rows int
	last [2]int
}

func instants(rows []statesRow) []instant {
	var out []instant
	for _, r := range rows {
		if n := len(out); n == 0 || r.time-out[n-1].time > 1e-6 {
			out = append(out, instant{time: r.time})
		}
		in := &out[len(out)-1]
		in.rows++
		in.last = [2]int{r.idle, r.computing}
	}
	return out
}

type statesRow struct {
	time            float64
	idle, computing int
}

func parseStates(t *testing.T, content string) []statesRow {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(content)).ReadAll()
	if err != nil || len(rows) == 0 || strings.Join(rows[0], ",")+"\n" != machineStatesHeader {
		t.Fatalf("bad _machine_states.csv (%v):\n%s", err, content)
	}
	var out []statesRow
	for _, r := range rows[1:] {
		var row statesRow
		var errs [3]error
		row.time, errs[0] = strconv.ParseFloat(r[0], 64)
		row.idle, errs[1] = strconv.Atoi(r[4])
		row.computing, errs[2] = strconv.Atoi(r[5])
		for _, err := range errs {
			if err != nil {
				t.Fatalf("bad _machine_states.csv row %q: %v", r, err)
			}
		}
		out = append(out, row)
	}
	return out
}
