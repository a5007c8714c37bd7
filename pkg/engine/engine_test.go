package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

type ending struct {
	at    float64
	state JobState
	ret   int
}

func TestJobTiming(t *testing.T) {
	profiles := `{
		"d10": {"type": "delay", "delay": 10},
		"d5": {"type": "delay", "delay": 5},
		"d2fail": {"type": "delay", "delay": 2, "ret": 3},
		"ph2G": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0},
		"ph1G": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
		"pht4G": {"type": "parallel_homogeneous_total", "cpu": 4e9, "com": 0},
		"par": {"type": "parallel", "cpu": [1e9, 3e9], "com": [0, 0, 0, 0]},
		"zero": {"type": "parallel_homogeneous", "cpu": 0, "com": 0},
		"seq": {"type": "composed", "repeat": 2, "seq": ["d5", "ph1G"]},
		"seqfail": {"type": "composed", "seq": ["d5", "d2fail", "d10"]},
		"nested": {"type": "composed", "repeat": 3, "seq": ["seq"]}
	}`
	tests := []struct {
		name   string
		speeds []float64
		jobs   string
		allocs map[string][]int
		want   map[string]ending
	}{
		{
			name:   "delay lasts its delay",
			speeds: []float64{1e9},
			jobs:   `{"id": 1, "subtime": 3, "res": 1, "profile": "d10"}`,
			want:   map[string]ending{"w!1": {13, CompletedSuccessfully, 0}},
		},
		{
			name:   "parallel_homogeneous waits for the slowest host",
			speeds: []float64{1e9, 2e9},
			jobs:   `{"id": "a", "subtime": 0, "res": 2, "profile": "ph2G"}`,
			want:   map[string]ending{"w!a": {2, CompletedSuccessfully, 0}},
		},
		{
			name:   "parallel_homogeneous_total is split over any number of hosts",
			speeds: []float64{1e9, 1e9, 1e9, 1e9},
			jobs: `{"id": "two", "subtime": 0, "res": 2, "profile": "pht4G"},
			       {"id": "four", "subtime": 10, "res": 2, "profile": "pht4G"}`,
			allocs: map[string][]int{"w!two": {0, 1}, "w!four": {0, 1, 2, 3}},
			want: map[string]ending{
				"w!two":  {2, CompletedSuccessfully, 0},
				"w!four": {11, CompletedSuccessfully, 0},
			},
		},
		{
			name:   "parallel takes its largest amount",
			speeds: []float64{1e9, 1e9},
			jobs:   `{"id": 1, "subtime": 0, "res": 2, "profile": "par"}`,
			want:   map[string]ending{"w!1": {3, CompletedSuccessfully, 0}},
		},
		{
			name:   "composed runs its steps in order, repeated",
			speeds: []float64{1e9},
			jobs:   `{"id": 1, "subtime": 1, "res": 1, "profile": "seq"}`,
			want:   map[string]ending{"w!1": {13, CompletedSuccessfully, 0}},
		},
		{
			name:   "nested composed",
			speeds: []float64{1e9},
			jobs:   `{"id": 1, "subtime": 0, "res": 1, "profile": "nested"}`,
			want:   map[string]ending{"w!1": {36, CompletedSuccessfully, 0}},
		},
		{
			name:   "a failing step ends a composed job",
			speeds: []float64{1e9},
			jobs:   `{"id": 1, "subtime": 0, "res": 1, "profile": "seqfail"}`,
			want:   map[string]ending{"w!1": {7, CompletedFailed, 3}},
		},
		{
			name:   "nothing to compute ends at once",
			speeds: []float64{1e9},
			jobs:   `{"id": 1, "subtime": 4, "res": 1, "profile": "zero"}`,
			want:   map[string]ending{"w!1": {4, CompletedSuccessfully, 0}},
		},
		{
			name:   "walltime cuts a delay",
			speeds: []float64{1e9},
			jobs:   `{"id": 1, "subtime": 0, "res": 1, "profile": "d10", "walltime": 4}`,
			want:   map[string]ending{"w!1": {4, CompletedWalltimeReached, -1}},
		},
		{
			name:   "a delay ending exactly at the walltime reaches it",
			speeds: []float64{1e9},
			jobs:   `{"id": 1, "subtime": 0, "res": 1, "profile": "d10", "walltime": 10}`,
			want:   map[string]ending{"w!1": {10, CompletedWalltimeReached, -1}},
		},
		{
			name:   "a walltime of -1 is none",
			speeds: []float64{1e9},
			jobs:   `{"id": 1, "subtime": 0, "res": 1, "profile": "d10", "walltime": -1}`,
			want:   map[string]ending{"w!1": {10, CompletedSuccessfully, 0}},
		},
		{
			name:   "walltime cuts a computation inside a composed job",
			speeds: []float64{1e9},
			jobs:   `{"id": 1, "subtime": 0, "res": 1, "profile": "seq", "walltime": 5.5}`,
			want:   map[string]ending{"w!1": {5.5, CompletedWalltimeReached, -1}},
		},
		{
			name:   "a failing profile",
			speeds: []float64{1e9},
			jobs:   `{"id": 1, "subtime": 0, "res": 1, "profile": "d2fail"}`,
			want:   map[string]ending{"w!1": {2, CompletedFailed, 3}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := mustWorkload(t, "w", `{"nb_res": 4, "profiles": `+profiles+`, "jobs": [`+tc.jobs+`]}`)
			p := hostsPlatform(tc.speeds)
			all := make([]int, len(tc.speeds))
			for i := range all {
				all[i] = i
			}
			e := mustNew(t, p, []*Workload{w}, Options{})
			msgs, err := drive(e, placer(tc.allocs, all))
			if err != nil {
				t.Fatalf("drive: %v\n%s", err, trace(msgs))
			}
			got := completions(msgs)
			for id, want := range tc.want {
				c, ok := got[id]
				if !ok {
					t.Fatalf("job %s never completed:\n%s", id, trace(msgs))
				}
				if math.Abs(c.Timestamp-want.at) > 1e-9 || c.State != want.state || c.ReturnCode != want.ret {
					t.Errorf("job %s: got %s (ret %d) at %g, want %s (ret %d) at %g",
						id, c.State, c.ReturnCode, c.Timestamp, want.state, want.ret, want.at)
				}
			}
		})
	}
}

