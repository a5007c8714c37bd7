package batsim

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// ev wraps event JSON into a message at time 10.
func ev(events string) string { return `{"now":10,"events":[` + events + `]}` }

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		from Direction
		in   string
		want string
	}{
		// The message.
		{"not JSON", FromBatsim, `{"now":`, `batsim: invalid JSON: unexpected end of JSON input`},
		{"garbage", FromBatsim, `now`, `batsim: invalid JSON: invalid character 'o' in literal null (expecting 'u')`},
		{"not an object", FromBatsim, `[1]`, `batsim: message: expected object, got array`},
		{"no now", FromBatsim, `{"events":[]}`, `batsim: field "now": missing`},
		{"now is a string", FromBatsim, `{"now":"1","events":[]}`, `batsim: field "now": expected number, got string`},
		{"now out of range", FromBatsim, `{"now":1e400,"events":[]}`, `batsim: field "now": number 1e400 out of range`},
		{"negative now", FromBatsim, `{"now":-1,"events":[]}`, `batsim: field "now": negative time -1`},
		{"no events", FromBatsim, `{"now":1}`, `batsim: field "events": missing`},
		{"events is null", FromBatsim, `{"now":1,"events":null}`, `batsim: field "events": expected array, got null`},
		{"duplicate now", FromBatsim, `{"now":1,"now":2,"events":[]}`, `batsim: field "now": duplicate member`},
		{"events is an object", FromBatsim, `{"now":1,"events":{}}`, `batsim: field "events": expected array, got object`},

		// The envelope of an event.
		{"event is a string", FromBatsim, ev(`"x"`), `batsim: event 0: event: expected object, got string`},
		{"no timestamp", FromBatsim, ev(`{"type":"REQUESTED_CALL","data":{}}`), `batsim: event 0: "timestamp": missing`},
		{"timestamp is a string", FromBatsim, ev(`{"timestamp":"1","type":"REQUESTED_CALL","data":{}}`), `batsim: event 0: "timestamp": expected number, got string`},
		{"no type", FromBatsim, ev(`{"timestamp":1,"data":{}}`), `batsim: event 0: "type": missing`},
		{"type is a number", FromBatsim, ev(`{"timestamp":1,"type":3,"data":{}}`), `batsim: event 0: "type": expected string, got number`},
		{"unknown type", FromBatsim, ev(`{"timestamp":1,"type":"FROM_JOB_MSG","data":{}}`), `batsim: event 0: unknown event type "FROM_JOB_MSG"`},
		{"duplicate type", FromBatsim, ev(`{"timestamp":1,"type":"REQUESTED_CALL","type":"SIMULATION_ENDS","data":{}}`), `batsim: event 0: "type": duplicate member`},
		{"duplicate job id", FromScheduler, ev(`{"timestamp":1,"type":"REJECT_JOB","data":{"job_id":"w!1","job_id":"w!2"}}`), `batsim: event 0 (REJECT_JOB): field "job_id": duplicate member`},
		{"duplicate profile", FromBatsim, ev(`{"timestamp":0,"type":"SIMULATION_BEGINS","data":{"nb_resources":0,"config":{},"compute_resources":[],"profiles":{"w0":{"a":{"type":"delay"},"a":{"type":"delay"}}}}}`),
			`batsim: event 0 (SIMULATION_BEGINS): field "profiles.w0.a": duplicate member`},
		{"no data", FromBatsim, ev(`{"timestamp":1,"type":"JOB_COMPLETED"}`), `batsim: event 0 (JOB_COMPLETED): "data": missing`},
		{"data is an array", FromBatsim, ev(`{"timestamp":1,"type":"JOB_COMPLETED","data":[]}`), `batsim: event 0 (JOB_COMPLETED): "data": expected object, got array`},
		{"data of SIMULATION_ENDS is a string", FromBatsim, ev(`{"timestamp":1,"type":"SIMULATION_ENDS","data":"x"}`), `batsim: event 0 (SIMULATION_ENDS): "data": expected object, got string`},

		// Message-level rules.
		{"timestamp after now", FromBatsim, ev(`{"timestamp":11,"type":"REQUESTED_CALL","data":{}}`), `batsim: event 0 (REQUESTED_CALL): timestamp 11 is later than now 10`},
		{"timestamps decreasing", FromBatsim, ev(`{"timestamp":5,"type":"REQUESTED_CALL","data":{}},{"timestamp":4.5,"type":"REQUESTED_CALL","data":{}}`), `batsim: event 1 (REQUESTED_CALL): timestamp 4.5 is earlier than event 0's 5`},
		{"negative timestamp", FromBatsim, ev(`{"timestamp":-0.5,"type":"REQUESTED_CALL","data":{}}`), `batsim: event 0 (REQUESTED_CALL): negative timestamp -0.5`},
		{"decision from Batsim", FromBatsim, ev(`{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":[]}}`), `batsim: event 0 (EXECUTE_JOB): Batsim does not send EXECUTE_JOB events`},
		{"Batsim event from the scheduler", FromScheduler, ev(`{"timestamp":1,"type":"JOB_SUBMITTED","data":{}}`), `batsim: event 0 (JOB_SUBMITTED): the decision process does not send JOB_SUBMITTED events`},

		// Data from Batsim.
		{"job_id is an array", FromBatsim, ev(`{"timestamp":1,"type":"REQUESTED_CALL","data":{}},{"timestamp":1,"type":"REQUESTED_CALL","data":{}},{"timestamp":2,"type":"JOB_SUBMITTED","data":{"job_id":["a"],"job":{}}}`),
			`batsim: event 2 (JOB_SUBMITTED): field "job_id": expected string, got array`},
		{"job_id is a float", FromBatsim, ev(`{"timestamp":1,"type":"JOB_COMPLETED","data":{"job_id":1.5,"job_state":"REJECTED"}}`), `batsim: event 0 (JOB_COMPLETED): field "job_id": expected integer, got number 1.5`},
		{"job missing (Redis mode)", FromBatsim, ev(`{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":"w!1"}}`), `batsim: event 0 (JOB_SUBMITTED): field "job": missing`},
		{"job without res", FromBatsim, ev(`{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":"w!1","job":{"id":"w!1","subtime":1,"profile":"p"}}}`), `batsim: event 0 (JOB_SUBMITTED): field "job.res": missing`},
		{"res is a string", FromBatsim, ev(`{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":"w!1","job":{"id":"w!1","subtime":1,"res":"2","profile":"p"}}}`), `batsim: event 0 (JOB_SUBMITTED): field "job.res": expected integer, got string`},
		{"res is fractional", FromBatsim, ev(`{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":"w!1","job":{"id":"w!1","subtime":1,"res":1.5,"profile":"p"}}}`), `batsim: event 0 (JOB_SUBMITTED): field "job.res": expected integer, got number 1.5`},
		{"res is huge", FromBatsim, ev(`{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":"w!1","job":{"id":"w!1","subtime":1,"res":1e30,"profile":"p"}}}`), `batsim: event 0 (JOB_SUBMITTED): field "job.res": number 1e30 out of range`},
		{"negative res", FromBatsim, ev(`{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":"w!1","job":{"id":"w!1","subtime":1,"res":-2,"profile":"p"}}}`), `batsim: event 0 (JOB_SUBMITTED): field "job.res": negative number of resources -2`},
		{"bad walltime", FromBatsim, ev(`{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":"w!1","job":{"id":"w!1","subtime":1,"res":1,"profile":"p","walltime":-3}}}`), `batsim: event 0 (JOB_SUBMITTED): field "job.walltime": must be positive or -1, got -3`},
		{"empty job id", FromBatsim, ev(`{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":"","job":{"id":"w!1","subtime":1,"res":1,"profile":"p"}}}`), `batsim: event 0 (JOB_SUBMITTED): field "job_id": empty`},
		{"profile without type", FromBatsim, ev(`{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":"w!1","job":{"id":"w!1","subtime":1,"res":1,"profile":"p"},"profile":{"delay":1}}}`), `batsim: event 0 (JOB_SUBMITTED): field "profile.type": missing`},
		{"unknown job state", FromBatsim, ev(`{"timestamp":1,"type":"JOB_COMPLETED","data":{"job_id":"w!1","job_state":"DONE","return_code":0,"alloc":"0"}}`), `batsim: event 0 (JOB_COMPLETED): field "job_state": "DONE" is not a final job state`},
		{"bad alloc", FromBatsim, ev(`{"timestamp":1,"type":"JOB_COMPLETED","data":{"job_id":"w!1","job_state":"REJECTED","alloc":"3-1"}}`), `batsim: event 0 (JOB_COMPLETED): field "alloc": interval set "3-1": decreasing range "3-1"`},
		{"job_ids element", FromBatsim, ev(`{"timestamp":1,"type":"JOB_KILLED","data":{"job_ids":["w!1",{}]}}`), `batsim: event 0 (JOB_KILLED): field "job_ids[1]": expected string, got object`},
		{"no job_ids", FromBatsim, ev(`{"timestamp":1,"type":"JOB_KILLED","data":{"job_ids":[]}}`), `batsim: event 0 (JOB_KILLED): field "job_ids": empty`},
		{"progress", FromBatsim, ev(`{"timestamp":1,"type":"JOB_KILLED","data":{"job_ids":["w!1"],"job_progress":{"w!1":{"profile_name":"p","current_task_index":0,"current_task":{"profile_name":"q","progress":"half"}}}}}`),
			`batsim: event 0 (JOB_KILLED): field "job_progress.w!1.current_task.progress": expected number, got string`},
		{"resource id", FromBatsim, ev(`{"timestamp":0,"type":"SIMULATION_BEGINS","data":{"nb_resources":2,"nb_compute_resources":2,"config":{},"compute_resources":[{"id":0,"name":"a"},{"id":"1","name":"b"}]}}`),
			`batsim: event 0 (SIMULATION_BEGINS): field "compute_resources[1].id": expected integer, got string`},
		{"duplicate resource id", FromBatsim, ev(`{"timestamp":0,"type":"SIMULATION_BEGINS","data":{"nb_resources":2,"nb_compute_resources":2,"config":{},"compute_resources":[{"id":0,"name":"a"},{"id":0,"name":"b"}]}}`),
			`batsim: event 0 (SIMULATION_BEGINS): field "compute_resources[1].id": duplicate resource id 0`},
		{"property not a string", FromBatsim, ev(`{"timestamp":0,"type":"SIMULATION_BEGINS","data":{"nb_resources":1,"nb_compute_resources":1,"config":{},"compute_resources":[{"id":0,"name":"a","properties":{"core":6}}]}}`),
			`batsim: event 0 (SIMULATION_BEGINS): field "compute_resources[0].properties.core": expected string, got number`},
		{"resource count", FromBatsim, ev(`{"timestamp":0,"type":"SIMULATION_BEGINS","data":{"nb_resources":2,"nb_compute_resources":2,"config":{},"compute_resources":[{"id":0,"name":"a"}]}}`),
			`batsim: event 0 (SIMULATION_BEGINS): field "nb_compute_resources": 2 but compute_resources has 1 entries`},
		{"config", FromBatsim, ev(`{"timestamp":0,"type":"SIMULATION_BEGINS","data":{"nb_resources":0,"config":{"dynamic-jobs-enabled":"yes"},"compute_resources":[]}}`),
			`batsim: event 0 (SIMULATION_BEGINS): field "config.dynamic-jobs-enabled": expected boolean, got string`},
		{"profile in SIMULATION_BEGINS", FromBatsim, ev(`{"timestamp":0,"type":"SIMULATION_BEGINS","data":{"nb_resources":0,"config":{},"compute_resources":[],"profiles":{"w0":{"a":{"type":"delay"},"b":{"type":7}}}}}`),
			`batsim: event 0 (SIMULATION_BEGINS): field "profiles.w0.b.type": expected string, got number`},
		{"machine event without resources", FromBatsim, ev(`{"timestamp":1,"type":"NOTIFY","data":{"type":"event_machine_available"}}`), `batsim: event 0 (NOTIFY): field "resources": missing`},
		{"notify without type", FromBatsim, ev(`{"timestamp":1,"type":"NOTIFY","data":{}}`), `batsim: event 0 (NOTIFY): field "type": missing`},
		{"unknown query", FromBatsim, ev(`{"timestamp":1,"type":"QUERY","data":{"requests":{"temperature":{}}}}`), `batsim: event 0 (QUERY): field "requests.temperature": unknown request`},
		{"query of the other side", FromBatsim, ev(`{"timestamp":1,"type":"QUERY","data":{"requests":{"consumed_energy":{}}}}`), `batsim: event 0 (QUERY): field "requests.consumed_energy": Batsim does not send this query`},
		{"empty query", FromBatsim, ev(`{"timestamp":1,"type":"QUERY","data":{"requests":{}}}`), `batsim: event 0 (QUERY): field "requests": empty`},
		{"unknown answer", FromBatsim, ev(`{"timestamp":1,"type":"ANSWER","data":{"consumed_energy":1,"temperature":3}}`), `batsim: event 0 (ANSWER): field "temperature": unknown answer`},
		{"empty answer", FromBatsim, ev(`{"timestamp":1,"type":"ANSWER","data":{}}`), `batsim: event 0 (ANSWER): no answer`},

		// Data from the decision process.
		{"no alloc", FromScheduler, ev(`{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":"w!1"}}`), `batsim: event 0 (EXECUTE_JOB): field "alloc": missing`},
		{"empty alloc", FromScheduler, ev(`{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":"w!1","alloc":""}}`), `batsim: event 0 (EXECUTE_JOB): field "alloc": empty allocation`},
		{"alloc is a list", FromScheduler, ev(`{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":"w!1","alloc":[0,1]}}`), `batsim: event 0 (EXECUTE_JOB): field "alloc": expected string, got array`},
		{"alloc with a letter", FromScheduler, ev(`{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":"w!1","alloc":"0 a"}}`), `batsim: event 0 (EXECUTE_JOB): field "alloc": interval set "0 a": "a" is not an id or a range of ids`},
		{"mapping hole", FromScheduler, ev(`{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":"w!1","alloc":"0-1","mapping":{"0":0,"2":1}}}`), `batsim: event 0 (EXECUTE_JOB): field "mapping": no resource for executor 1 of 2`},
		{"mapping index", FromScheduler, ev(`{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":"w!1","alloc":"0-1","mapping":{"0":0,"1":2}}}`), `batsim: event 0 (EXECUTE_JOB): field "mapping.1": index 2 outside the allocation of 2 resources`},
		{"mapping key", FromScheduler, ev(`{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":"w!1","alloc":"0-1","mapping":{"x":0}}}`), `batsim: event 0 (EXECUTE_JOB): field "mapping.x": executor "x" is not an integer`},
		{"mapping value", FromScheduler, ev(`{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":"w!1","alloc":"0-1","mapping":{"0":"first"}}}`), `batsim: event 0 (EXECUTE_JOB): field "mapping.0": "first" is not an integer`},
		{"unsupported member", FromScheduler, ev(`{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":"w!1","alloc":"0","additional_io_job":{}}}`), `batsim: event 0 (EXECUTE_JOB): field "additional_io_job": unexpected field`},
		{"reject with extra member", FromScheduler, ev(`{"timestamp":1,"type":"REJECT_JOB","data":{"job_id":"w!1","reason":"x"}}`), `batsim: event 0 (REJECT_JOB): field "reason": unexpected field`},
		{"kill without ids", FromScheduler, ev(`{"timestamp":1,"type":"KILL_JOB","data":{}}`), `batsim: event 0 (KILL_JOB): field "job_ids": missing`},
		{"call me later at a string", FromScheduler, ev(`{"timestamp":1,"type":"CALL_ME_LATER","data":{"timestamp":"20"}}`), `batsim: event 0 (CALL_ME_LATER): field "timestamp": expected number, got string`},
		{"register job without subtime", FromScheduler, ev(`{"timestamp":1,"type":"REGISTER_JOB","data":{"job_id":"dyn!1","job":{"id":"dyn!1","res":1,"profile":"p"}}}`), `batsim: event 0 (REGISTER_JOB): field "job.subtime": missing`},
		{"register profile without type", FromScheduler, ev(`{"timestamp":1,"type":"REGISTER_PROFILE","data":{"workload_name":"dyn","profile_name":"p","profile":{"type":""}}}`), `batsim: event 0 (REGISTER_PROFILE): field "profile.type": empty`},
		{"power state", FromScheduler, ev(`{"timestamp":1,"type":"SET_RESOURCE_STATE","data":{"resources":"0","state":"off"}}`), `batsim: event 0 (SET_RESOURCE_STATE): field "state": "off" is not a power state number`},
		{"negative resource", FromScheduler, ev(`{"timestamp":1,"type":"SET_RESOURCE_STATE","data":{"resources":"-1","state":"0"}}`), `batsim: event 0 (SET_RESOURCE_STATE): field "resources": interval set "-1": negative or missing id in "-1"`},
		{"metadata missing", FromScheduler, ev(`{"timestamp":1,"type":"SET_JOB_METADATA","data":{"job_id":"w!1"}}`), `batsim: event 0 (SET_JOB_METADATA): field "metadata": missing`},
		{"change to a state Batsim refuses", FromScheduler, ev(`{"timestamp":1,"type":"CHANGE_JOB_STATE","data":{"job_id":"w!1","job_state":"COMPLETED_FAILED"}}`), `batsim: event 0 (CHANGE_JOB_STATE): field "job_state": "COMPLETED_FAILED" is not a state Batsim accepts here`},
		{"notification of Batsim's", FromScheduler, ev(`{"timestamp":1,"type":"NOTIFY","data":{"type":"no_more_static_job_to_submit"}}`),
			`batsim: event 0 (NOTIFY): field "type": "no_more_static_job_to_submit" is not a notification a decision process sends (registration_finished or continue_registration)`},
		{"answer of Batsim's", FromScheduler, ev(`{"timestamp":1,"type":"ANSWER","data":{"consumed_energy":3}}`), `batsim: event 0 (ANSWER): field "consumed_energy": the decision process does not send this answer`},
		{"estimate without job", FromScheduler, ev(`{"timestamp":1,"type":"ANSWER","data":{"estimate_waiting_time":{"job_id":"w!1"}}}`), `batsim: event 0 (ANSWER): field "estimate_waiting_time.estimated_waiting_time": missing`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.in), tc.from)
			if got := errString(err); got != tc.want {
				t.Fatalf("Decode error:\ngot  %s\nwant %s", got, tc.want)
			}
			var me *MessageError
			if !errors.As(err, &me) {
				t.Fatalf("error %T is not a *MessageError", err)
			}
			if m.Events != nil || m.Now != 0 {
				t.Errorf("Decode returned %+v with its error, want the zero Message", m)
			}
		})
	}
}

