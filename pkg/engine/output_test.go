package engine

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestOutputsGolden runs a tiny scenario with every final state and compares
// both outputs with Batsim 4.2.1's format, byte for byte.
func TestOutputsGolden(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 2,
		"profiles": {"d10": {"type": "delay", "delay": 10}, "d5fail": {"type": "delay", "delay": 5, "ret": 1},
		             "c2": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0}},
		"jobs": [
			{"id": 1, "subtime": 0, "res": 1, "profile": "d10", "walltime": 100},
			{"id": 2, "subtime": 0.5, "res": 2, "profile": "c2", "walltime": 1.5},
			{"id": 3, "subtime": 2, "res": 1, "profile": "d5fail"},
			{"id": 4, "subtime": 3, "res": 1, "profile": "d10"},
			{"id": 5, "subtime": 4, "res": 1, "profile": "d10"}
		]}`)
	var jobs bytes.Buffer
	e := mustNew(t, hostsPlatform([]float64{1e9, 1e9}), []*Workload{w}, Options{JobsOutput: &jobs})
	msgs, err := drive(e, func(msg Message) (float64, []Decision) {
		now := msg.Now
		var ds []Decision
		for _, ev := range msg.Events {
			switch ev := ev.(type) {
			case JobSubmitted:
				switch ev.Job.ID {
				case "w!1":
					now = 1
					ds = append(ds, ExecuteJob{Timestamp: 1, JobID: "w!1", Alloc: []int{0}})
				case "w!3":
					ds = append(ds, ExecuteJob{Timestamp: now, JobID: "w!3", Alloc: []int{1}})
				case "w!4":
					ds = append(ds, RejectJob{Timestamp: now, JobID: "w!4"})
				}
			case JobCompleted:
				switch ev.JobID {
				case "w!3":
					ds = append(ds, ExecuteJob{Timestamp: now, JobID: "w!5", Alloc: []int{1}}, CallMeLater{Timestamp: now, When: 9})
				case "w!1":
					ds = append(ds, ExecuteJob{Timestamp: now, JobID: "w!2", Alloc: []int{1, 0}})
				}
			case RequestedCall:
				ds = append(ds, KillJob{Timestamp: now, JobIDs: []string{"w!5"}})
			}
		}
		return now, ds
	})
	if err != nil {
		t.Fatalf("drive: %v\n%s", err, trace(msgs))
	}
	wantJobs := jobsHeader +
		"4,w,d10,3.000000,1,-1.000000,0,REJECTED,,,,,,,,,\"\"\n" +
		"3,w,d5fail,2.000000,1,-1.000000,0,COMPLETED_FAILED,2.000000,5.000000,7.000000,0.000000,5.000000,1.000000,1,-1.000000,\"\"\n" +
		"5,w,d10,4.000000,1,-1.000000,0,COMPLETED_KILLED,7.000000,2.000000,9.000000,3.000000,5.000000,2.500000,1,-1.000000,\"\"\n" +
		"1,w,d10,0.000000,1,100.000000,1,COMPLETED_SUCCESSFULLY,1.000000,10.000000,11.000000,1.000000,11.000000,1.100000,0,-1.000000,\"\"\n" +
		"2,w,c2,0.500000,2,1.500000,0,COMPLETED_WALLTIME_REACHED,11.000000,1.500000,12.500000,10.500000,12.000000,8.000000,0-1,-1.000000,\"\"\n"
	if got := jobs.String(); got != wantJobs {
		t.Errorf("got _jobs.csv\n%s\nwant\n%s\ntrace:\n%s", got, wantJobs, trace(msgs))
	}
	var sched bytes.Buffer
	if err := e.Schedule(1500*time.Millisecond, 2250*time.Millisecond).WriteCSV(&sched); err != nil {
		t.Fatal(err)
	}
	wantSched := "batsim_version,consumed_joules,makespan,max_slowdown,max_turnaround_time,max_waiting_time,mean_slowdown," +
		"mean_turnaround_time,mean_waiting_time,nb_computing_machines,nb_grouped_switches,nb_jobs,nb_jobs_finished," +
		"nb_jobs_killed,nb_jobs_rejected,nb_jobs_success,nb_machine_switches,scheduling_time,simulation_time,success_rate," +
		"time_computing,time_idle,time_sleeping,time_switching_off,time_switching_on,time_unavailable\n" +
		"batkube-engine,0.000000,12.500000,8.000000,12.000000,10.500000,2.520000,6.600000,2.900000,2,0,5,4,3,1,1,0," +
		"1.500000,2.250000,0.200000,20.000000,5.000000,0.000000,0.000000,0.000000,0.000000\n"
	if got := sched.String(); got != wantSched {
		t.Errorf("got _schedule.csv\n%s\nwant\n%s", got, wantSched)
	}
}

func TestNullRuntimeAndEmptySchedule(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 1, "profiles": {"z": {"type": "parallel_homogeneous", "cpu": 0, "com": 0}},
		"jobs": [{"id": "z", "subtime": 1, "res": 1, "profile": "z"}]}`)
	var jobs bytes.Buffer
	e := mustNew(t, hostsPlatform([]float64{1e9}), []*Workload{w}, Options{JobsOutput: &jobs})
	if _, err := drive(e, placer(nil, []int{0})); err != nil {
		t.Fatal(err)
	}
	want := "z,w,z,1.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,1.000000,0.000010,1.000010,0.000000,0.000010,1.000000,0,-1.000000,\"\"\n"
	if got := strings.TrimPrefix(jobs.String(), jobsHeader); got != want {
		t.Errorf("got row %q, want %q", got, want)
	}

	empty := mustNew(t, hostsPlatform([]float64{1e9}), nil, Options{})
	s := empty.Schedule(0, 0)
	if !math.IsNaN(s.MeanWaitingTime) || !math.IsNaN(s.SuccessRate) {
		t.Errorf("no jobs: got mean waiting time %g and success rate %g, want NaN (0/0, as Batsim)", s.MeanWaitingTime, s.SuccessRate)
	}
	var b bytes.Buffer
	if err := s.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ",-nan,") {
		t.Errorf("no jobs: got %q, want -nan as glibc writes 0/0", b.String())
	}
}

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after == 0 {
		return 0, errors.New("disk full")
	}
	w.after--
	return len(p), nil
}