func TestComputeSharing(t *testing.T) {
	profiles := `{"c1": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}, "c3": {"type": "parallel_homogeneous", "cpu": 3e9, "com": 0},
		"d4": {"type": "delay", "delay": 4}, "c2x2": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}`
	tests := []struct {
		name   string
		cores  int
		model  SharingModel
		speeds []float64
		jobs   string
		allocs map[string][]int
		want   map[string]float64
	}{
		{
			name: "a core per job: full speed", cores: 2, model: SharePerCore, speeds: []float64{1e9},
			jobs: `{"id": 1, "subtime": 0, "res": 1, "profile": "c1"}, {"id": 2, "subtime": 0, "res": 1, "profile": "c1"}`,
			want: map[string]float64{"w!1": 1, "w!2": 1},
		},
		{
			name: "more jobs than cores share the cores", cores: 2, model: SharePerCore, speeds: []float64{1e9},
			jobs: `{"id": 1, "subtime": 0, "res": 1, "profile": "c1"}, {"id": 2, "subtime": 0, "res": 1, "profile": "c1"},
			       {"id": 3, "subtime": 0, "res": 1, "profile": "c1"}`,
			want: map[string]float64{"w!1": 1.5, "w!2": 1.5, "w!3": 1.5},
		},
		{
			name: "the whole-host model ignores cores", cores: 2, model: ShareWholeHost, speeds: []float64{1e9},
			jobs: `{"id": 1, "subtime": 0, "res": 1, "profile": "c1"}, {"id": 2, "subtime": 0, "res": 1, "profile": "c1"}`,
			want: map[string]float64{"w!1": 2, "w!2": 2},
		},
		{
			// L07's fair bottleneck: equal flops per second, so 1e9 flops
			// end at 2 s, and the last 2e9 of 3e9 take 2 s alone (as
			// real Batsim: testdata/batsim-4.2.1/sharing).
			name: "jobs get equal flops per second", cores: 1, model: SharePerCore, speeds: []float64{1e9},
			jobs: `{"id": 1, "subtime": 0, "res": 1, "profile": "c1"}, {"id": 3, "subtime": 0, "res": 1, "profile": "c3"}`,
			want: map[string]float64{"w!1": 2, "w!3": 4},
		},
		{
			name: "a job that ends frees the host for the others", cores: 1, model: SharePerCore, speeds: []float64{1e9},
			jobs: `{"id": 1, "subtime": 0, "res": 1, "profile": "c1"}, {"id": 2, "subtime": 1, "res": 1, "profile": "c1"}`,
			want: map[string]float64{"w!1": 1, "w!2": 2},
		},
		{
			name: "a late job slows an earlier one", cores: 1, model: SharePerCore, speeds: []float64{1e9},
			jobs: `{"id": 1, "subtime": 0, "res": 1, "profile": "c3"}, {"id": 2, "subtime": 1, "res": 1, "profile": "c1"}`,
			// Job 1 runs alone for 1 s (1e9 of 3e9 flops), then both get
			// 5e8 flops per second: job 2 ends at 3, job 1 has 1e9 left
			// then, 1 s alone (ends at 4).
			want: map[string]float64{"w!1": 4, "w!2": 3},
		},
		{
			name: "delays do not use the host", cores: 1, model: SharePerCore, speeds: []float64{1e9},
			jobs: `{"id": 1, "subtime": 0, "res": 1, "profile": "d4"}, {"id": 2, "subtime": 0, "res": 1, "profile": "c1"}`,
			want: map[string]float64{"w!1": 4, "w!2": 1},
		},
		{
			name: "a parallel job goes at the pace of its most loaded host", cores: 1, model: SharePerCore, speeds: []float64{1e9, 1e9},
			jobs:   `{"id": "p", "subtime": 0, "res": 2, "profile": "c2x2"}, {"id": "s", "subtime": 0, "res": 1, "profile": "c1"}`,
			allocs: map[string][]int{"w!p": {0, 1}, "w!s": {1}},
			want:   map[string]float64{"w!p": 2, "w!s": 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := mustWorkload(t, "w", `{"nb_res": 2, "profiles": `+profiles+`, "jobs": [`+tc.jobs+`]}`)
			cores := make([]int, len(tc.speeds))
			for i := range cores {
				cores[i] = tc.cores
			}
			e := mustNew(t, hostsPlatform(tc.speeds, cores...), []*Workload{w}, Options{ComputeSharing: true, Sharing: tc.model})
			msgs, err := drive(e, placer(tc.allocs, []int{0}))
			if err != nil {
				t.Fatalf("drive: %v\n%s", err, trace(msgs))
			}
			got := completions(msgs)
			for id, at := range tc.want {
				if c := got[id]; math.Abs(c.Timestamp-at) > 1e-6 || c.State != CompletedSuccessfully {
					t.Errorf("job %s: got %s at %g, want %s at %g\n%s", id, c.State, c.Timestamp, CompletedSuccessfully, at, trace(msgs))
				}
			}
		})
	}
}

