package batsim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func set(t testing.TB, s string) IntervalSet {
	t.Helper()
	v, err := ParseIntervalSet(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func ptr[T any](v T) *T { return &v }

// fixture is a message of testdata, sent in direction from.
type fixture struct {
	file string
	from Direction
	want Message
}

// fixtures are the messages of testdata: one per event type and direction,
// taken from Batsim's protocol documentation and corrected to what Batsim
// 4.2.1 really sends.
func fixtures(t testing.TB) []fixture {
	return []fixture{
		{"from_batsim/simulation_begins.json", FromBatsim, Message{Now: 0, Events: []Event{{Timestamp: 0, Data: SimulationBegins{
			NbResources:         2,
			NbComputeResources:  2,
			AllowComputeSharing: true,
			AllowStorageSharing: true,
			Config: Config{
				RedisHostname:      "127.0.0.1",
				RedisPort:          6379,
				RedisPrefix:        "default",
				DynamicJobsEnabled: true,
				SchedConfig:        `{"policy": "fcfs"}`,
			},
			ComputeResources: []Resource{
				{ID: 0, Name: "node0", State: ResourceIdle,
					Properties:     map[string]string{"role": "", "core": "6", "memory": "4Gi"},
					ZoneProperties: map[string]string{"site": "nancy"}},
				{ID: 1, Name: "node1", State: ResourceIdle,
					Properties:     map[string]string{"role": "", "core": "4", "memory": "8Gi", "label:disk": "ssd"},
					ZoneProperties: map[string]string{"site": "nancy"}},
			},
			Workloads: map[string]string{"w0": "/home/user/expe/workload.json"},
			Profiles: map[string]map[string]Profile{"w0": {
				"delay10": {Type: "delay", Fields: map[string]json.RawMessage{"delay": json.RawMessage(`10`), "cpu": json.RawMessage(`"500m"`), "memory": json.RawMessage(`"1Gi"`)}},
				"par":     {Type: "parallel_homogeneous", Fields: map[string]json.RawMessage{"cpu": json.RawMessage(`1e9`), "com": json.RawMessage(`0`)}},
				"seq":     {Type: "composed", Fields: map[string]json.RawMessage{"repeat": json.RawMessage(`4`), "seq": json.RawMessage(`["delay10","par"]`)}},
			}},
		}}}}},
		{"from_batsim/job_submitted.json", FromBatsim, Message{Now: 10.000001, Events: []Event{{Timestamp: 10.000001, Data: JobSubmitted{
			JobID: "w0!1",
			Job: Job{ID: "w0!1", Subtime: 10, Res: 1, Profile: "delay10", Walltime: 100, Extra: map[string]json.RawMessage{
				"user":         json.RawMessage(`"alice"`),
				"pod_template": json.RawMessage(`{"metadata":{"labels":{"app":"web"}}}`),
			}},
			Profile: &Profile{Type: "delay", Fields: map[string]json.RawMessage{"delay": json.RawMessage(`10`), "cpu": json.RawMessage(`"500m"`), "memory": json.RawMessage(`"1Gi"`)}},
		}}}}},
		{"from_batsim/job_completed.json", FromBatsim, Message{Now: 20.000004, Events: []Event{{Timestamp: 20.000004, Data: JobCompleted{
			JobID: "w0!1", JobState: JobStateCompletedSuccessfully, ReturnCode: 0, Alloc: set(t, "0 1 3"),
		}}}}},
		{"from_batsim/job_killed.json", FromBatsim, Message{Now: 10, Events: []Event{{Timestamp: 10, Data: JobKilled{
			JobIDs: []JobID{"w0!1", "w0!2", "w0!3"},
			Progress: map[JobID]JobProgress{
				"w0!1": {Profile: "my_simple_profile", Progress: 0.52},
				"w0!2": {Profile: "my_sequence_profile", CurrentTaskIndex: ptr(1), CurrentTask: &JobProgress{Profile: "my_simple_profile", Progress: 0.2}},
				"w0!3": {Profile: "my_sequence_of_sequences_profile", CurrentTaskIndex: ptr(2), CurrentTask: &JobProgress{
					Profile: "my_sequential_profile", CurrentTaskIndex: ptr(3), CurrentTask: &JobProgress{Profile: "my_simple_profile", Progress: 0.75},
				}},
			},
		}}}}},
		{"from_batsim/requested_call.json", FromBatsim, Message{Now: 25.5, Events: []Event{{Timestamp: 25.5, Data: RequestedCall{}}}}},
		{"from_batsim/simulation_ends.json", FromBatsim, Message{Now: 100, Events: []Event{{Timestamp: 100, Data: SimulationEnds{}}}}},
		{"from_batsim/resource_state_changed.json", FromBatsim, Message{Now: 10, Events: []Event{{Timestamp: 10, Data: ResourceStateChanged{
			Resources: set(t, "1-5"), State: "42",
		}}}}},
		{"from_batsim/notify.json", FromBatsim, Message{Now: 140, Events: []Event{
			{Timestamp: 23.5, Data: Notify{Type: NoMoreStaticJobToSubmit}},
			{Timestamp: 140, Data: Notify{Type: EventMachineUnavailable, Resources: set(t, "0 5-8")}},
			{Timestamp: 140, Data: Notify{Type: "my_event", Extra: map[string]json.RawMessage{"timestamp": json.RawMessage(`140`), "payload": json.RawMessage(`[1,2]`)}}},
			{Timestamp: 140, Data: Notify{Type: NoMoreExternalEventToOccur}},
		}}},
		{"from_batsim/query.json", FromBatsim, Message{Now: 10, Events: []Event{{Timestamp: 10, Data: Query{
			EstimateWaitingTime: &WaitingTimeQuery{JobID: "workflow_submitter0!potential_job17", Job: Job{Res: 1, Walltime: 12}},
		}}}}},
		{"from_batsim/answer.json", FromBatsim, Message{Now: 10, Events: []Event{{Timestamp: 10, Data: Answer{ConsumedEnergy: ptr(12500.5)}}}}},

		{"from_scheduler/execute_job.json", FromScheduler, Message{Now: 10.5, Events: []Event{
			{Timestamp: 10, Data: ExecuteJob{JobID: "w0!1", Alloc: set(t, "0")}},
			{Timestamp: 10.5, Data: ExecuteJob{JobID: "w12!45", Alloc: set(t, "2-3"),
				Mapping: map[int]int{0: 0, 1: 0, 2: 1, 3: 1}, StorageMapping: map[string]int{"pfs": 2}}},
		}}},
		{"from_scheduler/reject_job.json", FromScheduler, Message{Now: 10, Events: []Event{{Timestamp: 10, Data: RejectJob{JobID: "w12!45"}}}}},
		{"from_scheduler/kill_job.json", FromScheduler, Message{Now: 10, Events: []Event{{Timestamp: 10, Data: KillJob{JobIDs: []JobID{"w0!1", "w0!2"}}}}}},
		{"from_scheduler/call_me_later.json", FromScheduler, Message{Now: 10.000001, Events: []Event{{Timestamp: 10, Data: CallMeLater{At: 25.5}}}}},
		{"from_scheduler/register_job.json", FromScheduler, Message{Now: 10, Events: []Event{{Timestamp: 10, Data: RegisterJob{
			JobID: "dyn!my_new_job",
			Job:   Job{ID: "dyn!my_new_job", Subtime: 10, Res: 1, Profile: "delay_10s", Walltime: 12, Extra: map[string]json.RawMessage{"namespace": json.RawMessage(`"default"`)}},
		}}}}},
		{"from_scheduler/register_profile.json", FromScheduler, Message{Now: 10, Events: []Event{{Timestamp: 10, Data: RegisterProfile{
			WorkloadName: "dyn", ProfileName: "delay_10s", Profile: Profile{Type: "delay", Fields: map[string]json.RawMessage{"delay": json.RawMessage(`10`)}},
		}}}}},
		{"from_scheduler/set_resource_state.json", FromScheduler, Message{Now: 10, Events: []Event{{Timestamp: 10, Data: SetResourceState{
			Resources: set(t, "1-5"), State: "42",
		}}}}},
		{"from_scheduler/set_job_metadata.json", FromScheduler, Message{Now: 13, Events: []Event{{Timestamp: 13, Data: SetJobMetadata{
			JobID: "wload!42", Metadata: "scheduler-defined string",
		}}}}},
		{"from_scheduler/change_job_state.json", FromScheduler, Message{Now: 42, Events: []Event{{Timestamp: 42, Data: ChangeJobState{
			JobID: "w12!45", JobState: JobStateCompletedKilled, KillReason: "Sub-jobs were killed.",
		}}}}},
		{"from_scheduler/notify.json", FromScheduler, Message{Now: 42, Events: []Event{
			{Timestamp: 42, Data: Notify{Type: RegistrationFinished}},
			{Timestamp: 42, Data: Notify{Type: ContinueRegistration}},
		}}},
		{"from_scheduler/query.json", FromScheduler, Message{Now: 10, Events: []Event{{Timestamp: 10, Data: Query{ConsumedEnergy: true}}}}},
		{"from_scheduler/answer.json", FromScheduler, Message{Now: 10, Events: []Event{{Timestamp: 10, Data: Answer{
			EstimateWaitingTime: &WaitingTimeEstimate{JobID: "workflow_submitter0!potential_job17", EstimatedWaitingTime: 56},
		}}}}},
	}
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("unmarshal %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

func TestFixturesRoundTrip(t *testing.T) {
	covered := map[EventType]Direction{}
	for _, tc := range fixtures(t) {
		t.Run(tc.file, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			out := roundTrip(t, in, tc.from, tc.want)
			if !sameJSON(t, out, in) {
				t.Errorf("Encode:\ngot  %s\nwant %s", out, in)
			}
			for _, ev := range tc.want.Events {
				covered[ev.Type()] |= tc.from
			}
		})
	}
	for _, typ := range allEventTypes {
		if got, want := covered[typ], typ.senders(); got != want {
			t.Errorf("fixtures cover %s in directions %b, want %b", typ, got, want)
		}
	}
}

var allEventTypes = []EventType{
	TypeQuery, TypeAnswer, TypeNotify,
	TypeSimulationBegins, TypeSimulationEnds, TypeJobSubmitted, TypeJobCompleted, TypeJobKilled,
	TypeResourceStateChanged, TypeRequestedCall,
	TypeExecuteJob, TypeRejectJob, TypeKillJob, TypeCallMeLater, TypeRegisterJob, TypeRegisterProfile,
	TypeSetResourceState, TypeSetJobMetadata, TypeChangeJobState,
}

// TestDecodeVariants checks the forms the protocol allows besides the
// canonical one.
func TestDecodeVariants(t *testing.T) {
	tests := []struct {
		name string
		from Direction
		in   string
		want Message
	}{
		{"integer job ids", FromBatsim,
			`{"now":1,"events":[{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":7,"job":{"id":7,"subtime":1,"res":2,"profile":"p"}}}]}`,
			Message{Now: 1, Events: []Event{{Timestamp: 1, Data: JobSubmitted{JobID: "7", Job: Job{ID: "7", Subtime: 1, Res: 2, Profile: "p"}}}}}},
		{"integers written as floats", FromBatsim,
			`{"now":1,"events":[{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":"w!1","job":{"id":"w!1","subtime":1,"res":2.0,"profile":"p","walltime":-1}}}]}`,
			Message{Now: 1, Events: []Event{{Timestamp: 1, Data: JobSubmitted{JobID: "w!1", Job: Job{ID: "w!1", Subtime: 1, Res: 2, Profile: "p", Walltime: NoWalltime}}}}}},
		{"noisy floats", FromScheduler,
			`{"now":9.999999999,"events":[{"timestamp":9.999999998,"type":"CALL_ME_LATER","data":{"timestamp":19.999999999}}]}`,
			Message{Now: 9.999999999, Events: []Event{{Timestamp: 9.999999998, Data: CallMeLater{At: 19.999999999}}}}},
		{"empty message", FromScheduler, `{"now":3,"events":[]}`, Message{Now: 3}},
		{"non-canonical interval set", FromScheduler,
			`{"now":1,"events":[{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":"w!1","alloc":"5 2-2 7 1-3  4"}}]}`,
			Message{Now: 1, Events: []Event{{Timestamp: 1, Data: ExecuteJob{JobID: "w!1", Alloc: set(t, "1-5 7")}}}}},
		{"mapping as strings, as in the docs", FromScheduler,
			`{"now":1,"events":[{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":"w!1","alloc":"2-3","mapping":{"0":"0","1":"1"}}}]}`,
			Message{Now: 1, Events: []Event{{Timestamp: 1, Data: ExecuteJob{JobID: "w!1", Alloc: set(t, "2-3"), Mapping: map[int]int{0: 0, 1: 1}}}}}},
		{"job progress as in the docs", FromBatsim,
			`{"now":1,"events":[{"timestamp":1,"type":"JOB_KILLED","data":{"job_ids":["w!1"],"job_progress":{"w!1":{"profile":"p","progress":0.5}}}}]}`,
			Message{Now: 1, Events: []Event{{Timestamp: 1, Data: JobKilled{JobIDs: []JobID{"w!1"}, Progress: map[JobID]JobProgress{"w!1": {Profile: "p", Progress: 0.5}}}}}}},
		{"null data of REQUESTED_CALL", FromBatsim,
			`{"now":1,"events":[{"timestamp":1,"type":"REQUESTED_CALL","data":null}]}`,
			Message{Now: 1, Events: []Event{{Timestamp: 1, Data: RequestedCall{}}}}},
		{"unknown members of Batsim's events are ignored", FromBatsim,
			`{"now":1,"extra":true,"events":[{"timestamp":1,"type":"JOB_COMPLETED","data":{"job_id":"w!1","job_state":"COMPLETED_KILLED","return_code":-1,"alloc":"0","kill_reason":"Walltime reached"}}]}`,
			Message{Now: 1, Events: []Event{{Timestamp: 1, Data: JobCompleted{JobID: "w!1", JobState: JobStateCompletedKilled, ReturnCode: -1, Alloc: set(t, "0")}}}}},
		{"config extras", FromBatsim,
			`{"now":0,"events":[{"timestamp":0,"type":"SIMULATION_BEGINS","data":{"nb_resources":0,"config":{"custom":{"a": 1}},"compute_resources":[]}}]}`,
			Message{Now: 0, Events: []Event{{Timestamp: 0, Data: SimulationBegins{Config: Config{Extra: map[string]json.RawMessage{"custom": json.RawMessage(`{"a":1}`)}}}}}}},
		{"escaped strings", FromScheduler,
			`{"now":1,"events":[{"timestamp":1,"type":"SET_JOB_METADATA","data":{"job_id":"w!\u00e9","metadata":"a \"quoted\"\nline <b>"}}]}`,
			Message{Now: 1, Events: []Event{{Timestamp: 1, Data: SetJobMetadata{JobID: "w!é", Metadata: "a \"quoted\"\nline <b>"}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			roundTrip(t, []byte(tc.in), tc.from, tc.want)
		})
	}
}

// roundTrip checks that in decodes to want and that its encoding decodes to
// want again; it returns that encoding.
func roundTrip(t *testing.T, in []byte, from Direction, want Message) []byte {
	t.Helper()
	got, err := Decode(in, from)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode:\ngot  %#v\nwant %#v", got, want)
	}
	out, err := Encode(got, from)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	again, err := Decode(out, from)
	if err != nil {
		t.Fatalf("Decode(Encode) of %s: %v", out, err)
	}
	if !reflect.DeepEqual(again, want) {
		t.Errorf("Decode(Encode):\ngot  %#v\nwant %#v", again, want)
	}
	return out
}

func TestEncodeCanonical(t *testing.T) {
	m := Message{Now: 10.000001, Events: []Event{
		{Timestamp: 1e-7, Data: ExecuteJob{JobID: "w0!1", Alloc: set(t, "3 0-2 7"), Mapping: map[int]int{1: 3, 0: 2}}},
		{Timestamp: 10, Data: Notify{Type: RegistrationFinished}},
		{Timestamp: 10.000001, Data: CallMeLater{At: 1e21}},
	}}
	got, err := Encode(m, FromScheduler)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"now":10.000001,"events":[` +
		`{"timestamp":1e-7,"type":"EXECUTE_JOB","data":{"job_id":"w0!1","alloc":"0-3 7","mapping":{"0":2,"1":3}}},` +
		`{"timestamp":10,"type":"NOTIFY","data":{"type":"registration_finished"}},` +
		`{"timestamp":10.000001,"type":"CALL_ME_LATER","data":{"timestamp":1e+21}}]}`
	if string(got) != want {
		t.Errorf("Encode:\ngot  %s\nwant %s", got, want)
	}
	empty, err := Encode(Message{Now: 2}, FromScheduler)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(empty), `{"now":2,"events":[]}`; got != want {
		t.Errorf("Encode(no events) = %s, want %s", got, want)
	}
}

func TestJobAndProfileJSON(t *testing.T) {
	var jobs []Job
	in := `[{"id":1,"subtime":0,"res":4,"profile":"p","walltime":3600,"cpu":"2"},{"id":"two","subtime":5.5,"res":1,"profile":"q"}]`
	if err := json.Unmarshal([]byte(in), &jobs); err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: "1", Subtime: 0, Res: 4, Profile: "p", Walltime: 3600, Extra: map[string]json.RawMessage{"cpu": json.RawMessage(`"2"`)}},
		{ID: "two", Subtime: 5.5, Res: 1, Profile: "q"},
	}
	if !reflect.DeepEqual(jobs, want) {
		t.Fatalf("Unmarshal jobs:\ngot  %#v\nwant %#v", jobs, want)
	}
	out, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), `[{"id":"1","subtime":0,"res":4,"profile":"p","walltime":3600,"cpu":"2"},{"id":"two","subtime":5.5,"res":1,"profile":"q"}]`; got != want {
		t.Errorf("Marshal jobs = %s, want %s", got, want)
	}
	if !jobs[0].HasWalltime() || jobs[1].HasWalltime() {
		t.Errorf("HasWalltime = %v, %v; want true, false", jobs[0].HasWalltime(), jobs[1].HasWalltime())
	}

	var p Profile
	if err := json.Unmarshal([]byte(`{"type":"delay","delay":10.5}`), &p); err != nil {
		t.Fatal(err)
	}
	var delay float64
	if ok, err := p.Field("delay", &delay); !ok || err != nil || delay != 10.5 {
		t.Errorf("Field(delay) = %v, %v, %v; want true, nil, 10.5", ok, err, delay)
	}
	if ok, err := p.Field("cpu", &delay); ok || err != nil {
		t.Errorf("Field(cpu) = %v, %v; want false, nil", ok, err)
	}
	var bad Job
	err = json.Unmarshal([]byte(`{"id":"x","subtime":0,"profile":"p"}`), &bad)
	if got, want := errString(err), `batsim: job: field "res": missing`; got != want {
		t.Errorf("Unmarshal job without res: got %q, want %q", got, want)
	}
}

func TestJobID(t *testing.T) {
	tests := []struct {
		id             JobID
		workload, name string
	}{
		{"w0!1", "w0", "1"},
		{"dyn!a!b", "dyn", "a!b"},
		{"42", "", "42"},
	}
	for _, tc := range tests {
		t.Run(string(tc.id), func(t *testing.T) {
			if got := tc.id.Workload(); got != tc.workload {
				t.Errorf("Workload() = %q, want %q", got, tc.workload)
			}
			if got := tc.id.Name(); got != tc.name {
				t.Errorf("Name() = %q, want %q", got, tc.name)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
