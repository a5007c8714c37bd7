package engine

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestParseWorkload(t *testing.T) {
	w := mustWorkload(t, "w0", `{
		"nb_res": 4,
		"jobs": [
			{"id": 7, "subtime": 1.5, "res": 2, "profile": "p", "walltime": 100, "priority": "high", "pod_template": {"metadata": {"labels": {"a": "b"}}}},
			{"id": "job-x", "subtime": 0, "res": 1, "profile": "p"},
			{"id": "w0!y", "subtime": 0, "res": 1, "profile": "c"}
		],
		"profiles": {
			"p": {"type": "delay", "delay": 10, "cpu": 0.5, "memory": "1Gi"},
			"c": {"type": "composed", "seq": ["p", "p"]}
		}
	}`)
	tests := []struct {
		got, want any
		what      string
	}{
		{w.NbRes, 4, "nb_res"},
		{len(w.Jobs), 3, "number of jobs"},
		{w.Jobs[0].ID, "w0!7", "integer id"},
		{w.Jobs[0].Name, "7", "integer id's name"},
		{w.Jobs[1].ID, "w0!job-x", "string id"},
		{w.Jobs[2].Name, "y", "workload!id id"},
		{w.Jobs[0].Subtime, 1.5, "subtime"},
		{w.Jobs[0].Res, 2, "res"},
		{w.Jobs[0].Walltime, 100.0, "walltime"},
		{w.Jobs[1].Walltime, -1.0, "no walltime"},
		{w.Profiles["p"].Delay, 10.0, "delay"},
		{w.Profiles["c"].Repeat, 1, "default repeat"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.what, tc.got, tc.want)
		}
	}
	desc, err := w.Jobs[0].Description()
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(desc, &fields); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"id": `"w0!7"`, "priority": `"high"`, "pod_template": `{"metadata":{"labels":{"a":"b"}}}`, "walltime": "100"} {
		if got := string(fields[key]); got != want {
			t.Errorf("description field %s: got %s, want %s", key, got, want)
		}
	}
	var prof map[string]json.RawMessage
	if err := json.Unmarshal(w.Profiles["p"].Raw, &prof); err != nil || string(prof["memory"]) != `"1Gi"` {
		t.Errorf("profile raw: got %s, want the memory field kept", w.Profiles["p"].Raw)
	}
}