func TestTrace(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 2, "profiles": {"d10": {"type": "delay", "delay": 10}, "d1": {"type": "delay", "delay": 1}},
		"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d10"}, {"id": 2, "subtime": 2, "res": 1, "profile": "d1"},
		         {"id": 3, "subtime": 2, "res": 1, "profile": "d10"}, {"id": 4, "subtime": 20, "res": 1, "profile": "d1"}]}`)
	tests := []struct {
		name   string
		decide func(i int, msg Message) (float64, []Decision)
		want   string
	}{
		{
			name: "decisions later than now: what happens meanwhile comes with its own timestamp",
			decide: func(i int, msg Message) (float64, []Decision) {
				switch i {
				case 1: // t=0: job 1 submitted; decide at 3 (job 2 and 3 come at 2)
					return 3, []Decision{ExecuteJob{Timestamp: 3, JobID: "w!1", Alloc: []int{0}}}
				case 2: // t=3: jobs 2 and 3 submitted at 2
					return 3, []Decision{
						ExecuteJob{Timestamp: 3, JobID: "w!2", Alloc: []int{1}},
						CallMeLater{Timestamp: 3, When: 13},
					}
				case 4: // t=13: job 1 completed, requested call
					return 13, []Decision{ExecuteJob{Timestamp: 13, JobID: "w!3", Alloc: []int{0}}}
				case 5: // t=20: job 4 submitted
					return 20, []Decision{ExecuteJob{Timestamp: 20, JobID: "w!4", Alloc: []int{1}}}
				}
				return msg.Now, nil
			},
			want: `0: SIMULATION_BEGINS
0: JOB_SUBMITTED w!1
3: JOB_SUBMITTED w!2 @2, JOB_SUBMITTED w!3 @2
4: JOB_COMPLETED w!2 COMPLETED_SUCCESSFULLY 0 [1]
13: JOB_COMPLETED w!1 COMPLETED_SUCCESSFULLY 0 [0], REQUESTED_CALL
20: JOB_SUBMITTED w!4, NOTIFY no_more_static_job_to_submit
21: JOB_COMPLETED w!4 COMPLETED_SUCCESSFULLY 0 [1]
23: JOB_COMPLETED w!3 COMPLETED_SUCCESSFULLY 0 [0]
23: SIMULATION_ENDS
`,
		},
		{
			// Job 2 ends at 3, while the decision process decides until 4:
			// its kill at 4 is acknowledged without a JOB_COMPLETED of its
			// own. (Once its JOB_COMPLETED has been sent, naming it is an
			// error: see TestDecisionErrors.)
			name: "kill: JOB_COMPLETED then JOB_KILLED; a job finished meanwhile is acknowledged; repeated kills are ignored",
			decide: func(i int, msg Message) (float64, []Decision) {
				switch i {
				case 1:
					return 0, []Decision{ExecuteJob{Timestamp: 0, JobID: "w!1", Alloc: []int{0}}}
				case 2:
					return 4, []Decision{
						ExecuteJob{Timestamp: 2, JobID: "w!2", Alloc: []int{1}},
						RejectJob{Timestamp: 2, JobID: "w!3"},
						KillJob{Timestamp: 4, JobIDs: []string{"w!1", "w!2", "w!1"}},
						KillJob{Timestamp: 4, JobIDs: []string{"w!2"}},
						CallMeLater{Timestamp: 4, When: 6},
					}
				case 4:
					return 20, []Decision{RejectJob{Timestamp: 20, JobID: "w!4"}}
				}
				return msg.Now, nil
			},
			want: `0: SIMULATION_BEGINS
