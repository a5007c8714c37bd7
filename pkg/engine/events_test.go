package engine

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// runEvents runs a workload file with events on n hosts of 1 Gflops with
// firstFitAll (which, as a decision process unaware of the machines'
// availability, starts jobs on the lowest free hosts), and returns the
// messages and the outputs.
func runEvents(t *testing.T, workload string, n int, events ...*EventList) (msgs []Message, jobs, states string, sched Schedule, err error) {
	t.Helper()
	w := mustReadWorkload(t, workload)
	var jobsOut, statesOut bytes.Buffer
	e := mustNew(t, homogeneous(n), []*Workload{w}, Options{JobsOutput: &jobsOut, MachineStatesOutput: &statesOut, Events: events})
	msgs, err = drive(e, firstFitAll(n))
	return msgs, jobsOut.String(), statesOut.String(), e.Schedule(0, 0), err
}

// notifications renders the NOTIFYs of the messages: "now: type resources".
func notifications(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, ev := range m.Events {
			if n, ok := ev.(Notification); ok {
				b.WriteString(formatSeconds(n.Timestamp) + ": " + string(n.Kind))
				if len(n.Resources) > 0 {
					b.WriteString(" " + formatIDs(n.Resources))
				}
				if len(n.Event) > 0 {
					b.WriteString(" " + string(n.Event))
				}
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

func formatSeconds(s float64) string { return string(appendSeconds6(nil, s)) }

// TestMachineEventsAsBatsim runs testdata/events/failures.json with
// failures.txt, and checks the notifications and the outputs a real Batsim
// 4.2.1 run gives (byte for byte, but for the NOTIFYs of one date, which
// Batsim splits in several messages). Batsim's server makes the machines of
// a machine_unavailable event unavailable and notifies the decision process
// (event_machine_unavailable): the jobs running on them go on, and end as
// they would (a on machine 0, b on 1: completed at 20 and 10); a machine
// whose jobs end while it is unavailable stays so; machine_available makes
// them computing (0: a still runs) or idle, and notifies
// (event_machine_available). The events of one date come in the order of
// their types (available, unavailable, generic: 1 is available again at 30
// before 0 and 3 fail), then of the file. Unavailable machines count in no
// column of _machine_states.csv, and their time goes to _schedule.csv's
// time_unavailable: machines 0 and 1 from 5 (to 12.5 and 30), 0 and 3 from
// 30 to 50: 7.5 + 25 + 20 + 20 = 72.5 s. The simulation ends after the last
// job (62) and the last event (50), no_more_external_event_to_occur
// following the last event.
func TestMachineEventsAsBatsim(t *testing.T) {
	events, err := ReadEventsFile("testdata/events/failures.txt", BatsimEventListName(0), true)
	if err != nil {
		t.Fatal(err)
	}
	msgs, jobs, states, sched, err := runEvents(t, "testdata/events/failures.json", 4, events)
	if err != nil {
		t.Fatalf("%v\n%s", err, trace(msgs))
	}
	wantNotes := `5: event_machine_unavailable 0-1
12.5: event_machine_available 0
12.5: maintenance {"type": "maintenance", "timestamp": 12.5, "window": [13, 14], "note": "rack 2"}
30: event_machine_available 1
30: event_machine_unavailable 0 3
50: event_machine_available 0 3
50: no_more_external_event_to_occur
52: no_more_static_job_to_submit
`
	if got := notifications(msgs); got != wantNotes {
		t.Errorf("notifications:\n%s\nwant:\n%s", got, wantNotes)
	}
	wantJobs := jobsHeader + `b,w0,d8,2.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,2.000000,8.000000,10.000000,0.000000,8.000000,1.000000,1,-1.000000,""
a,w0,d20,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,20.000000,20.000000,0.000000,20.000000,1.000000,0,-1.000000,""
c,w0,d10,25.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,25.000000,10.000000,35.000000,0.000000,10.000000,1.000000,0,-1.000000,""
d,w0,d10,52.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,52.000000,10.000000,62.000000,0.000000,10.000000,1.000000,0-1,-1.000000,""
`
	if jobs != wantJobs {
		t.Errorf("_jobs.csv differs: %s", firstDiff(jobs, wantJobs))
	}
	// Batsim writes the first row at 5e-300 (its internal messages' latency
	// with --sg-cfg network/loopback-bw:1e300).
	wantStates := machineStatesHeader + `0,0,0,0,3,1
2,0,0,0,2,2
10,0,0,0,2,0
20,0,0,0,3,0
25,0,0,0,2,1
35,0,0,0,2,0
52,0,0,0,2,2
62,0,0,0,4,0
`
	if states != wantStates {
		t.Errorf("_machine_states.csv differs: %s", firstDiff(states, wantStates))
	}
	if sched.TimeComputing != 40.5 || sched.TimeIdle != 61 || sched.TimeUnavailable != 72.5 || sched.Makespan != 62 {
		t.Errorf("schedule: time_computing %g, time_idle %g, time_unavailable %g, makespan %g; want 40.5, 61, 72.5 and 62",
			sched.TimeComputing, sched.TimeIdle, sched.TimeUnavailable, sched.Makespan)
	}
}

func mustEvents(t *testing.T, name, text string, forward bool) *EventList {
	t.Helper()
	l, err := ParseEvents(strings.NewReader(text), name, forward)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestEventsFileErrors checks the events files Batsim refuses as it loads
// them (an unknown type without --forward-unknown-events, no timestamp, a
// negative one, resources that are no interval set, a line that is no JSON
// object, even of spaces), and machines that do not exist (Batsim aborts
// when the event occurs).
func TestEventsFileErrors(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"unknown type", `{"timestamp": 1, "type": "reboot"}`, `unknown event type "reboot"`},
		{"no type", `{"timestamp": 1}`, "no type field"},
		{"no timestamp", `{"type": "machine_available", "resources": "0"}`, "no timestamp field"},
		{"negative timestamp", `{"timestamp": -1, "type": "machine_available", "resources": "0"}`, "timestamp is -1, want a date >= 0 seconds"},
		{"no resources", `{"timestamp": 1, "type": "machine_unavailable"}`, "no resources field"},
		{"empty resources", `{"timestamp": 1, "type": "machine_unavailable", "resources": ""}`, `"" is not an interval set`},
		{"bad interval", `{"timestamp": 1, "type": "machine_unavailable", "resources": "3-1"}`, `"3-1" is not an interval set`},
		{"bad separator", `{"timestamp": 1, "type": "machine_unavailable", "resources": "0,1"}`, `"0,1" is not an interval set`},
		{"not an object", `[1]`, "line 1: an event: not a JSON object"},
		{"spaces", "{\"timestamp\": 1, \"type\": \"machine_available\", \"resources\": \"0\"}\n  \n", "line 2: an event: invalid JSON"},
	} {
		if _, err := ParseEvents(strings.NewReader(c.text), "we0", false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
	l := mustEvents(t, "we0", `{"timestamp": 1, "type": "machine_unavailable", "resources": "1-4"}`, false)
	if _, err := New(hostsPlatform([]float64{1, 1}), nil, Options{Events: []*EventList{l}}); err == nil || !strings.Contains(err.Error(), "names machine 2, which does not exist") {
		t.Errorf("a machine that does not exist: got %v", err)
	}
}

// TestMachineEventsMisuse checks what real Batsim aborts on: a machine made
// unavailable twice, made available while it is not unavailable, a job
// started on an unavailable machine.
func TestMachineEventsMisuse(t *testing.T) {
	w := mustWorkload(t, "w0", `{"nb_res": 2, "profiles": {"d": {"type": "delay", "delay": 5}},
		"jobs": [{"id": "a", "subtime": 3, "res": 2, "profile": "d"}]}`)
	run := func(events string, decide policy) ([]Message, error) {
		e := mustNew(t, hostsPlatform([]float64{1, 1}), []*Workload{w}, Options{Events: []*EventList{mustEvents(t, "we0", events, false)}})
		return drive(e, decide)
	}
	twice := `{"timestamp": 1, "type": "machine_unavailable", "resources": "0"}
{"timestamp": 2, "type": "machine_unavailable", "resources": "0-1"}`
	if _, err := run(twice, nil); err == nil || !strings.Contains(err.Error(), "machine 0 (node0) is made unavailable while it is unavailable already") {
		t.Errorf("unavailable twice: got %v", err)
	}
	if _, err := run(`{"timestamp": 1, "type": "machine_available", "resources": "1"}`, nil); err == nil ||
		!strings.Contains(err.Error(), "machine 1 (node1) is made available while it is idle, not unavailable") {
		t.Errorf("available while idle: got %v", err)
	}
	_, err := run(`{"timestamp": 1, "type": "machine_unavailable", "resources": "1"}`, firstFitAll(2))
	var de *DecisionError
	if !errors.As(err, &de) || de.Field != "alloc" || !strings.Contains(err.Error(), "resource 1 (node1) is unavailable") {
		t.Errorf("a job on an unavailable machine: got %v, want a DecisionError on alloc", err)
	}
}

// TestEventsKeepTheSimulationGoing checks that the simulation ends after
// the last event of the last events file, even when no job is left, that
// no_more_external_event_to_occur follows it, and that the events files'
// events are sorted by timestamp, then type (available before unavailable
// before generic), then as written.
func TestEventsKeepTheSimulationGoing(t *testing.T) {
	w := mustWorkload(t, "w0", `{"nb_res": 2, "profiles": {"d": {"type": "delay", "delay": 1}},
		"jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "d"}]}`)
	l0 := mustEvents(t, "we0", `{"timestamp": 7, "type": "b", "n": 1}
{"timestamp": 7, "type": "machine_available", "resources": "1"}
{"timestamp": 7, "type": "a", "n": 2}
{"timestamp": 3, "type": "machine_unavailable", "resources": "1"}`, true)
	l1 := mustEvents(t, "we1", `{"timestamp": 100, "type": "late"}`, true)
	var types []string
	for _, ev := range l0.Events {
		types = append(types, ev.Type)
	}
	if got := strings.Join(types, " "); got != "machine_unavailable machine_available b a" {
		t.Errorf("events sorted as %s", got)
	}
	e := mustNew(t, hostsPlatform([]float64{1, 1}), []*Workload{w}, Options{Events: []*EventList{l0, l1}})
	msgs, err := drive(e, firstFitAll(2))
	if err != nil {
		t.Fatal(err)
	}
	want := `3: event_machine_unavailable 1
7: event_machine_available 1
7: b {"timestamp": 7, "type": "b", "n": 1}
7: a {"timestamp": 7, "type": "a", "n": 2}
100: late {"timestamp": 100, "type": "late"}
100: no_more_external_event_to_occur
`
	if got := notifications(msgs); !strings.HasSuffix(got, want) {
		t.Errorf("notifications:\n%s\nwant them to end with:\n%s", got, want)
	}
	if last := msgs[len(msgs)-1]; last.Now != 100 || last.Events[0].Type() != "SIMULATION_ENDS" {
		t.Errorf("the simulation ends with %s at %g, want SIMULATION_ENDS at 100", last.Events[0].Type(), last.Now)
	}
}
