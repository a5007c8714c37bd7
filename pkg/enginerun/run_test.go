package enginerun_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/enginerun"
	"github.com/batkube/batkube/pkg/enginerun/enginetest"
)

// jobsHeader is the header of Batsim 4.2.1's _jobs.csv.
var jobsHeader = strings.Split("job_id,workload_name,profile,submission_time,requested_number_of_resources,"+
	"requested_time,success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,"+
	"stretch,allocated_resources,consumed_energy,metadata", ",")

// zeroNow answers like next, but with every time set to 0: a reply's now
// before the request's is taken as the request's, as real Batsim does.
func zeroNow(next enginetest.Decider) enginetest.Decider {
	return enginetest.DeciderFunc(func(m batsim.Message) (batsim.Message, error) {
		reply, err := next.Decide(m)
		reply.Now = 0
		for i := range reply.Events {
			reply.Events[i].Timestamp = 0
		}
		return reply, err
	})
}

func TestRunFirstFitToCompletion(t *testing.T) {
	tests := []struct {
		name      string
		platform  string
		workloads []string
		naming    enginerun.WorkloadNaming
		sharing   bool
		forward   bool
		callEvery float64
		zeroNow   bool
		// wantWorkloads are the workload names of the jobs, in the order
		// of the files.
		wantWorkloads []string
		wantJobs      int
		// wantWalltime are the jobs that reach their walltime; all the
		// others must succeed.
		wantWalltime []string
	}{
		{name: "delay_10", platform: "platform_4.xml", workloads: []string{"delay_10.json"},
			wantWorkloads: []string{"w0"}, wantJobs: 10},
		{name: "delay_30 queues", platform: "platform_4.xml", workloads: []string{"delay_30.json"},
			wantWorkloads: []string{"w0"}, wantJobs: 30, callEvery: 7},
		{name: "parallel", platform: "platform_4.xml", workloads: []string{"parallel.json"},
			wantWorkloads: []string{"w0"}, wantJobs: 8, wantWalltime: []string{"p6"}},
		{name: "pod templates, profiles forwarded", platform: "heterogeneous.xml", workloads: []string{"pod_templates.json"},
			forward: true, sharing: true, wantWorkloads: []string{"w0"}, wantJobs: 12},
		{name: "two workloads, Batsim names", platform: "platform_16.xml", workloads: []string{"delay_10.json", "delay_30.json"},
			wantWorkloads: []string{"w0", "w1"}, wantJobs: 40},
		{name: "two workloads, file names", platform: "platform_16.xml", workloads: []string{"delay_10.json", "delay_30.json"},
			naming: enginerun.FileNames, wantWorkloads: []string{"delay_10", "delay_30"}, wantJobs: 40},
		{name: "replies at t=0", platform: "platform_4.xml", workloads: []string{"delay_30.json"},
			zeroNow: true, wantWorkloads: []string{"w0"}, wantJobs: 30},
		{name: "trace_10h", platform: "platform_16.xml", workloads: []string{"trace_10h.json"},
			callEvery: 60, wantWorkloads: []string{"w0"}, wantJobs: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sched := &enginetest.FirstFit{CallEvery: tt.callEvery}
			var d enginetest.Decider = sched
			if tt.zeroNow {
				d = zeroNow(d)
			}
			rec := &recorder{next: d}
			dp := startDecisionProcess(t, rec)
			prefix := prefixIn(t)
			cfg := enginerun.Config{
				Platform:        platform(tt.platform),
				WorkloadNaming:  tt.naming,
				Endpoint:        dp.endpoint,
				ExportPrefix:    prefix,
				ComputeSharing:  tt.sharing,
				ForwardProfiles: tt.forward,
				Timeout:         time.Minute,
			}
			for _, w := range tt.workloads {
				cfg.Workloads = append(cfg.Workloads, workload(w))
			}
			sum := mustRun(t, dp, cfg)

			wantSucceeded := tt.wantJobs - len(tt.wantWalltime)
			if sum.Jobs != tt.wantJobs || sum.Succeeded != wantSucceeded || sum.WalltimeReached != len(tt.wantWalltime) ||
				sum.Failed != 0 || sum.Killed != 0 || sum.Rejected != 0 {
				t.Errorf("summary: got %+v, want %d jobs, %d succeeded, %d walltime reached", sum, tt.wantJobs, wantSucceeded, len(tt.wantWalltime))
			}
			if sched.Started != tt.wantJobs || sched.Completed != tt.wantJobs {
				t.Errorf("the scheduler started %d and saw %d completions, want %d", sched.Started, sched.Completed, tt.wantJobs)
			}
			if sum.Makespan <= 0 || sum.SimulatedTime < sum.Makespan || sum.WallTime <= 0 || sum.SpeedUp() <= 0 ||
				sum.SchedulingTime > sum.WallTime || sum.Messages != len(rec.messages()) {
				t.Errorf("summary times: got %+v (speed-up %g, %d messages recorded)", sum, sum.SpeedUp(), len(rec.messages()))
			}

			header, rows := readCSV(t, prefix+"_jobs.csv")
			if !slices.Equal(header, jobsHeader) {
				t.Fatalf("jobs header: got %v, want %v", header, jobsHeader)
			}
			if len(rows) != tt.wantJobs {
				t.Fatalf("jobs rows: got %d, want %d", len(rows), tt.wantJobs)
			}
			workloads := map[string]bool{}
			for _, row := range rows {
				workloads[row["workload_name"]] = true
				wantState := "COMPLETED_SUCCESSFULLY"
				if slices.Contains(tt.wantWalltime, row["job_id"]) {
					wantState = "COMPLETED_WALLTIME_REACHED"
				}
				if row["final_state"] != wantState {
					t.Errorf("job %s: got final_state %s, want %s", row["job_id"], row["final_state"], wantState)
				}
				if start, sub := number(t, row, "starting_time"), number(t, row, "submission_time"); start < sub {
					t.Errorf("job %s: starts at %g, before its submission at %g", row["job_id"], start, sub)
				}
			}
			for _, w := range tt.wantWorkloads {
				if !workloads[w] {
					t.Errorf("jobs output: no job of workload %q (got %v)", w, workloads)
				}
			}
			if len(workloads) != len(tt.wantWorkloads) {
				t.Errorf("jobs output: got workloads %v, want %v", workloads, tt.wantWorkloads)
			}

			_, sched2 := readCSV(t, prefix+"_schedule.csv")
			if len(sched2) != 1 {
				t.Fatalf("schedule rows: got %d, want 1", len(sched2))
			}
			if got := sched2[0]["nb_jobs_success"]; got != strconv.Itoa(wantSucceeded) {
				t.Errorf("nb_jobs_success: got %s, want %d", got, wantSucceeded)
			}
			if got := number(t, sched2[0], "scheduling_time"); got > number(t, sched2[0], "simulation_time") || got <= 0 {
				t.Errorf("scheduling_time %g: want in (0, simulation_time %s]", got, sched2[0]["simulation_time"])
			}

			checkProtocol(t, rec.messages(), cfg, tt.wantWorkloads)
		})
	}
}