func TestJobsOutputErrors(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 1, "profiles": {"d": {"type": "delay", "delay": 1}},
		"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}]}`)
	if _, err := New(hostsPlatform([]float64{1}), []*Workload{w}, Options{JobsOutput: &failingWriter{}}); err == nil {
		t.Error("header write failure: got no error")
	}
	e := mustNew(t, hostsPlatform([]float64{1}), []*Workload{w}, Options{JobsOutput: &failingWriter{after: 1}})
	if _, err := drive(e, placer(nil, []int{0})); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("row write failure: got %v, want the writer's error", err)
	}
}

// TestOutputHeadersAsBatsim421 compares the headers of both outputs, byte
// for byte, with those Batsim 4.2.1 writes (copied from
// docs/batsim-protocol.md, not from the code under test).
func TestOutputHeadersAsBatsim421(t *testing.T) {
	const (
		wantJobs = "job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success," +
			"final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,allocated_resources," +
			"consumed_energy,metadata\n"
		wantSchedule = "batsim_version,consumed_joules,makespan,max_slowdown,max_turnaround_time,max_waiting_time," +
			"mean_slowdown,mean_turnaround_time,mean_waiting_time,nb_computing_machines,nb_grouped_switches,nb_jobs," +
			"nb_jobs_finished,nb_jobs_killed,nb_jobs_rejected,nb_jobs_success,nb_machine_switches,scheduling_time," +
			"simulation_time,success_rate,time_computing,time_idle,time_sleeping,time_switching_off,time_switching_on," +
			"time_unavailable\n"
	)
	var jobs bytes.Buffer
	e := mustNew(t, hostsPlatform([]float64{1e9}), nil, Options{JobsOutput: &jobs})
	if got := jobs.String(); got != wantJobs {
		t.Errorf("_jobs.csv header:\n got %q\nwant %q", got, wantJobs)
	}
	var sched bytes.Buffer
	if err := e.Schedule(0, 0).WriteCSV(&sched); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := strings.Cut(sched.String(), "\n"); got+"\n" != wantSchedule {
		t.Errorf("_schedule.csv header:\n got %q\nwant %q", got+"\n", wantSchedule)
	}
	if n := strings.Count(sched.String(), "\n"); n != 2 {
		t.Errorf("_schedule.csv: got %d lines, want a header and one row", n)
	}
}

// TestWalltimeCountsFromTheStart checks that a job reaches its walltime
// walltime seconds after it starts, not after its submission, for a delay
// and for a computation, in the protocol and in the jobs output.
func TestWalltimeCountsFromTheStart(t *testing.T) {
	w := mustWorkload(t, "w", `{"nb_res": 1, "profiles": {"d10": {"type": "delay", "delay": 10},
		"c10": {"type": "parallel_homogeneous", "cpu": 10e9, "com": 0}},
		"jobs": [{"id": "d", "subtime": 2, "res": 1, "profile": "d10", "walltime": 4},
		         {"id": "c", "subtime": 2, "res": 1, "profile": "c10", "walltime": 2.5}]}`)
	var jobs bytes.Buffer
	e := mustNew(t, hostsPlatform([]float64{1e9, 1e9}), []*Workload{w}, Options{JobsOutput: &jobs})
	msgs, err := drive(e, func(msg Message) (float64, []Decision) {
		if _, ok := msg.Events[0].(JobSubmitted); ok { // t=2: start them at 5
			return 5, []Decision{
				ExecuteJob{Timestamp: 5, JobID: "w!d", Alloc: []int{0}},
				ExecuteJob{Timestamp: 5, JobID: "w!c", Alloc: []int{1}},
			}
		}
		return msg.Now, nil
	})
	if err != nil {
		t.Fatalf("drive: %v\n%s", err, trace(msgs))
	}
	wantTrace := "0: SIMULATION_BEGINS\n2: JOB_SUBMITTED w!c, JOB_SUBMITTED w!d, NOTIFY no_more_static_job_to_submit\n" +
		"7.5: JOB_COMPLETED w!c COMPLETED_WALLTIME_REACHED -1 [1]\n9: JOB_COMPLETED w!d COMPLETED_WALLTIME_REACHED -1 [0]\n9: SIMULATION_ENDS\n"
	if got := trace(msgs); got != wantTrace {
		t.Errorf("got trace\n%s\nwant\n%s", got, wantTrace)
	}
	wantJobs := jobsHeader +
		"c,w,c10,2.000000,1,2.500000,0,COMPLETED_WALLTIME_REACHED,5.000000,2.500000,7.500000,3.000000,5.500000,2.200000,1,-1.000000,\"\"\n" +
		"d,w,d10,2.000000,1,4.000000,0,COMPLETED_WALLTIME_REACHED,5.000000,4.000000,9.000000,3.000000,7.000000,1.750000,0,-1.000000,\"\"\n"
	if got := jobs.String(); got != wantJobs {
		t.Errorf("got jobs output\n%s\nwant\n%s", got, wantJobs)
	}
}

