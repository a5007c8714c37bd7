package enginerun_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/engine"
	"github.com/batkube/batkube/pkg/enginerun"
	"github.com/batkube/batkube/pkg/enginerun/enginetest"
)

// The headers of Batsim 4.2.1's outputs, byte for byte (from
// docs/batsim-protocol.md).
const (
	batsimJobsHeader = "job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time," +
		"success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch," +
		"allocated_resources,consumed_energy,metadata\n"
	batsimScheduleHeader = "batsim_version,consumed_joules,makespan,max_slowdown,max_turnaround_time,max_waiting_time," +
		"mean_slowdown,mean_turnaround_time,mean_waiting_time,nb_computing_machines,nb_grouped_switches,nb_jobs," +
		"nb_jobs_finished,nb_jobs_killed,nb_jobs_rejected,nb_jobs_success,nb_machine_switches,scheduling_time," +
		"simulation_time,success_rate,time_computing,time_idle,time_sleeping,time_switching_off,time_switching_on," +
		"time_unavailable\n"
)

// writeWorkload writes a workload file in a temporary directory and returns
// its absolute path.
func writeWorkload(t testing.TB, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "workload.json")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// scheduleRows reads the rows of prefix_schedule.csv, checking that its
// header is Batsim's.
func scheduleRows(t testing.TB, prefix string) []map[string]string {
	t.Helper()
	path := prefix + "_schedule.csv"
	if sched := readFile(t, path); !strings.HasPrefix(sched, batsimScheduleHeader) {
		t.Errorf("_schedule.csv: got\n%s\nwant the header\n%s", sched, batsimScheduleHeader)
	}
	_, rows := readCSV(t, path)
	return rows
}

