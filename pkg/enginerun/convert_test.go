package enginerun

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/engine"
)

func TestNormalizeEndpoint(t *testing.T) {
	tests := []struct{ in, want string }{
		{"tcp://localhost:28000", "tcp://127.0.0.1:28000"},
		{"tcp://127.0.0.1:28000", "tcp://127.0.0.1:28000"},
		{"tcp://example.org:28000", "tcp://example.org:28000"},
		{"ipc:///tmp/localhost:1", "ipc:///tmp/localhost:1"},
	}
	for _, tt := range tests {
		if got := NormalizeEndpoint(tt.in); got != tt.want {
			t.Errorf("NormalizeEndpoint(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseWorkloadNaming(t *testing.T) {
	for _, n := range []WorkloadNaming{BatsimNames, FileNames} {
		got, err := ParseWorkloadNaming(n.String())
		if err != nil || got != n {
			t.Errorf("ParseWorkloadNaming(%q): got %v, %v, want %v", n.String(), got, err, n)
		}
	}
	if _, err := ParseWorkloadNaming("w"); err == nil {
		t.Error(`ParseWorkloadNaming("w"): got no error`)
	}
}

func mustSet(t *testing.T, s string) batsim.IntervalSet {
	t.Helper()
	set, err := batsim.ParseIntervalSet(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestDecisionsFromTheProtocol(t *testing.T) {
	tests := []struct {
		name string
		data batsim.EventData
		want engine.Decision
	}{
		{"execute", batsim.ExecuteJob{JobID: "w0!1", Alloc: mustSet(t, "0-2 5")},
			engine.ExecuteJob{Timestamp: 3, JobID: "w0!1", Alloc: []int{0, 1, 2, 5}}},
		{"execute with mapping", batsim.ExecuteJob{JobID: "w0!1", Alloc: mustSet(t, "4 7"), Mapping: map[int]int{0: 1, 1: 1, 2: 0}},
			engine.ExecuteJob{Timestamp: 3, JobID: "w0!1", Alloc: []int{4, 7}, Mapping: []int{1, 1, 0}}},
		{"reject", batsim.RejectJob{JobID: "w0!2"}, engine.RejectJob{Timestamp: 3, JobID: "w0!2"}},
		{"kill", batsim.KillJob{JobIDs: []batsim.JobID{"w0!1", "w1!1"}}, engine.KillJob{Timestamp: 3, JobIDs: []string{"w0!1", "w1!1"}}},
		{"call me later", batsim.CallMeLater{At: 42.5}, engine.CallMeLater{Timestamp: 3, When: 42.5}},
		{"notify", batsim.Notify{Type: batsim.RegistrationFinished}, engine.Notify{Timestamp: 3, Kind: engine.RegistrationFinished}},
		{"metadata", batsim.SetJobMetadata{JobID: "w0!1", Metadata: "m"}, engine.SetJobMetadata{Timestamp: 3, JobID: "w0!1", Metadata: "m"}},
		{"register job", batsim.RegisterJob{JobID: "d!1", Job: batsim.Job{ID: "d!1", Subtime: 1, Res: 2, Profile: "p"}},
			engine.RegisterJob{Timestamp: 3, JobID: "d!1", Job: json.RawMessage(`{"id":"d!1","subtime":1,"res":2,"profile":"p"}`)}},
		{"register profile", batsim.RegisterProfile{WorkloadName: "d", ProfileName: "p", Profile: batsim.Profile{
			Type: "delay", Fields: map[string]json.RawMessage{"delay": json.RawMessage("5")}}},
			engine.RegisterProfile{Timestamp: 3, Workload: "d", Name: "p", Profile: json.RawMessage(`{"type":"delay","delay":5}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decisions(batsim.Message{Now: 4, Events: []batsim.Event{{Timestamp: 3, Data: tt.data}}}, 8)
			if err != nil {
				t.Fatalf("decisions: %v", err)
			}
			if len(got) != 1 || !reflect.DeepEqual(got[0], tt.want) {
				t.Errorf("decisions: got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestUnsupportedDecisionsAreNamed(t *testing.T) {
	tests := []struct {
		data batsim.EventData
		want string
	}{
		{batsim.SetResourceState{Resources: mustSet(t, "0"), State: "1"}, "event 1 (SET_RESOURCE_STATE)"},
		{batsim.ChangeJobState{JobID: "w0!1", JobState: batsim.JobStateCompletedKilled}, "event 1 (CHANGE_JOB_STATE)"},
		{batsim.Query{ConsumedEnergy: true}, "event 1 (QUERY)"},
		{batsim.ExecuteJob{JobID: "w0!1", Alloc: mustSet(t, "0"), StorageMapping: map[string]int{"pfs": 4}}, "storage_mapping"},
	}
	for _, tt := range tests {
		t.Run(string(tt.data.EventType()), func(t *testing.T) {
			_, err := decisions(batsim.Message{Now: 1, Events: []batsim.Event{
				{Timestamp: 1, Data: batsim.RejectJob{JobID: "w0!0"}},
				{Timestamp: 1, Data: tt.data},
			}}, 8)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("decisions: got %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

func TestEventTypes(t *testing.T) {
	ev := func(d batsim.EventData) batsim.Event { return batsim.Event{Data: d} }
	tests := []struct {
		events []batsim.Event
		want   string
	}{
		{nil, "no event"},
		{[]batsim.Event{ev(batsim.SimulationBegins{})}, "SIMULATION_BEGINS"},
		{[]batsim.Event{ev(batsim.JobCompleted{}), ev(batsim.JobSubmitted{}), ev(batsim.JobSubmitted{}), ev(batsim.Notify{})},
			"JOB_COMPLETED, JOB_SUBMITTED x2, NOTIFY"},
	}
	for _, tt := range tests {
		if got := eventTypes(batsim.Message{Events: tt.events}); got != tt.want {
			t.Errorf("eventTypes: got %q, want %q", got, tt.want)
		}
	}
}

func TestUsedProfilesAreThoseOfTheJobs(t *testing.T) {
	w, err := engine.ParseWorkload(strings.NewReader(`{"nb_res": 1,
		"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "seq"}, {"id": 2, "subtime": 0, "res": 1, "profile": "a"}],
		"profiles": {
			"seq": {"type": "composed", "seq": ["b", "c"]},
			"a": {"type": "delay", "delay": 1},
			"b": {"type": "delay", "delay": 2},
			"c": {"type": "delay", "delay": 3},
			"unused": {"type": "delay", "delay": 4}}}`), "w0")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range usedProfiles(w) {
		got = append(got, p.Name)
	}
	slices.Sort(got)
	if want := []string{"a", "b", "c", "seq"}; !slices.Equal(got, want) {
		t.Errorf("usedProfiles: got %v, want %v", got, want)
	}
}

func TestJobKilledProgress(t *testing.T) {
	c := newConverter(false, "", false)
	data, err := c.event(engine.JobKilled{Timestamp: 2, JobIDs: []string{"w0!1", "w0!2"}, Progress: map[string]*engine.Progress{
		"w0!1": {Profile: "seq", CurrentTaskIndex: 3, CurrentTask: &engine.Progress{Profile: "d", Progress: 0.25}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	idx := 3
	want := batsim.JobKilled{
		JobIDs: []batsim.JobID{"w0!1", "w0!2"},
		Progress: map[batsim.JobID]batsim.JobProgress{
			"w0!1": {Profile: "seq", CurrentTaskIndex: &idx, CurrentTask: &batsim.JobProgress{Profile: "d", Progress: 0.25}},
		},
	}
	if !reflect.DeepEqual(data, want) {
		t.Errorf("JOB_KILLED: got %+v, want %+v", data, want)
	}
}