// checkProtocol checks the messages a decision process received.
func checkProtocol(t *testing.T, msgs []batsim.Message, cfg enginerun.Config, workloads []string) {
	t.Helper()
	if len(msgs) < 2 {
		t.Fatalf("got %d messages, want at least 2", len(msgs))
	}
	first, last := msgs[0], msgs[len(msgs)-1]
	if len(first.Events) != 1 || first.Events[0].Type() != batsim.TypeSimulationBegins {
		t.Fatalf("first message: got %v, want SIMULATION_BEGINS alone", first.Events)
	}
	if len(last.Events) != 1 || last.Events[0].Type() != batsim.TypeSimulationEnds {
		t.Fatalf("last message: got %v, want SIMULATION_ENDS alone", last.Events)
	}
	begins := first.Events[0].Data.(batsim.SimulationBegins)
	if begins.NbComputeResources != len(begins.ComputeResources) || begins.NbResources != begins.NbComputeResources+begins.NbStorageResources ||
		begins.AllowComputeSharing != cfg.ComputeSharing || begins.Config.ProfilesForwardedOnSubmission != cfg.ForwardProfiles {
		t.Errorf("SIMULATION_BEGINS: got %+v", begins)
	}
	for i, w := range workloads {
		path, ok := begins.Workloads[w]
		wantPath := batsimPath(t, cfg.Workloads[i])
		if !ok || path != wantPath {
			t.Errorf("SIMULATION_BEGINS workloads[%q]: got %q, want %q", w, path, wantPath)
		}
		if len(begins.Profiles[w]) == 0 {
			t.Errorf("SIMULATION_BEGINS profiles[%q]: none", w)
		}
	}
	seen := 0
	for _, m := range msgs {
		for _, ev := range m.Events {
			sub, ok := ev.Data.(batsim.JobSubmitted)
			if !ok {
				continue
			}
			seen++
			if sub.Job.ID != sub.JobID || !slices.Contains(workloads, sub.JobID.Workload()) {
				t.Errorf("JOB_SUBMITTED %q: job id %q, want it the same and in one of %v", sub.JobID, sub.Job.ID, workloads)
			}
			if got, want := sub.Profile != nil, cfg.ForwardProfiles; got != want {
				t.Errorf("JOB_SUBMITTED %q: got a profile: %v, want %v", sub.JobID, got, want)
			}
			if sub.Profile != nil {
				if want := begins.Profiles[sub.JobID.Workload()][sub.Job.Profile]; !reflect.DeepEqual(*sub.Profile, want) {
					t.Errorf("JOB_SUBMITTED %q: profile %+v, want %+v", sub.JobID, *sub.Profile, want)
				}
			}
		}
	}
	if seen == 0 {
		t.Errorf("no JOB_SUBMITTED")
	}
}