// TestRunMalformedRepliesEndTheRun sends replies that break the protocol or
// ask what the simulation cannot do, after a first job has finished: the
// run must end with an error naming the event and its field, with the
// outputs of the jobs finished so far written.
func TestRunMalformedRepliesEndTheRun(t *testing.T) {
	wl := writeWorkload(t, `{"nb_res": 2, "profiles": {"d5": {"type": "delay", "delay": 5}},
		"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d5"},
		         {"id": 2, "subtime": 6, "res": 1, "profile": "d5"}, {"id": 3, "subtime": 6, "res": 1, "profile": "d5"}]}`)
	// The replies before the one under test: SIMULATION_BEGINS; w0!1
	// submitted at 0, started on 0; w0!1 completed at 5. The fourth message
	// submits w0!2 and w0!3 at 6.
	first := []string{
		`{"now": 0, "events": []}`,
		`{"now": 0, "events": [{"timestamp": 0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0"}}]}`,
		`{"now": 5, "events": []}`,
	}
	execute := func(job, alloc string) string {
		return `{"timestamp": 6, "type": "EXECUTE_JOB", "data": {"job_id": "` + job + `", "alloc": "` + alloc + `"}}`
	}
	tests := []struct {
		name    string
		reply   string
		dynamic bool
		want    []string
	}{
		{name: "bad JSON", reply: `{"now": 6, "events": [`, want: []string{"invalid reply", "invalid JSON"}},
		{name: "no now", reply: `{"events": []}`, want: []string{`field "now": missing`}},
		{name: "unknown event type", reply: `{"now": 6, "events": [{"timestamp": 6, "type": "EXECUTE_JOBS", "data": {}}]}`,
			want: []string{`event 0: unknown event type "EXECUTE_JOBS"`}},
		{name: "missing field", reply: `{"now": 6, "events": [{"timestamp": 6, "type": "EXECUTE_JOB", "data": {"job_id": "w0!2"}}]}`,
			want: []string{`event 0 (EXECUTE_JOB): field "alloc": missing`}},
		{name: "EXECUTE_JOB of an unknown job", reply: `{"now": 6, "events": [` + execute("w0!9", "1") + `]}`,
			want: []string{`event 0 (EXECUTE_JOB): field "job_id": job "w0!9" does not exist`}},
		{name: "EXECUTE_JOB of a finished job", reply: `{"now": 6, "events": [` + execute("w0!1", "1") + `]}`,
			want: []string{`event 0 (EXECUTE_JOB): field "job_id": job "w0!1" is finished (COMPLETED_SUCCESSFULLY)`}},
		{name: "alloc out of range", reply: `{"now": 6, "events": [` + execute("w0!2", "7") + `]}`,
			want: []string{`event 0 (EXECUTE_JOB): field "alloc": job "w0!2": resource 7 does not exist (the platform has 4 resources, 0-3)`}},
		{name: "alloc far out of range", reply: `{"now": 6, "events": [` + execute("w0!2", "0-2147483647") + `]}`,
			want: []string{`event 0 (EXECUTE_JOB): field "alloc": job "w0!2": resource 2147483647 does not exist`}},
		{name: "second event of the wrong size", reply: `{"now": 6, "events": [` + execute("w0!2", "1") + `, ` + execute("w0!3", "2-3") + `]}`,
			want: []string{`event 1 (EXECUTE_JOB): field "alloc": job "w0!3" asks for 1 resources but was given 2 (2-3)`}},
		{name: "busy host without --enable-compute-sharing", reply: `{"now": 6, "events": [` + execute("w0!2", "1") + `, ` + execute("w0!3", "1") + `]}`,
			want: []string{`event 1 (EXECUTE_JOB): field "alloc": job "w0!3": resource 1 (node1) is running job "w0!2" and compute sharing is off`}},
		{name: "CALL_ME_LATER in the past", reply: `{"now": 6, "events": [{"timestamp": 6, "type": "CALL_ME_LATER", "data": {"timestamp": 6}}]}`,
			// now is 6 and the tenths of a nanosecond the server took
			// to get the submissions and the decision (SimGrid's loopback)
			want: []string{`event 0 (CALL_ME_LATER): field "timestamp": asked to be called at 6, which is not after now (6.0000000005)`}},
		{name: "REGISTER_JOB without subtime", dynamic: true,
			reply: `{"now": 6, "events": [{"timestamp": 6, "type": "REGISTER_JOB", "data": {"job_id": "w0!x", "job": {"id": "w0!x", "res": 1, "profile": "d5"}}}]}`,
			want:  []string{`event 0 (REGISTER_JOB): field "job.subtime": missing`}},
		{name: "KILL_JOB of a waiting job", reply: `{"now": 6, "events": [{"timestamp": 6, "type": "KILL_JOB", "data": {"job_ids": ["w0!2"]}}]}`,
			want: []string{`event 0 (KILL_JOB): field "job_ids[0]": job "w0!2" is waiting to start`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replies := append(append([]string(nil), first...), tt.reply)
			endpoint := enginetest.RawPeer(t, replies, `{"now": 1000, "events": []}`)
			prefix := prefixIn(t)
			sum, err := enginerun.Run(context.Background(), enginerun.Config{
				Platform:     platform("platform_4.xml"),
				Workloads:    []string{wl},
				Endpoint:     endpoint,
				ExportPrefix: prefix,
				DynamicJobs:  tt.dynamic,
				Timeout:      time.Minute,
			})
			if err == nil {
				t.Fatal("Run: got no error")
			}
			t.Logf("Run: %v", err)
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Run: got error %q, want it to say %q", err, want)
				}
			}
			var me *batsim.MessageError
			var de *engine.DecisionError
			if !errors.As(err, &me) && !errors.As(err, &de) {
				t.Errorf("Run: got %T, want an error wrapping a *batsim.MessageError or an *engine.DecisionError", err)
			}
			if sum.Messages != 4 || sum.Succeeded != 1 {
				t.Errorf("summary: got %d messages and %d jobs succeeded, want 4 and 1", sum.Messages, sum.Succeeded)
			}
			wantJobs := batsimJobsHeader +
				"1,w0,d5,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,5.000000,5.000000,0.000000,5.000000,1.000000,0,-1.000000,\"\"\n"
			if got := readFile(t, prefix+"_jobs.csv"); got != wantJobs {
				t.Errorf("_jobs.csv: got\n%s\nwant the job finished before the error\n%s", got, wantJobs)
			}
			rows := scheduleRows(t, prefix)
			if len(rows) != 1 || rows[0]["nb_jobs"] != "1" || rows[0]["nb_jobs_success"] != "1" || rows[0]["makespan"] != "5.000000" {
				t.Errorf("_schedule.csv: got %v, want the one job finished so far", rows)
			}
		})
	}
}