0: JOB_SUBMITTED w!1
2: JOB_SUBMITTED w!2, JOB_SUBMITTED w!3
4: JOB_COMPLETED w!2 COMPLETED_SUCCESSFULLY 0 [1] @3, JOB_COMPLETED w!1 COMPLETED_KILLED -1 [0], JOB_KILLED w!1 w!2
6: REQUESTED_CALL
20: JOB_SUBMITTED w!4, NOTIFY no_more_static_job_to_submit
20: SIMULATION_ENDS
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := mustNew(t, hostsPlatform([]float64{1e9, 1e9}), []*Workload{w}, Options{})
			i := 0
			msgs, err := drive(e, func(msg Message) (float64, []Decision) {
				now, ds := tc.decide(i, msg)
				i++
				return now, ds
			})
			if err != nil {
				t.Fatalf("drive: %v\n%s", err, trace(msgs))
			}
			if got := trace(msgs); got != tc.want {
				t.Errorf("got trace\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestKillProgress(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 1, "profiles": {"d4": {"type": "delay", "delay": 4}, "c": {"type": "parallel_homogeneous", "cpu": 4e9, "com": 0},
		"seq": {"type": "composed", "repeat": 2, "seq": ["d4", "c"]}},
		"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "seq"}]}`)
	e := mustNew(t, hostsPlatform([]float64{1e9}), []*Workload{w}, Options{})
	var killed JobKilled
	_, err := drive(e, func(msg Message) (float64, []Decision) {
		for _, ev := range msg.Events {
			switch ev := ev.(type) {
			case JobSubmitted:
				// d4 (0-4), c (4-8), d4 (8-12), c (12-16): kill at 13, 1/4 into the second c.
				return 13, []Decision{ExecuteJob{JobID: ev.Job.ID, Alloc: []int{0}}, KillJob{Timestamp: 13, JobIDs: []string{ev.Job.ID}}}
			case JobKilled:
				killed = ev
			}
		}
		return msg.Now, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(killed.Progress)
	want := `{"w!1":{"Profile":"seq","Progress":0,"CurrentTaskIndex":3,"CurrentTask":{"Profile":"c","Progress":0.25,"CurrentTaskIndex":0,"CurrentTask":null}}}`
	if string(got) != want {
		t.Errorf("got progress %s, want %s", got, want)
	}
}

func TestDecisionErrors(t *testing.T) {
	profiles := `{"d": {"type": "delay", "delay": 10}, "par": {"type": "parallel", "cpu": [1, 1, 1], "com": [0, 0, 0, 0, 0, 0, 0, 0, 0]},
		"seqpar": {"type": "composed", "seq": ["par"]}}`
	jobs := `{"id": 1, "subtime": 0, "res": 1, "profile": "d"}, {"id": 2, "subtime": 0, "res": 2, "profile": "d"},
		{"id": 3, "subtime": 100, "res": 1, "profile": "d"}, {"id": 4, "subtime": 0, "res": 2, "profile": "seqpar"}`
	storage := hostsPlatform([]float64{1e9, 1e9})
	storage.Storage = []Resource{{ID: 2, Name: "disk", Speed: 1, Cores: 1}}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name      string
		sharing   bool
		dynamic   bool
		decisions []Decision
		now       float64
		// want is in the error; field is the DecisionError's Field (the
		// failing decision is the last one).
		want, field string
	}{
		{name: "unknown job", decisions: []Decision{ExecuteJob{JobID: "w!9", Alloc: []int{0}}}, want: `job "w!9" does not exist`, field: "job_id"},
		{name: "job not submitted yet", decisions: []Decision{ExecuteJob{JobID: "w!3", Alloc: []int{0}}}, want: `job "w!3" is not submitted yet`, field: "job_id"},
		{name: "job started twice", decisions: []Decision{ExecuteJob{JobID: "w!1", Alloc: []int{0}}, ExecuteJob{JobID: "w!1", Alloc: []int{1}}},
			want: `job "w!1" is running: only a job waiting to start can be executed`, field: "job_id"},
		{name: "missing resource", decisions: []Decision{ExecuteJob{JobID: "w!1", Alloc: []int{7}}}, want: "resource 7 does not exist", field: "alloc"},
		{name: "empty allocation", decisions: []Decision{ExecuteJob{JobID: "w!1"}}, want: "empty allocation", field: "alloc"},
		{name: "sharing on: another job of a busy host is fine, a job twice is not", sharing: true,
			decisions: []Decision{ExecuteJob{JobID: "w!1", Alloc: []int{0}}, ExecuteJob{JobID: "w!2", Alloc: []int{0, 1}}, ExecuteJob{JobID: "w!2", Alloc: []int{0, 1}}},
			want:      `job "w!2" is running`, field: "job_id"},
		{name: "storage resource", decisions: []Decision{ExecuteJob{JobID: "w!1", Alloc: []int{2}}}, want: "resource 2 (disk) is a storage resource", field: "alloc"},
		{name: "wrong size", decisions: []Decision{ExecuteJob{JobID: "w!2", Alloc: []int{0}}}, want: `job "w!2" asks for 2 resources but was given 1 (0)`, field: "alloc"},
		{name: "busy host without sharing", decisions: []Decision{ExecuteJob{JobID: "w!1", Alloc: []int{1}}, ExecuteJob{JobID: "w!2", Alloc: []int{0, 1}}},
			want: `job "w!2": resource 1 (node1) is running job "w!1" and compute sharing is off (Batsim's --enable-compute-sharing)`, field: "alloc"},
		{name: "parallel profile of another size", decisions: []Decision{ExecuteJob{JobID: "w!4", Alloc: []int{0, 1}}},
			want: `job "w!4": profile "par" computes on 3 executors but the allocation has 2`, field: "alloc"},
		{name: "reject of a running job", decisions: []Decision{ExecuteJob{JobID: "w!1", Alloc: []int{0}}, RejectJob{JobID: "w!1"}},
			want: `job "w!1" is running: only a job waiting to start can be rejected`, field: "job_id"},
		{name: "reject of an unknown job", decisions: []Decision{RejectJob{JobID: "w!9"}}, want: `job "w!9" does not exist`, field: "job_id"},
		{name: "bad mapping", decisions: []Decision{ExecuteJob{JobID: "w!4", Alloc: []int{0, 1}, Mapping: []int{0, 2}}}, want: "executor 1 is mapped to the 2-th resource", field: "mapping"},
		{name: "kill of a waiting job", decisions: []Decision{KillJob{JobIDs: []string{"w!1"}}}, want: `job "w!1" is waiting to start: only a running or finished job can be killed`, field: "job_ids[0]"},
		{name: "kill of an unknown job", decisions: []Decision{ExecuteJob{JobID: "w!1", Alloc: []int{0}}, KillJob{JobIDs: []string{"w!1", "w!9"}}},
			want: `job "w!9" does not exist`, field: "job_ids[1]"},
		{name: "kill of a rejected job", decisions: []Decision{RejectJob{JobID: "w!1"}, KillJob{JobIDs: []string{"w!1"}}},
			want: `job "w!1" is rejected: only a running or finished job can be killed`, field: "job_ids[0]"},
		{name: "call in the past", now: 5, decisions: []Decision{CallMeLater{Timestamp: 5, When: 5}}, want: "asked to be called at 5, which is not after now (5)", field: "timestamp"},
		{name: "decision after now", now: 1, decisions: []Decision{CallMeLater{Timestamp: 2, When: 5}}, want: "is stamped 2, after the reply's now (1)"},
		{name: "reply before the request", now: -1, want: "the reply's now (-1) is before the request's (0)"},
		{name: "dynamic jobs disabled", decisions: []Decision{RegisterProfile{Workload: "w", Name: "x", Profile: raw(`{"type":"delay","delay":1}`)}},
			want: "dynamic jobs are disabled"},
		{name: "registered job without subtime", dynamic: true,
			decisions: []Decision{RegisterJob{JobID: "w!x", Job: raw(`{"id": "x", "res": 1, "profile": "d"}`)}}, want: "no subtime field", field: "job.subtime"},
		{name: "registered job of an unknown profile", dynamic: true,
			decisions: []Decision{RegisterJob{JobID: "w!x", Job: raw(`{"id": "x", "subtime": 0, "res": 1, "profile": "nope"}`)}}, want: `profile "nope" does not exist`, field: "job.profile"},
		{name: "registered job of another size than its parallel profile", dynamic: true,
			decisions: []Decision{RegisterJob{JobID: "w!x", Job: raw(`{"id": "x", "subtime": 0, "res": 2, "profile": "par"}`)}},
			want:      `asks for 2 resources but its parallel profile "par" has 3 executors`, field: "job.res"},
		{name: "registered job in an unknown workload", dynamic: true,
			decisions: []Decision{RegisterJob{JobID: "dyn!x", Job: raw(`{"id": "x", "subtime": 0, "res": 1, "profile": "d"}`)}}, want: `workload "dyn" does not exist`, field: "job_id"},
		{name: "registered job twice", dynamic: true,
			decisions: []Decision{RegisterJob{JobID: "w!1", Job: raw(`{"id": "1", "subtime": 0, "res": 1, "profile": "d"}`)}}, want: `job "w!1" already exists`, field: "job_id"},
		{name: "registered profile without delay", dynamic: true,
			decisions: []Decision{RegisterProfile{Workload: "dyn", Name: "p", Profile: raw(`{"type": "delay"}`)}}, want: "no delay field", field: "profile.delay"},
		{name: "registered profile twice", dynamic: true,
			decisions: []Decision{RegisterProfile{Workload: "w", Name: "d", Profile: raw(`{"type": "delay", "delay": 1}`)}}, want: `workload "w" already has a profile "d"`, field: "profile_name"},
		{name: "registered composed profile of unknown steps", dynamic: true,
			decisions: []Decision{RegisterProfile{Workload: "dyn", Name: "c", Profile: raw(`{"type": "composed", "seq": ["nope"]}`)}}, want: `step "nope" does not exist`, field: "profile.seq"},
		{name: "metadata of an unknown job", decisions: []Decision{SetJobMetadata{JobID: "x!1"}}, want: `job "x!1" does not exist`, field: "job_id"},
		{name: "unknown notify", decisions: []Decision{Notify{Kind: "nope"}}, want: `unknown NOTIFY type "nope"`, field: "type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := mustWorkload(t, "w", `{"nb_res": 2, "profiles": `+profiles+`, "jobs": [`+jobs+`]}`)
			e := mustNew(t, storage, []*Workload{w}, Options{ComputeSharing: tc.sharing, DynamicJobs: tc.dynamic})
			if _, err := e.Next(); err != nil { // SIMULATION_BEGINS
				t.Fatal(err)
			}
			if err := e.Apply(0, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Next(); err != nil { // the submissions at 0
				t.Fatal(err)
			}
			err := e.Apply(tc.now, tc.decisions)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
			t.Logf("%v", err)
			var de *DecisionError
			switch {
			case len(tc.decisions) == 0:
				if errors.As(err, &de) {
					t.Errorf("got a DecisionError %+v for a reply without decisions", de)
				}
			case !errors.As(err, &de):
				t.Errorf("got %T, want a *DecisionError", err)
			default:
				last := tc.decisions[len(tc.decisions)-1]
				if de.Index != len(tc.decisions)-1 || de.Type != last.Type() || de.Field != tc.field {
					t.Errorf("got event %d (%s) field %q, want event %d (%s) field %q",
						de.Index, de.Type, de.Field, len(tc.decisions)-1, last.Type(), tc.field)
				}
				wantText := fmt.Sprintf("event %d (%s)", len(tc.decisions)-1, last.Type())
				if tc.field != "" {
					wantText += fmt.Sprintf(": field %q", tc.field)
				}
				if !strings.Contains(err.Error(), wantText) {
					t.Errorf("got error %q, want it to name %s", err, wantText)
				}
			}
			if _, again := e.Next(); again == nil {
				t.Errorf("Next after an error: got no error, want the error again")
			}
		})
	}
}

func TestEndOfSimulation(t *testing.T) {
	delay := `{"d": {"type": "delay", "delay": 10}}`
	tests := []struct {
		name    string
		jobs    string
		opts    Options
		decide  func(i int, msg Message) (float64, []Decision)
		want    string
		wantErr string
	}{
		{
			name: "a workload without jobs ends at once",
			want: "0: SIMULATION_BEGINS\n0: NOTIFY no_more_static_job_to_submit\n0: SIMULATION_ENDS\n",
		},
		{
			name: "a pending call keeps the simulation going",
			decide: func(i int, msg Message) (float64, []Decision) {
				if i == 1 {
					return 0, []Decision{CallMeLater{When: 50}}
				}
				return msg.Now, nil
			},
			want: "0: SIMULATION_BEGINS\n0: NOTIFY no_more_static_job_to_submit\n50: REQUESTED_CALL\n50: SIMULATION_ENDS\n",
		},
		{
			name:    "jobs left waiting: stuck",
			jobs:    `{"id": 1, "subtime": 5, "res": 1, "profile": "d"}`,
			want:    "0: SIMULATION_BEGINS\n5: JOB_SUBMITTED w!1, NOTIFY no_more_static_job_to_submit\n",
			wantErr: "stuck at t=5: 1 job(s) wait for EXECUTE_JOB or REJECT_JOB",
		},
		{
			name: "dynamic jobs: the end waits for registration_finished",
			opts: Options{DynamicJobs: true, AcknowledgeDynamicJobs: true},
			decide: func(i int, msg Message) (float64, []Decision) {
				switch i {
				case 1:
					return 1, []Decision{
						RegisterProfile{Timestamp: 1, Workload: "dyn", Name: "p", Profile: json.RawMessage(`{"type": "delay", "delay": 3}`)},
						RegisterJob{Timestamp: 1, JobID: "dyn!a", Job: json.RawMessage(`{"id": "a", "subtime": 1, "res": 1, "profile": "p"}`)},
						CallMeLater{Timestamp: 1, When: 2},
					}
				case 2:
					return 1, []Decision{ExecuteJob{Timestamp: 1, JobID: "dyn!a", Alloc: []int{0}}}
				case 4:
					return 7, []Decision{Notify{Timestamp: 7, Kind: RegistrationFinished}}
				}
				return msg.Now, nil
			},
			want: "0: SIMULATION_BEGINS\n0: NOTIFY no_more_static_job_to_submit\n1: JOB_SUBMITTED dyn!a\n2: REQUESTED_CALL\n4: JOB_COMPLETED dyn!a COMPLETED_SUCCESSFULLY 0 [0]\n7: SIMULATION_ENDS\n",
		},
		{
			name:    "dynamic jobs without registration_finished: stuck",
			opts:    Options{DynamicJobs: true},
			want:    "0: SIMULATION_BEGINS\n0: NOTIFY no_more_static_job_to_submit\n",
			wantErr: "registration_finished was not received",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := mustWorkload(t, "w", `{"nb_res": 1, "profiles": `+delay+`, "jobs": [`+tc.jobs+`]}`)
			e := mustNew(t, hostsPlatform([]float64{1e9}), []*Workload{w}, tc.opts)
			i := 0
			msgs, err := drive(e, func(msg Message) (float64, []Decision) {
				defer func() { i++ }()
				if tc.decide == nil {
					return msg.Now, nil
				}
				return tc.decide(i, msg)
			})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("got error %v, want %q", err, tc.wantErr)
			}
			if got := trace(msgs); got != tc.want {
				t.Errorf("got trace\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestCycleMisuse(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 1, "profiles": {}, "jobs": []}`)
	e := mustNew(t, hostsPlatform([]float64{1e9}), []*Workload{w}, Options{})
	if err := e.Apply(0, nil); err == nil {
		t.Error("Apply before Next: got no error")
	}
	if _, err := e.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Next(); err == nil {
		t.Error("Next twice: got no error")
	}
}

func TestMetadataAndRejectInJobsOutput(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 1, "profiles": {"d": {"type": "delay", "delay": 2}},
		"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}, {"id": 2, "subtime": 0, "res": 1, "profile": "d"}]}`)
	var out bytes.Buffer
	e := mustNew(t, hostsPlatform([]float64{1e9}), []*Workload{w}, Options{JobsOutput: &out})
	_, err := drive(e, func(msg Message) (float64, []Decision) {
		if _, ok := msg.Events[0].(JobSubmitted); ok {
			return 0, []Decision{
				SetJobMetadata{JobID: "w!1", Metadata: "k=v"},
				ExecuteJob{JobID: "w!1", Alloc: []int{0}},
				RejectJob{JobID: "w!2"},
			}
		}
		return msg.Now, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := jobsHeader +
		"2,w,d,0.000000,1,-1.000000,0,REJECTED,,,,,,,,,\"\"\n" +
		"1,w,d,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,2.000000,2.000000,0.000000,2.000000,1.000000,0,-1.000000,\"k=v\"\n"
	if out.String() != want {
		t.Errorf("got jobs output\n%s\nwant\n%s", out.String(), want)
	}
}

func TestMapping(t *testing.T) {
	tests := []struct {
		name    string
		cores   int
		mapping []int
		want    float64
	}{
		{"two executors on one single-core host share it", 1, []int{0, 0}, 2},
		{"two executors on one two-core host use a core each", 2, []int{0, 0}, 1},
		{"one executor per host", 1, []int{0, 1}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := mustWorkload(t, "w", `{"nb_res": 2, "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}},
				"jobs": [{"id": 1, "subtime": 0, "res": 2, "profile": "c"}]}`)
			e := mustNew(t, hostsPlatform([]float64{1e9, 1e9}, tc.cores, tc.cores), []*Workload{w}, Options{})
			msgs, err := drive(e, func(msg Message) (float64, []Decision) {
				if _, ok := msg.Events[0].(JobSubmitted); ok {
					return msg.Now, []Decision{ExecuteJob{JobID: "w!1", Alloc: []int{1, 0}, Mapping: tc.mapping}}
				}
				return msg.Now, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			c := completions(msgs)["w!1"]
			wantAlloc := "0-1"
			if got := formatIDs(c.Alloc); c.Timestamp != tc.want || got != wantAlloc {
				t.Errorf("got completion at %g on %s, want at %g on %s", c.Timestamp, got, tc.want, wantAlloc)
			}
		})
	}
}

func TestDynamicJobsWithoutAcknowledgement(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 1, "profiles": {"d": {"type": "delay", "delay": 2}}, "jobs": []}`)
	e := mustNew(t, hostsPlatform([]float64{1e9}), []*Workload{w}, Options{DynamicJobs: true})
	i := 0
	msgs, err := drive(e, func(msg Message) (float64, []Decision) {
		defer func() { i++ }()
		switch i {
		case 1:
			return 1, []Decision{
				RegisterJob{Timestamp: 1, JobID: "w!x", Job: json.RawMessage(`{"id": "x", "subtime": 1, "res": 1, "profile": "d"}`)},
				ExecuteJob{Timestamp: 1, JobID: "w!x", Alloc: []int{0}},
				Notify{Timestamp: 1, Kind: RegistrationFinished},
			}
		case 2:
			if err := (SetJobMetadata{JobID: "w!x", Metadata: "late"}).applyTo(e); err == nil || !strings.Contains(err.Error(), "drops a job once the message after its end is sent") {
				t.Errorf("metadata of a job reported finished: got %v", err)
			}
		}
		return msg.Now, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "0: SIMULATION_BEGINS\n0: NOTIFY no_more_static_job_to_submit\n3: JOB_COMPLETED w!x COMPLETED_SUCCESSFULLY 0 [0]\n3: SIMULATION_ENDS\n"
	if got := trace(msgs); got != want {
		t.Errorf("got trace\n%s\nwant\n%s", got, want)
	}
	if err := (RegisterJob{JobID: "w!y"}).applyTo(e); err == nil || !strings.Contains(err.Error(), "registration_finished was already received") {
		t.Errorf("registration after registration_finished: got %v", err)
	}
}

func TestKillReturnCodes(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 1, "profiles": {
		"d10": {"type": "delay", "delay": 10}, "d2": {"type": "delay", "delay": 2},
		"c": {"type": "parallel_homogeneous", "cpu": 10e9, "com": 0},
		"seq": {"type": "composed", "seq": ["d2", "c"]}},
		"jobs": [{"id": "delay", "subtime": 0, "res": 1, "profile": "d10"},
		         {"id": "compute", "subtime": 0, "res": 1, "profile": "c"},
		         {"id": "seq-in-delay", "subtime": 0, "res": 1, "profile": "seq"},
		         {"id": "seq-in-compute", "subtime": 0, "res": 1, "profile": "seq"}]}`)
	var out bytes.Buffer
	e := mustNew(t, hostsPlatform([]float64{1e9, 1e9, 1e9, 1e9}), []*Workload{w}, Options{JobsOutput: &out})
	var killed JobKilled
	msgs, err := drive(e, func(msg Message) (float64, []Decision) {
		switch msg.Now {
		case 0:
			if len(msg.Events) > 0 && msg.Events[0].Type() == "SIMULATION_BEGINS" {
				return 0, nil
			}
			return 3, []Decision{
				ExecuteJob{Timestamp: 0, JobID: "w!delay", Alloc: []int{0}},
				ExecuteJob{Timestamp: 0, JobID: "w!compute", Alloc: []int{1}},
				ExecuteJob{Timestamp: 0, JobID: "w!seq-in-delay", Alloc: []int{2}},
				ExecuteJob{Timestamp: 0, JobID: "w!seq-in-compute", Alloc: []int{3}},
				KillJob{Timestamp: 1, JobIDs: []string{"w!delay", "w!compute", "w!seq-in-delay"}},
				KillJob{Timestamp: 3, JobIDs: []string{"w!seq-in-compute", "w!delay"}},
			}
		}
		for _, ev := range msg.Events {
			if k, ok := ev.(JobKilled); ok && k.Timestamp == 3 {
				killed = k
			}
		}
		return msg.Now, nil
	})
	if err != nil {
		t.Fatalf("drive: %v\n%s", err, trace(msgs))
	}
	want := `0: SIMULATION_BEGINS
0: JOB_SUBMITTED w!compute, JOB_SUBMITTED w!delay, JOB_SUBMITTED w!seq-in-compute, JOB_SUBMITTED w!seq-in-delay, NOTIFY no_more_static_job_to_submit
3: JOB_COMPLETED w!delay COMPLETED_KILLED -1 [0] @1, JOB_COMPLETED w!compute COMPLETED_KILLED -2 [1] @1, JOB_COMPLETED w!seq-in-delay COMPLETED_KILLED -1 [2] @1, JOB_KILLED w!delay w!compute w!seq-in-delay @1, JOB_COMPLETED w!seq-in-compute COMPLETED_KILLED -2 [3], JOB_KILLED w!seq-in-compute
3: SIMULATION_ENDS
`
	if got := trace(msgs); got != want {
		t.Errorf("got trace\n%s\nwant (a kill during a computation returns -2, during a delay -1; a repeated kill is ignored)\n%s", got, want)
	}
	if p := killed.Progress["w!seq-in-compute"]; p == nil || p.Profile != "seq" || p.CurrentTaskIndex != 1 ||
		p.CurrentTask == nil || p.CurrentTask.Profile != "c" || math.Abs(p.CurrentTask.Progress-0.1) > 1e-9 {
		t.Errorf("progress of w!seq-in-compute: got %+v, want seq at task 1, c 10%% done", p)
	}
	wantRows := jobsHeader +
		"delay,w,d10,0.000000,1,-1.000000,0,COMPLETED_KILLED,0.000000,1.000000,1.000000,0.000000,1.000000,1.000000,0,-1.000000,\"\"\n" +
		"compute,w,c,0.000000,1,-1.000000,0,COMPLETED_KILLED,0.000000,1.000000,1.000000,0.000000,1.000000,1.000000,1,-1.000000,\"\"\n" +
		"seq-in-delay,w,seq,0.000000,1,-1.000000,0,COMPLETED_KILLED,0.000000,1.000000,1.000000,0.000000,1.000000,1.000000,2,-1.000000,\"\"\n" +
		"seq-in-compute,w,seq,0.000000,1,-1.000000,0,COMPLETED_KILLED,0.000000,3.000000,3.000000,0.000000,3.000000,1.000000,3,-1.000000,\"\"\n"
	if got := out.String(); got != wantRows {
		t.Errorf("got jobs output\n%s\nwant\n%s", got, wantRows)
	}
}

func TestCallMeLaterWaitsAtLeast10Microseconds(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 1, "profiles": {}, "jobs": []}`)
	e := mustNew(t, hostsPlatform([]float64{1e9}), []*Workload{w}, Options{})
	i := 0
	msgs, err := drive(e, func(msg Message) (float64, []Decision) {
		defer func() { i++ }()
		switch i {
		case 1: // t=0: no_more_static_job_to_submit
			return 0, []Decision{CallMeLater{When: 1e-6}, CallMeLater{When: 0.5}}
		}
		return msg.Now, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "0: SIMULATION_BEGINS\n0: NOTIFY no_more_static_job_to_submit\n1e-05: REQUESTED_CALL\n0.5: REQUESTED_CALL\n0.5: SIMULATION_ENDS\n"
	if got := trace(msgs); got != want {
		t.Errorf("got trace\n%s\nwant\n%s", got, want)
	}
}

// TestNoWorkloadNoStaticNotification checks that without any workload (only
// dynamic jobs) no no_more_static_job_to_submit is sent: Batsim sends it when
// the last of its workloads' submitters is done, so never without one.
func TestNoWorkloadNoStaticNotification(t *testing.T) {
	e := mustNew(t, hostsPlatform([]float64{1e9}), nil, Options{DynamicJobs: true})
	i := 0
	msgs, err := drive(e, func(msg Message) (float64, []Decision) {
		defer func() { i++ }()
		if i == 0 {
			return 0, []Decision{
				RegisterProfile{Workload: "dyn", Name: "d", Profile: json.RawMessage(`{"type": "delay", "delay": 2}`)},
				RegisterJob{JobID: "dyn!1", Job: json.RawMessage(`{"id": 1, "subtime": 0, "res": 1, "profile": "d"}`)},
				ExecuteJob{JobID: "dyn!1", Alloc: []int{0}},
				Notify{Kind: RegistrationFinished},
			}
		}
		return msg.Now, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "0: SIMULATION_BEGINS\n2: JOB_COMPLETED dyn!1 COMPLETED_SUCCESSFULLY 0 [0]\n2: SIMULATION_ENDS\n"
	if got := trace(msgs); got != want {
		t.Errorf("got trace\n%s\nwant\n%s", got, want)
	}
}

// TestJobsReportedEndedAreForgotten checks that a job whose end has been
// reported can no longer be named, as Batsim 4.2.1 drops it from memory
// once the message after its end is sent ("Cannot get job ...: it does not
// exist"), while a job that ended during the decision, not yet reported, can
// still be killed (and is acknowledged) or given metadata (without effect).
func TestJobsReportedEndedAreForgotten(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 1, "profiles": {"d1": {"type": "delay", "delay": 1}},
		"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d1"}, {"id": 2, "subtime": 0, "res": 1, "profile": "d1"},
		         {"id": 3, "subtime": 10, "res": 1, "profile": "d1"}]}`)
	for _, tc := range []struct {
		name string
		d    Decision
	}{
		{"kill of a job reported finished", KillJob{Timestamp: 2, JobIDs: []string{"w!1"}}},
		{"metadata of a job reported finished", SetJobMetadata{Timestamp: 2, JobID: "w!1", Metadata: "m"}},
		{"execution of a job reported finished", ExecuteJob{Timestamp: 2, JobID: "w!1", Alloc: []int{0}}},
		{"kill of a job rejected before the last message", KillJob{Timestamp: 2, JobIDs: []string{"w!2"}}},
		{"rejection of a job rejected before the last message", RejectJob{Timestamp: 2, JobID: "w!2"}},
	} {
		d := tc.d
		t.Run(tc.name, func(t *testing.T) {
			var jobs bytes.Buffer
			e := mustNew(t, hostsPlatform([]float64{1e9}), []*Workload{w}, Options{JobsOutput: &jobs})
			i := 0
			msgs, err := drive(e, func(msg Message) (float64, []Decision) {
				defer func() { i++ }()
				switch i {
				case 1: // t=0: run job 1 (ends at 1, while deciding until 1.5); reject job 2
					return 1.5, []Decision{
						ExecuteJob{JobID: "w!1", Alloc: []int{0}},
						RejectJob{JobID: "w!2"},
						KillJob{Timestamp: 1.5, JobIDs: []string{"w!1"}},
						SetJobMetadata{Timestamp: 1.5, JobID: "w!1", Metadata: "too late"},
					}
				case 2: // t=1.5: JOB_COMPLETED w!1 (at 1), JOB_KILLED w!1
					return 2, []Decision{d}
				}
				return msg.Now, nil
			})
			if err == nil || !strings.Contains(err.Error(), "its end was reported in an earlier message") {
				t.Fatalf("got %v, want an error saying the job was forgotten", err)
			}
			if want := "1.5: JOB_COMPLETED w!1 COMPLETED_SUCCESSFULLY 0 [0] @1, JOB_KILLED w!1\n"; !strings.HasSuffix(trace(msgs), want) {
				t.Errorf("got trace\n%s\nwant it to end with\n%s", trace(msgs), want)
			}
			if strings.Contains(jobs.String(), "too late") {
				t.Errorf("metadata set after a job's end changed its row:\n%s", jobs.String())
			}
		})
	}
}