func TestSimulationBeginsAsBatsim(t *testing.T) {
	rec := &recorder{next: &enginetest.FirstFit{}}
	dp := startDecisionProcess(t, rec)
	cfg := enginerun.Config{
		Platform:               platform("platform_4.xml"),
		Workloads:              []string{workload("delay_10.json")},
		Endpoint:               dp.endpoint,
		ExportPrefix:           prefixIn(t),
		DynamicJobs:            true,
		AcknowledgeDynamicJobs: true,
		SchedConfig:            `{"policy": "fcfs"}`,
		Timeout:                time.Minute,
	}
	// With dynamic jobs on, the first-fit scheduler never says
	// registration_finished: the simulation gets stuck after the jobs.
	_, err := enginerun.Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "registration_finished") {
		t.Fatalf("Run: got %v, want an error about registration_finished", err)
	}
	msgs := rec.messages()
	if len(msgs) == 0 {
		t.Fatal("no message")
	}
	got := msgs[0].Events[0].Data.(batsim.SimulationBegins)
	abs := batsimPath(t, cfg.Workloads[0])
	node := func(id int) batsim.Resource {
		return batsim.Resource{
			ID: id, Name: "node" + strconv.Itoa(id), State: batsim.ResourceIdle,
			Properties:     map[string]string{"role": "", "core": "8", "memory": "32Gi"},
			ZoneProperties: map[string]string{"site": "local"},
		}
	}
	want := batsim.SimulationBegins{
		NbResources: 4, NbComputeResources: 4, NbStorageResources: 0,
		AllowComputeSharing: false, AllowStorageSharing: true,
		Config: batsim.Config{
			RedisHostname: "127.0.0.1", RedisPort: 6379, RedisPrefix: "default",
			DynamicJobsEnabled: true, DynamicJobsAcknowledged: true,
			SchedConfig: `{"policy": "fcfs"}`,
		},
		ComputeResources: []batsim.Resource{node(0), node(1), node(2), node(3)},
		Workloads:        map[string]string{"w0": abs},
		Profiles: map[string]map[string]batsim.Profile{"w0": {
			"delay10_1cpu": {Type: "delay", Fields: map[string]json.RawMessage{
				"delay": json.RawMessage("10"), "cpu": json.RawMessage("1"), "memory": json.RawMessage(`"1Gi"`)}},
			"delay20_halfcpu": {Type: "delay", Fields: map[string]json.RawMessage{
				"delay": json.RawMessage("20"), "cpu": json.RawMessage("0.5"), "memory": json.RawMessage(`"512Mi"`)}},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SIMULATION_BEGINS:\n got %+v\nwant %+v", got, want)
	}
	encoded, err := batsim.Encode(batsim.Message{Events: msgs[0].Events}, batsim.FromBatsim)
	if err != nil {
		t.Fatal(err)
	}
	for _, wantText := range []string{
		`"config":{"redis-enabled":false,"redis-hostname":"127.0.0.1","redis-port":6379,"redis-prefix":"default",` +
			`"profiles-forwarded-on-submission":false,"dynamic-jobs-enabled":true,"dynamic-jobs-acknowledged":true,` +
			`"profile-reuse-enabled":false,"sched-config":"{\"policy\": \"fcfs\"}","forward-unknown-events":false}`,
		`{"id":0,"name":"node0","state":"idle","properties":{"core":"8","memory":"32Gi","role":""},"zone_properties":{"site":"local"}}`,
	} {
		if !strings.Contains(string(encoded), wantText) {
			t.Errorf("SIMULATION_BEGINS on the wire:\n%s\nwant it to contain\n%s", encoded, wantText)
		}
	}
	// The first submission carries the job as written, user fields
	// included, with its protocol id.
	sub := msgs[1].Events[0].Data.(batsim.JobSubmitted)
	wantJob := batsim.Job{ID: "w0!1", Subtime: 0, Res: 1, Profile: "delay10_1cpu", Walltime: 100}
	sub.Job.Extra = nil // {} or nil: the job has no user field
	if sub.JobID != "w0!1" || !reflect.DeepEqual(sub.Job, wantJob) || sub.Profile != nil {
		t.Errorf("first JOB_SUBMITTED: got %+v, want job %+v without profile", sub, wantJob)
	}
}

func TestRunUnknownJobIsAnErrorNamingIt(t *testing.T) {
	ff := &enginetest.FirstFit{}
	dp := startDecisionProcess(t, enginetest.DeciderFunc(func(m batsim.Message) (batsim.Message, error) {
		reply, err := ff.Decide(m)
		for _, ev := range m.Events {
			if ev.Type() == batsim.TypeJobSubmitted {
				reply.Events = append(reply.Events, batsim.Event{Timestamp: m.Now, Data: batsim.ExecuteJob{
					JobID: "w0!nope", Alloc: mustSet(t, "3")}})
				break
			}
		}
		return reply, err
	}))
	prefix := prefixIn(t)
	sum, err := enginerun.Run(context.Background(), delay10Config(dp.endpoint, prefix))
	if err == nil {
		t.Fatal("Run: got no error, want one naming w0!nope")
	}
	t.Logf("Run: %v", err)
	for _, want := range []string{"EXECUTE_JOB", `"w0!nope"`, "does not exist"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run: got error %q, want it to mention %s", err, want)
		}
	}
	if sum.Messages != 2 {
		t.Errorf("summary: got %d messages, want 2 (SIMULATION_BEGINS, then the first submission)", sum.Messages)
	}
	for _, file := range []string{"_jobs.csv", "_schedule.csv"} {
		header, _ := readCSV(t, prefix+file)
		if len(header) == 0 {
			t.Errorf("%s: no header", file)
		}
	}
}