// TestRunKillRejectWalltimeAsBatsim runs, over ZeroMQ, a decision process
// that kills, rejects, lets a job reach its walltime, asks for a call and
// sets metadata, and checks what it receives and the outputs, byte for
// byte.
func TestRunKillRejectWalltimeAsBatsim(t *testing.T) {
	wl := writeWorkload(t, `{"nb_res": 4, "profiles": {"d10": {"type": "delay", "delay": 10},
		"c": {"type": "parallel_homogeneous", "cpu": 10e9, "com": 0}},
		"jobs": [{"id": "k", "subtime": 0, "res": 1, "profile": "c"}, {"id": "r", "subtime": 0, "res": 1, "profile": "d10"},
		         {"id": "w", "subtime": 0, "res": 1, "profile": "d10", "walltime": 3}, {"id": "m", "subtime": 0, "res": 1, "profile": "d10"}]}`)
	rec := &recorder{next: enginetest.DeciderFunc(func(m batsim.Message) (batsim.Message, error) {
		reply := batsim.Message{Now: m.Now}
		add := func(d batsim.EventData) { reply.Events = append(reply.Events, batsim.Event{Timestamp: m.Now, Data: d}) }
		for _, ev := range m.Events {
			switch d := ev.Data.(type) {
			case batsim.JobSubmitted:
				switch d.JobID {
				case "w0!k":
					alloc, _ := batsim.ParseIntervalSet("0")
					add(batsim.ExecuteJob{JobID: d.JobID, Alloc: alloc})
					add(batsim.CallMeLater{At: 2})
				case "w0!r":
					add(batsim.RejectJob{JobID: d.JobID})
				case "w0!w":
					alloc, _ := batsim.ParseIntervalSet("1")
					add(batsim.ExecuteJob{JobID: d.JobID, Alloc: alloc})
				case "w0!m":
					alloc, _ := batsim.ParseIntervalSet("2")
					add(batsim.SetJobMetadata{JobID: d.JobID, Metadata: "x=1"})
					add(batsim.ExecuteJob{JobID: d.JobID, Alloc: alloc})
				}
			case batsim.RequestedCall:
				add(batsim.KillJob{JobIDs: []batsim.JobID{"w0!k"}})
			}
		}
		return reply, nil
	})}
	dp := startDecisionProcess(t, rec)
	prefix := prefixIn(t)
	sum := mustRun(t, dp, enginerun.Config{
		Platform:     platform("platform_4.xml"),
		Workloads:    []string{wl},
		Endpoint:     dp.endpoint,
		ExportPrefix: prefix,
		Timeout:      time.Minute,
	})
	if sum.Killed != 1 || sum.Rejected != 1 || sum.WalltimeReached != 1 || sum.Succeeded != 1 {
		t.Errorf("summary: got %+v, want one job killed, rejected, at its walltime and succeeded", sum)
	}

	var b strings.Builder
	for _, m := range rec.messages() {
		for _, ev := range m.Events {
			fmt.Fprintf(&b, "%g %s", ev.Timestamp, ev.Type())
			switch d := ev.Data.(type) {
			case batsim.SimulationBegins:
				if d.Workloads["w0"] != wl {
					t.Errorf("SIMULATION_BEGINS: workload path %q, want the absolute path %q unchanged", d.Workloads["w0"], wl)
				}
			case batsim.JobSubmitted:
				fmt.Fprintf(&b, " %s", d.JobID)
			case batsim.JobCompleted:
				fmt.Fprintf(&b, " %s %s alloc=%s ret=%d", d.JobID, d.JobState, d.Alloc, d.ReturnCode)
			case batsim.JobKilled:
				fmt.Fprintf(&b, " %v", d.JobIDs)
				if p, ok := d.Progress["w0!k"]; !ok || p.Profile != "c" || math.Abs(p.Progress-0.2) > 1e-9 {
					t.Errorf("JOB_KILLED progress: got %+v, want w0!k 20%% into c", d.Progress)
				}
			case batsim.Notify:
				fmt.Fprintf(&b, " %s", d.Type)
			}
			b.WriteByte('\n')
		}
	}
	wantTrace := `0 SIMULATION_BEGINS
0 JOB_SUBMITTED w0!k
0 JOB_SUBMITTED w0!m
0 JOB_SUBMITTED w0!r
0 JOB_SUBMITTED w0!w
0 NOTIFY no_more_static_job_to_submit
2 REQUESTED_CALL
2 JOB_COMPLETED w0!k COMPLETED_KILLED alloc=0 ret=-2
2 JOB_KILLED [w0!k]
3 JOB_COMPLETED w0!w COMPLETED_WALLTIME_REACHED alloc=1 ret=-1
10 JOB_COMPLETED w0!m COMPLETED_SUCCESSFULLY alloc=2 ret=0
10 SIMULATION_ENDS
`
	if got := b.String(); got != wantTrace {
		t.Errorf("events received:\n%s\nwant\n%s", got, wantTrace)
	}
	wantJobs := batsimJobsHeader +
		"r,w0,d10,0.000000,1,-1.000000,0,REJECTED,,,,,,,,,\"\"\n" +
		"k,w0,c,0.000000,1,-1.000000,0,COMPLETED_KILLED,0.000000,2.000000,2.000000,0.000000,2.000000,1.000000,0,-1.000000,\"\"\n" +
		"w,w0,d10,0.000000,1,3.000000,0,COMPLETED_WALLTIME_REACHED,0.000000,3.000000,3.000000,0.000000,3.000000,1.000000,1,-1.000000,\"\"\n" +
		"m,w0,d10,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,10.000000,10.000000,0.000000,10.000000,1.000000,2,-1.000000,\"x=1\"\n"
	if got := readFile(t, prefix+"_jobs.csv"); got != wantJobs {
		t.Errorf("_jobs.csv: got\n%s\nwant\n%s", got, wantJobs)
	}
	rows := scheduleRows(t, prefix)
	want := map[string]string{"nb_jobs": "4", "nb_jobs_finished": "3", "nb_jobs_killed": "2", "nb_jobs_rejected": "1",
		"nb_jobs_success": "1", "makespan": "10.000000", "mean_waiting_time": "0.000000", "success_rate": "0.250000",
		"consumed_joules": "0.000000", "nb_computing_machines": "4", "batsim_version": "batkube-engine"}
	for col, v := range want {
		if len(rows) != 1 || rows[0][col] != v {
			t.Errorf("_schedule.csv %s: got %v, want %s", col, rows, v)
		}
	}
}