func TestParseWorkloadErrors(t *testing.T) {
	wl := func(jobs, profiles string) string {
		return `{"nb_res": 1, "jobs": [` + jobs + `], "profiles": {` + profiles + `}}`
	}
	delay := `"d": {"type": "delay", "delay": 1}`
	tests := []struct {
		name, json, want string
	}{
		{"not JSON", "{", "invalid JSON"},
		{"not an object", "[]", "not a JSON object"},
		{"no nb_res", `{"jobs": [], "profiles": {}}`, "no nb_res field"},
		{"zero nb_res", `{"nb_res": 0, "jobs": [], "profiles": {}}`, "nb_res is 0"},
		{"unknown profile type", wl("", `"weird": {"type": "quantum"}`), `workload "w": profile "weird": unknown type "quantum"`},
		{"unsupported profile type", wl("", `"m": {"type": "smpi", "trace": "x"}`), `profile "m": type "smpi" is not simulated by the embedded engine`},
		{"delay not positive", wl("", `"d": {"type": "delay", "delay": 0}`), "delay is 0, want a positive number of seconds"},
		{"missing step", wl("", `"c": {"type": "composed", "seq": ["nope"]}`), `step "nope" does not exist`},
		{"cycle", wl("", `"a": {"type": "composed", "seq": ["b"]}, "b": {"type": "composed", "seq": ["a"]}`), "cycle"},
		{"negative ret", wl("", `"d": {"type": "delay", "delay": 1, "ret": -1}`), "ret is -1"},
		{"float id", wl(`{"id": 1.5, "subtime": 0, "res": 1, "profile": "d"}`, delay), "job id 1.5: want a string or an integer"},
		{"foreign workload id", wl(`{"id": "x!1", "subtime": 0, "res": 1, "profile": "d"}`, delay), `job id "x!1"`},
		{"no subtime", wl(`{"id": 1, "res": 1, "profile": "d"}`, delay), `job "1": no subtime field`},
		{"negative subtime", wl(`{"id": 1, "subtime": -1, "res": 1, "profile": "d"}`, delay), `job "1": subtime is -1, want a date >= 0 seconds`},
		{"subtime too big for a double", wl(`{"id": 1, "subtime": 1e400, "res": 1, "profile": "d"}`, delay), `job "1": subtime is 1e400, want a number`},
		{"negative walltime", wl(`{"id": 1, "subtime": 0, "res": 1, "profile": "d", "walltime": -2}`, delay), "walltime is -2, want -1 (none) or a positive number of seconds"},
		{"res not an integer", wl(`{"id": 1, "subtime": 0, "res": "2", "profile": "d"}`, delay), `res is "2"`},
		{"bad walltime", wl(`{"id": 1, "subtime": 0, "res": 1, "profile": "d", "walltime": 0}`, delay), "walltime is 0"},
		{"unknown profile", wl(`{"id": 1, "subtime": 0, "res": 1, "profile": "x"}`, delay), `profile "x" does not exist`},
		{"parallel_homogeneous without com", wl("", `"c": {"type": "parallel_homogeneous", "cpu": 1}`), `profile "c": no com field`},
		{"parallel_homogeneous_total with a negative com", wl("", `"c": {"type": "parallel_homogeneous_total", "cpu": 1, "com": -1}`), `profile "c": com is -1`},
		{"parallel without com", wl("", `"p": {"type": "parallel", "cpu": [1, 1]}`), `profile "p": no com field`},
		{"parallel com of another size", wl("", `"p": {"type": "parallel", "cpu": [1, 1], "com": [0, 0, 0]}`), "com has 3 numbers, want 2×2 = 4"},
		{"parallel profile of another size than its job", wl(`{"id": 1, "subtime": 0, "res": 3, "profile": "p"}`, `"p": {"type": "parallel", "cpu": [1, 1], "com": [0, 0, 0, 0]}`),
			`job "1" asks for 3 resources but its parallel profile "p" has 2 executors`},
		{"duplicate id", wl(`{"id": 1, "subtime": 0, "res": 1, "profile": "d"}, {"id": "1", "subtime": 0, "res": 1, "profile": "d"}`, delay), `job "1" is declared twice`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseWorkload(strings.NewReader(tc.json), "w")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestWorkloadNames(t *testing.T) {
	if got := WorkloadName("/a/b/delay_10.json"); got != "delay_10" {
		t.Errorf("WorkloadName: got %q, want delay_10", got)
	}
	if got := BatsimWorkloadName(3); got != "w3" {
		t.Errorf("BatsimWorkloadName: got %q, want w3", got)
	}
}

func TestSeveralWorkloads(t *testing.T) {
	a := mustWorkload(t, "a", `{"nb_res": 1, "profiles": {"d": {"type": "delay", "delay": 1}}, "jobs": [{"id": 2, "subtime": 0, "res": 1, "profile": "d"}, {"id": 10, "subtime": 0, "res": 1, "profile": "d"}]}`)
	b := mustWorkload(t, "b", `{"nb_res": 1, "profiles": {"d": {"type": "delay", "delay": 1}}, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}]}`)
	e := mustNew(t, hostsPlatform([]float64{1}), []*Workload{a, b}, Options{ComputeSharing: true})
	msgs, err := drive(e, placer(nil, []int{0}))
	if err != nil {
		t.Fatal(err)
	}
	want := "JOB_SUBMITTED a!10, JOB_SUBMITTED a!2, JOB_SUBMITTED b!1, NOTIFY no_more_static_job_to_submit"
	if got := trace(msgs[1:2]); !strings.Contains(got, want) {
		t.Errorf("got %s, want submissions in (subtime, workload, id) order: %s", got, want)
	}
	if _, err := New(hostsPlatform([]float64{1}), []*Workload{a, a}, Options{}); err == nil || !strings.Contains(err.Error(), `two workloads are named "a"`) {
		t.Errorf("two workloads with one name: got %v", err)
	}
}

func TestExampleWorkloads(t *testing.T) {
	tests := []struct {
		file string
		jobs int
	}{
		{"delay_10.json", 10},
		{"delay_30.json", 30},
		{"parallel.json", 8},
		{"pod_templates.json", 12},
		{"trace_10h.json", 1000},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			w, err := ReadWorkloadFile("../../examples/workloads/"+tc.file, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(w.Jobs) != tc.jobs {
				t.Errorf("got %d jobs, want %d", len(w.Jobs), tc.jobs)
			}
			if want := strings.TrimSuffix(tc.file, ".json"); w.Name != want {
				t.Errorf("got name %q, want %q", w.Name, want)
			}
		})
	}
}

// TestExamplesRun runs each example workload on an example platform, with
// compute sharing, each job on the first res resources.
func TestExamplesRun(t *testing.T) {
	tests := []struct {
		workload, platform string
	}{
		{"delay_10.json", "platform_4.xml"},
		{"delay_30.json", "platform_4.xml"},
		{"parallel.json", "platform_4.xml"},
		{"pod_templates.json", "heterogeneous.xml"},
		{"trace_10h.json", "platform_16.xml"},
	}
	for _, tc := range tests {
		t.Run(tc.workload, func(t *testing.T) {
			w, err := ReadWorkloadFile("../../examples/workloads/"+tc.workload, "")
			if err != nil {
				t.Fatal(err)
			}
			p, err := ReadPlatformFile("../../examples/platforms/" + tc.platform)
			if err != nil {
				t.Fatal(err)
			}
			e := mustNew(t, p, []*Workload{w}, Options{ComputeSharing: true})
			done := 0
			err = loop(e, func(msg Message) (float64, []Decision) {
				var ds []Decision
				for _, ev := range msg.Events {
					switch ev := ev.(type) {
					case JobSubmitted:
						alloc := make([]int, ev.Job.Res)
						for i := range alloc {
							alloc[i] = i
						}
						ds = append(ds, ExecuteJob{Timestamp: msg.Now, JobID: ev.Job.ID, Alloc: alloc})
					case JobCompleted:
						done++
					}
				}
				return msg.Now, ds
			})
			if err != nil {
				t.Fatal(err)
			}
			if done != len(w.Jobs) {
				t.Errorf("got %d jobs completed, want %d", done, len(w.Jobs))
			}
		})
	}
}

// TestDatesUpToBatsimsLimits checks that any finite date >= 0 is a subtime,
// a walltime or a delay, as Batsim reads them (doubles, however large),
// and that NaN, infinities and negative dates of jobs built in Go are
// refused with the message ParseJob gives.
func TestDatesUpToBatsimsLimits(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 1, "profiles": {"d": {"type": "delay", "delay": 1e300}},
		"jobs": [{"id": 1, "subtime": 1e17, "res": 1, "profile": "d", "walltime": 1e300},
			{"id": 2, "subtime": 1.7976931348623157e308, "res": 1, "profile": "d"},
			{"id": 3, "subtime": 5e-324, "res": 1, "profile": "d"}]}`)
	if _, err := New(hostsPlatform([]float64{1}), []*Workload{w}, Options{}); err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, c := range []struct {
		subtime, walltime float64
		want              string
	}{
		{-1, -1, `job "1": subtime is -1, want a date >= 0 seconds`},
		{math.NaN(), -1, `job "1": subtime is NaN, want a date >= 0 seconds`},
		{math.Inf(1), -1, `job "1": subtime is +Inf, want a date >= 0 seconds`},
		{0, math.Inf(1), `job "1": walltime is +Inf, want -1 (none) or a positive number of seconds`},
		{0, math.NaN(), `job "1": walltime is NaN, want -1 (none) or a positive number of seconds`},
		{0, -0.5, `job "1": walltime is -0.5, want -1 (none) or a positive number of seconds`},
	} {
		j := &Job{ID: "w!1", Name: "1", Workload: "w", Subtime: c.subtime, Res: 1, Profile: "d", Walltime: c.walltime}
		bad := &Workload{Name: "w", NbRes: 1, Profiles: w.Profiles, Jobs: []*Job{j}}
		if _, err := New(hostsPlatform([]float64{1}), []*Workload{bad}, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("subtime %g, walltime %g: got error %v, want one containing %q", c.subtime, c.walltime, err, c.want)
		}
	}
	for _, delay := range []float64{0, -1, math.Inf(1), math.NaN()} {
		bad := &Workload{Name: "w", NbRes: 1, Profiles: map[string]*Profile{"d": {Name: "d", Type: ProfileDelay, Delay: delay}}}
		if _, err := New(hostsPlatform([]float64{1}), []*Workload{bad}, Options{}); err == nil || !strings.Contains(err.Error(), "want a positive number of seconds") {
			t.Errorf("delay %g: got error %v, want one saying it wants a positive number of seconds", delay, err)
		}
	}
}