func mustSet(t testing.TB, s string) batsim.IntervalSet {
	t.Helper()
	set, err := batsim.ParseIntervalSet(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// switchAfter answers like first for n messages, then like then.
func switchAfter(n int, first, then enginetest.Decider) enginetest.Decider {
	return enginetest.DeciderFunc(func(m batsim.Message) (batsim.Message, error) {
		if n == 0 {
			return then.Decide(m)
		}
		n--
		return first.Decide(m)
	})
}

// crash fails: the decision process closes its socket without answering.
var crash = enginetest.DeciderFunc(func(batsim.Message) (batsim.Message, error) {
	return batsim.Message{}, errors.New("decision process crashes")
})

func TestRunDecisionProcessGoneOrHanging(t *testing.T) {
	tests := []struct {
		name string
		// decider is the decision process; it may block until unblock is
		// closed, at the end of the test.
		// wantIs is the error Run must return (nil: none).
		decider func(unblock <-chan struct{}) enginetest.Decider
		timeout time.Duration
		wantIs  error
		want    string
	}{
		{name: "closes mid-run", timeout: 10 * time.Second, wantIs: batsim.ErrPeerDisconnected, want: "disconnected",
			decider: func(<-chan struct{}) enginetest.Decider { return switchAfter(3, &enginetest.FirstFit{}, crash) }},
		{name: "closes instead of answering SIMULATION_ENDS", timeout: 10 * time.Second,
			decider: func(<-chan struct{}) enginetest.Decider {
				ff := &enginetest.FirstFit{}
				return enginetest.DeciderFunc(func(m batsim.Message) (batsim.Message, error) {
					if m.Events[0].Type() == batsim.TypeSimulationEnds {
						return crash.Decide(m)
					}
					return ff.Decide(m)
				})
			}},
		{name: "hangs", timeout: 100 * time.Millisecond, wantIs: context.DeadlineExceeded, want: "did not answer",
			decider: func(unblock <-chan struct{}) enginetest.Decider {
				return switchAfter(3, &enginetest.FirstFit{}, enginetest.DeciderFunc(func(batsim.Message) (batsim.Message, error) {
					<-unblock
					return batsim.Message{}, errors.New("hung")
				}))
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unblock := make(chan struct{})
			dp := startDecisionProcess(t, tt.decider(unblock))
			t.Cleanup(func() { close(unblock) }) // before the decision process's cleanup
			prefix := prefixIn(t)
			began := time.Now()
			cfg := delay10Config(dp.endpoint, prefix)
			cfg.Timeout = tt.timeout
			_, err := enginerun.Run(context.Background(), cfg)
			switch {
			case tt.wantIs == nil && err != nil:
				t.Fatalf("Run: %v", err)
			case tt.wantIs != nil && (!errors.Is(err, tt.wantIs) || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Run: got %v, want an error wrapping %v and saying %q", err, tt.wantIs, tt.want)
			case err != nil:
				t.Logf("Run: %v", err)
			}
			if elapsed := time.Since(began); elapsed > tt.timeout+5*time.Second {
				t.Errorf("Run returned after %v, want about the timeout %v at most", elapsed, tt.timeout)
			}
			if _, err := os.Stat(prefix + "_schedule.csv"); err != nil {
				t.Errorf("schedule output: %v", err)
			}
		})
	}
}

func TestRunStopsWhenContextIsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	unblock := make(chan struct{})
	defer close(unblock)
	dp := startDecisionProcess(t, enginetest.DeciderFunc(func(m batsim.Message) (batsim.Message, error) {
		cancel()
		<-unblock
		return batsim.Message{}, errors.New("stopped")
	}))
	_, err := enginerun.Run(ctx, enginerun.Config{
		Platform:     platform("platform_4.xml"),
		Endpoint:     dp.endpoint,
		ExportPrefix: prefixIn(t),
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("Run: got %v, want an interruption wrapping context.Canceled", err)
	}
	t.Logf("Run: %v", err)
}

// dynamicDecider registers a profile and a job at the start, then runs the
// job on resource 0 (at once, or when Batsim acknowledges it).
type dynamicDecider struct {
	ack       bool
	submitted []batsim.JobSubmitted
	completed []batsim.JobCompleted
}

func (d *dynamicDecider) Decide(m batsim.Message) (batsim.Message, error) {
	reply := batsim.Message{Now: m.Now}
	add := func(data batsim.EventData) {
		reply.Events = append(reply.Events, batsim.Event{Timestamp: m.Now, Data: data})
	}
	execute := batsim.ExecuteJob{JobID: "dyn!1", Alloc: batsim.IntervalSet{}}
	execute.Alloc, _ = batsim.ParseIntervalSet("0")
	for _, ev := range m.Events {
		switch data := ev.Data.(type) {
		case batsim.SimulationBegins:
			if !data.Config.DynamicJobsEnabled || data.Config.DynamicJobsAcknowledged != d.ack {
				return reply, errors.New("dynamic jobs are not configured as expected")
			}
			add(batsim.RegisterProfile{WorkloadName: "dyn", ProfileName: "p5", Profile: batsim.Profile{
				Type: "delay", Fields: map[string]json.RawMessage{"delay": json.RawMessage("5")}}})
			add(batsim.RegisterJob{JobID: "dyn!1", Job: batsim.Job{ID: "dyn!1", Subtime: 0, Res: 1, Profile: "p5",
				Extra: map[string]json.RawMessage{"user": json.RawMessage(`"x"`)}}})
			add(batsim.Notify{Type: batsim.RegistrationFinished})
			if !d.ack {
				add(execute)
			}
		case batsim.JobSubmitted:
			d.submitted = append(d.submitted, data)
			add(execute)
		case batsim.JobCompleted:
			d.completed = append(d.completed, data)
		}
	}
	return reply, nil
}

func TestRunDynamicJobsRoundTrip(t *testing.T) {
	for _, ack := range []bool{false, true} {
		t.Run(map[bool]string{false: "without acknowledgement", true: "acknowledged"}[ack], func(t *testing.T) {
			d := &dynamicDecider{ack: ack}
			dp := startDecisionProcess(t, d)
			prefix := prefixIn(t)
			sum := mustRun(t, dp, enginerun.Config{
				Platform:               platform("platform_4.xml"),
				Endpoint:               dp.endpoint,
				ExportPrefix:           prefix,
				DynamicJobs:            true,
				AcknowledgeDynamicJobs: ack,
				Timeout:                time.Minute,
			})
			wantSubmitted := 0
			if ack {
				wantSubmitted = 1
			}
			if len(d.submitted) != wantSubmitted {
				t.Fatalf("JOB_SUBMITTED: got %d, want %d", len(d.submitted), wantSubmitted)
			}
			if ack {
				job := d.submitted[0].Job
				if d.submitted[0].JobID != "dyn!1" || job.ID != "dyn!1" || string(job.Extra["user"]) != `"x"` {
					t.Errorf("JOB_SUBMITTED: got %+v, want dyn!1 with its user field", d.submitted[0])
				}
			}
			if len(d.completed) != 1 || d.completed[0].JobID != "dyn!1" || d.completed[0].JobState != batsim.JobStateCompletedSuccessfully {
				t.Errorf("JOB_COMPLETED: got %+v, want dyn!1 COMPLETED_SUCCESSFULLY", d.completed)
			}
			// the job starts once the server got its registration and
			// its EXECUTE_JOB: tenths of a nanosecond through SimGrid's
			// loopback
			if sum.Jobs != 1 || sum.Succeeded != 1 || math.Abs(sum.Makespan-5) > 1e-9 {
				t.Errorf("summary: got %+v, want 1 job succeeded, makespan 5s", sum)
			}
			_, rows := readCSV(t, prefix+"_jobs.csv")
			if len(rows) != 1 || rows[0]["job_id"] != "1" || rows[0]["workload_name"] != "dyn" ||
				rows[0]["final_state"] != "COMPLETED_SUCCESSFULLY" || rows[0]["execution_time"] != "5.000000" {
				t.Errorf("jobs output: got %v, want dyn's job 1, successful, 5 s", rows)
			}
		})
	}
}

func TestRunProgress(t *testing.T) {
	dp := startDecisionProcess(t, &enginetest.FirstFit{})
	var calls []enginerun.Progress
	sum, err := enginerun.Run(context.Background(), enginerun.Config{
		Platform:         platform("platform_4.xml"),
		Workloads:        []string{workload("delay_30.json")},
		Endpoint:         dp.endpoint,
		ExportPrefix:     prefixIn(t),
		Timeout:          time.Minute,
		Progress:         func(p enginerun.Progress) { calls = append(calls, p) },
		ProgressInterval: time.Nanosecond,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(calls) == 0 || len(calls) > sum.Messages {
		t.Fatalf("Progress: got %d calls, want between 1 and %d", len(calls), sum.Messages)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i].Finished < calls[i-1].Finished || calls[i].Now < calls[i-1].Now || calls[i].Wall < calls[i-1].Wall {
			t.Errorf("Progress call %d went back: %+v after %+v", i, calls[i], calls[i-1])
		}
	}
	if last := calls[len(calls)-1]; last.Total != 30 || last.Finished != 30 {
		t.Errorf("last Progress: got %+v, want 30 of 30 jobs finished", last)
	}
}

func TestRunInputErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  enginerun.Config
		want string
	}{
		{name: "no platform", cfg: enginerun.Config{}, want: "no platform"},
		{name: "missing platform", cfg: enginerun.Config{Platform: "nope.xml"}, want: "nope.xml"},
		{name: "missing workload", cfg: enginerun.Config{Platform: platform("platform_4.xml"), Workloads: []string{"nope.json"}},
			want: "nope.json"},
		{name: "same file names", cfg: enginerun.Config{Platform: platform("platform_4.xml"), WorkloadNaming: enginerun.FileNames,
			Workloads: []string{workload("delay_10.json"), workload("delay_10.json")}}, want: "two workloads"},
		{name: "bad naming", cfg: enginerun.Config{Platform: platform("platform_4.xml"), WorkloadNaming: 7}, want: "WorkloadNaming(7)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.ExportPrefix = prefixIn(t)
			_, err := enginerun.Run(context.Background(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run: got %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

func TestRunWaitsForALateDecisionProcess(t *testing.T) {
	// A free port: taken, then released for the decision process.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "tcp://localhost:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port) // Batsim's spelling
	l.Close()

	type result struct {
		sum enginerun.Summary
		err error
	}
	ran := make(chan result, 1)
	prefix := prefixIn(t)
	go func() {
		sum, err := enginerun.Run(context.Background(), delay10Config(endpoint, prefix))
		ran <- result{sum, err}
	}()
	conn, err := batsim.Listen(enginerun.NormalizeEndpoint(endpoint))
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	defer conn.Close()
	if err := enginetest.Serve(context.Background(), conn, &enginetest.FirstFit{}); err != nil {
		t.Fatalf("decision process: %v", err)
	}
	r := <-ran
	if r.err != nil || r.sum.Succeeded != 10 {
		t.Fatalf("Run: got %+v, %v, want 10 jobs succeeded", r.sum, r.err)
	}
}