// TestNegativeZeroAsBatsim checks that the outputs write -0.000000 where
// Batsim does: a negative value that rounds to zero (a job started an ulp
// before its subtime, which Batsim 4.2.1 writes as a waiting time of
// -0.000000: testdata/batsim-4.2.1/energy_platform_homogeneous_no_net_128.*).
// The engine's clock, SimGrid's, can read an ulp before a subtime at the
// submission (its steps are rounded).
func TestNegativeZeroAsBatsim(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{math.Copysign(0, -1), "-0.000000"}, {-1e-10, "-0.000000"}, {-4.9e-7, "-0.000000"},
		{-5.1e-7, "-0.000001"}, {-2, "-2.000000"}, {0, "0.000000"}, {1e-7, "0.000000"},
	} {
		if got := string(appendFloat(nil, c.v)); got != c.want {
			t.Errorf("appendFloat(%g) = %q, want %q", c.v, got, c.want)
		}
	}
	// a: a subtime finer than a microsecond. b, c, d: the submitter sleeps
	// 9e5 s from 1e5 to submit c; b (1 s) and c (20.7 s) end meanwhile,
	// its time left is rounded twice, and it wakes at 999999.9999999999:
	// d, started at once, waits -1.2e-10 s.
	profiles := `"profiles": {"d": {"type": "delay", "delay": 20.7}, "e": {"type": "delay", "delay": 0.003}}`
	v := mustWorkload(t, "v", `{"nb_res": 1, `+profiles+`, "jobs": [{"id": "a", "subtime": 2000000.1234567891, "res": 1, "profile": "e"}]}`)
	w := mustWorkload(t, "w", `{"nb_res": 1, `+profiles+`, "jobs": [
			{"id": "b", "subtime": 1e5, "res": 1, "profile": "e"}, {"id": "c", "subtime": 1e5, "res": 1, "profile": "d"},
			{"id": "d", "subtime": 1e6, "res": 1, "profile": "d"}]}`)
	var jobs bytes.Buffer
	e := mustNew(t, hostsPlatform([]float64{1e9, 1e9}), []*Workload{v, w}, Options{JobsOutput: &jobs})
	var startD float64
	msgs, err := drive(e, func(msg Message) (float64, []Decision) {
		var ds []Decision
		for _, ev := range msg.Events {
			if s, ok := ev.(JobSubmitted); ok {
				h := 0
				if s.Job.ID == "w!c" || s.Job.ID == "v!a" {
					h = 1
				}
				if s.Job.ID == "w!d" {
					startD = msg.Now
				}
				ds = append(ds, ExecuteJob{Timestamp: msg.Now, JobID: s.Job.ID, Alloc: []int{h}})
			}
		}
		return msg.Now, ds
	})
	if err != nil {
		t.Fatalf("drive: %v\n%s", err, trace(msgs))
	}
	if !(startD < 1e6) {
		t.Errorf("d started at %v, want the clock an ulp before its subtime, 1e6 (the steps' rounding)", startD)
	}
	var sched bytes.Buffer
	if err := e.Schedule(0, 0).WriteCSV(&sched); err != nil {
		t.Fatal(err)
	}
	for _, row := range strings.Split(jobs.String(), "\n")[1:] {
		want := "0.000000"
		if strings.HasPrefix(row, "d,") {
			want = "-0.000000"
		}
		if f := strings.Split(row, ","); len(f) > 11 && f[11] != want {
			t.Errorf("job %s waited %s, want %s", f[0], f[11], want)
		}
	}
	if !strings.Contains(sched.String(), ",-0.000000") {
		t.Errorf("_schedule.csv writes no -0.000000 (d's wait is the least):\n%s", sched.String())
	}
}