func TestMessageErrorFields(t *testing.T) {
	_, err := Decode([]byte(ev(`{"timestamp":1,"type":"REQUESTED_CALL","data":{}},{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":"w!1","job":{"id":"w!1","subtime":1,"res":"x","profile":"p"}}}`)), FromBatsim)
	var me *MessageError
	if !errors.As(err, &me) {
		t.Fatalf("got %v, want a *MessageError", err)
	}
	if me.Event != 1 || me.Type != TypeJobSubmitted || me.Field != "job.res" {
		t.Errorf("got Event %d, Type %q, Field %q; want 1, JOB_SUBMITTED, job.res", me.Event, me.Type, me.Field)
	}
	var ke *kindError
	if !errors.As(err, &ke) || ke.want != "integer" || ke.got != "string" {
		t.Errorf("got cause %#v, want expected integer, got string", me.Err)
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		name string
		from Direction
		m    Message
		want string
	}{
		{"nil data", FromScheduler, Message{Now: 1, Events: []Event{{Timestamp: 1}}}, `batsim: event 0: no data`},
		{"NaN now", FromScheduler, Message{Now: math.NaN()}, `batsim: field "now": NaN is not a time`},
		{"infinite timestamp", FromScheduler, Message{Now: 1, Events: []Event{{Timestamp: math.Inf(1), Data: RejectJob{JobID: "w!1"}}}}, `batsim: event 0 (REJECT_JOB): timestamp +Inf is not a time`},
		{"after now", FromScheduler, Message{Now: 1, Events: []Event{{Timestamp: 2, Data: RejectJob{JobID: "w!1"}}}}, `batsim: event 0 (REJECT_JOB): timestamp 2 is later than now 1`},
		{"wrong direction", FromBatsim, Message{Now: 1, Events: []Event{{Timestamp: 1, Data: RejectJob{JobID: "w!1"}}}}, `batsim: event 0 (REJECT_JOB): Batsim does not send REJECT_JOB events`},
		{"empty alloc", FromScheduler, Message{Now: 1, Events: []Event{{Timestamp: 1, Data: ExecuteJob{JobID: "w!1"}}}}, `batsim: event 0 (EXECUTE_JOB): field "alloc": empty allocation`},
		{"NaN in data", FromScheduler, Message{Now: 1, Events: []Event{{Timestamp: 1, Data: CallMeLater{At: math.NaN()}}}}, `batsim: event 0 (CALL_ME_LATER): NaN cannot be written in JSON`},
		{"invalid raw JSON", FromScheduler, Message{Now: 1, Events: []Event{{Timestamp: 1, Data: RegisterProfile{WorkloadName: "w", ProfileName: "p", Profile: Profile{Type: "delay", Fields: map[string]json.RawMessage{"delay": []byte("{")}}}}}},
			`batsim: event 0 (REGISTER_PROFILE): invalid raw JSON value: unexpected end of JSON input`},
		{"extra shadows a field", FromScheduler, Message{Now: 1, Events: []Event{{Timestamp: 1, Data: RegisterJob{JobID: "w!1", Job: Job{ID: "w!1", Res: 1, Profile: "p", Extra: map[string]json.RawMessage{"res": []byte("2")}}}}}},
			`batsim: event 0 (REGISTER_JOB): field "job.res": extra field shadows a known one`},
		{"resources on another notification", FromBatsim, Message{Now: 1, Events: []Event{{Timestamp: 1, Data: Notify{Type: NoMoreStaticJobToSubmit, Resources: set(t, "1")}}}},
			`batsim: event 0 (NOTIFY): field "resources": only event_machine_unavailable and event_machine_available notifications have resources`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Encode(tc.m, tc.from)
			if got := errString(err); got != tc.want {
				t.Fatalf("Encode error:\ngot  %s\nwant %s", got, tc.want)
			}
			if b != nil {
				t.Errorf("Encode returned %s with its error, want nil", b)
			}
		})
	}
}
