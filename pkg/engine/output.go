package engine

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// Version is what the engine writes as batsim_version in _schedule.csv.
const Version = "batkube-engine"

// jobsHeader is the header of Batsim 4.2.1's _jobs.csv.
const jobsHeader = "job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time," +
	"success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch," +
	"allocated_resources,consumed_energy,metadata\n"

// machineStatesHeader is the header of Batsim 4.2.1's _machine_states.csv
// (unavailable machines are counted nowhere in it).
const machineStatesHeader = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing\n"

// nullRuntime is the execution time Batsim writes for a job that took none.
const nullRuntime = 1e-5

// stats are the running sums behind _schedule.csv (Batsim's JobsTracer).
type stats struct {
	jobs, finished, success, killed, rejected int

	makespan, sumWaiting, sumTurnaround, sumSlowdown float64
	maxWaiting, maxTurnaround, maxSlowdown           float64
}

// record accounts for a job that finished (or was rejected) and writes its
// row in the jobs output.
func (e *Engine) record(idx int32, state JobState, start, runtime time.Duration, alloc []int) {
	job := e.jobs[idx]
	meta, hasMeta := e.meta[idx]
	if hasMeta {
		delete(e.meta, idx)
	}
	s := &e.stats
	s.jobs++
	startS, runS := start.Seconds(), runtime.Seconds()
	if runS == 0 {
		runS = nullRuntime
	}
	rejected := state == Rejected
	if rejected {
		s.rejected++
	} else {
		s.finished++
		if state == CompletedSuccessfully {
			s.success++
		} else {
			s.killed++
		}
		waiting := startS - job.Subtime
		completion := startS + runS
		turnaround := completion - job.Subtime
		slowdown := turnaround / runS
		s.sumWaiting += waiting
		s.sumTurnaround += turnaround
		s.sumSlowdown += slowdown
		s.makespan = math.Max(s.makespan, completion)
		s.maxWaiting = math.Max(s.maxWaiting, waiting)
		s.maxTurnaround = math.Max(s.maxTurnaround, turnaround)
		s.maxSlowdown = math.Max(s.maxSlowdown, slowdown)
	}
	if e.opts.JobsOutput == nil {
		return
	}
	b := e.rowBuf[:0]
	b = append(b, job.Name...)
	b = append(b, ',')
	b = append(b, job.Workload...)
	b = append(b, ',')
	b = append(b, job.Profile...)
	b = append(b, ',')
	b = appendFloat(b, job.Subtime)
	b = append(b, ',')
	b = appendInt(b, job.Res)
	b = append(b, ',')
	b = appendFloat(b, job.Walltime)
	b = append(b, ',')
	if state == CompletedSuccessfully {
		b = append(b, '1')
	} else {
		b = append(b, '0')
	}
	b = append(b, ',')
	b = append(b, state...)
	if rejected {
		b = append(b, ",,,,,,,"...)
	} else {
		for _, v := range []float64{startS, runS, startS + runS, startS - job.Subtime, startS + runS - job.Subtime,
			(startS + runS - job.Subtime) / runS} {
			b = append(b, ',')
			b = appendFloat(b, v)
		}
		b = append(b, ',')
	}
	b = appendIDs(b, alloc)
	b = append(b, ',')
	if !rejected {
		b = append(b, "-1.000000"...)
	}
	b = append(b, ",\""...)
	b = append(b, meta...)
	b = append(b, "\"\n"...)
	e.rowBuf = b
	if _, err := e.opts.JobsOutput.Write(b); err != nil {
		e.fail(fmt.Errorf("engine: jobs output: %w", err))
	}
}

// traceMachineStates writes a row of the machine states output: how many
// compute hosts are in each state now. Batsim 4.2.1 writes one after a job's
// hosts become computing and one after they are released, even when no
// count changed (a host already computing another job), so several rows can
// share a time. The engine has no power states nor unavailability: no host
// is ever sleeping or switching.
func (e *Engine) traceMachineStates() {
	w := e.opts.MachineStatesOutput
	if w == nil {
		return
	}
	b := appendMachineStates(e.rowBuf[:0], e.now, len(e.hosts)-e.computing, e.computing)
	e.rowBuf = b
	if _, err := w.Write(b); err != nil {
		e.fail(fmt.Errorf("engine: machine states output: %w", err))
	}
}

// appendMachineStates appends a row of _machine_states.csv as Batsim writes
// it with printf("%g,%d,%d,%d,%d,%d\n"): the time, then the numbers of
// sleeping, switching on, switching off, idle and computing machines.
func appendMachineStates(b []byte, now time.Duration, idle, computing int) []byte {
	b = appendSeconds6(b, now)
	b = append(b, ",0,0,0,"...)
	b = appendInt(b, idle)
	b = append(b, ',')
	b = appendInt(b, computing)
	return append(b, '\n')
}

// appendSeconds6 appends d in seconds as C's printf("%g") writes a double:
// six significant digits, trailing zeros dropped, in exponent form below
// 1e-4 or from 1e6 on. The exact decimal value of d is rounded half up,
// where %g would round the nearest double, often just below an exact tie
// (1006.795 is 1006.79499999999996 as a double): Batsim's clock is a few
// tenths of nanoseconds late on the engine's, after the latency of its
// internal messages, and so rounds such ties up.
func appendSeconds6(b []byte, d time.Duration) []byte {
	if d < 0 {
		b = append(b, '-')
		d = -d
	}
	if d == 0 {
		return append(b, '0')
	}
	digits := []byte(strconv.FormatInt(int64(d), 10)) // d = 0.digits × 10^(exp+1) s
	exp := len(digits) - 1 - 9                        // decimal exponent of the first digit
	if len(digits) > 6 {
		up := digits[6] >= '5'
		digits = digits[:6]
		for i := 5; up && i >= 0; i-- {
			if digits[i] == '9' {
				digits[i] = '0'
				continue
			}
			digits[i]++
			up = false
		}
		if up { // 999999.5 -> 1000000
			digits = append([]byte{'1'}, digits[:5]...)
			exp++
		}
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if exp < -4 || exp >= 6 {
		b = append(b, digits[0])
		if len(digits) > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return appendInt(b, exp)
	}
	if exp < 0 {
		b = append(b, "0."...)
		for i := exp + 1; i < 0; i++ {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	if len(digits) <= exp+1 {
		b = append(b, digits...)
		for i := len(digits); i <= exp; i++ {
			b = append(b, '0')
		}
		return b
	}
	b = append(b, digits[:exp+1]...)
	b = append(b, '.')
	return append(b, digits[exp+1:]...)
}

// appendFloat formats like C's printf("%f"), which Batsim's std::to_string
// uses: six decimals; glibc writes the NaN of 0/0 as "-nan".
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "-nan"...)
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, v, 'f', 6, 64)
}

func appendInt(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }

// Schedule is the one row of Batsim's _schedule.csv.
type Schedule struct {
	BatsimVersion       string
	ConsumedJoules      float64
	Makespan            float64
	MaxSlowdown         float64
	MaxTurnaroundTime   float64
	MaxWaitingTime      float64
	MeanSlowdown        float64
	MeanTurnaroundTime  float64
	MeanWaitingTime     float64
	NbComputingMachines int
	NbGroupedSwitches   int
	NbJobs              int
	NbJobsFinished      int
	NbJobsKilled        int // every finished job that did not succeed
	NbJobsRejected      int
	NbJobsSuccess       int
	NbMachineSwitches   int
	SchedulingTime      float64 // wall-clock seconds spent deciding
	SimulationTime      float64 // wall-clock seconds of the whole run
	SuccessRate         float64
	TimeComputing       float64
	TimeIdle            float64
	TimeSleeping        float64
	TimeSwitchingOff    float64
	TimeSwitchingOn     float64
	TimeUnavailable     float64
}

// Schedule returns the summary of the jobs finished so far, as Batsim
// computes it at the end: means are over all jobs, rejected ones included;
// waiting, turnaround and slowdown are over finished jobs; time_computing
// and time_idle are summed over the machines up to their last change of
// state. schedulingTime and simulationTime are wall-clock durations the
// caller measured. There is no energy model: consumed_joules and the
// switch and sleep columns are 0.
func (e *Engine) Schedule(schedulingTime, simulationTime time.Duration) Schedule {
	s := e.stats
	n := float64(s.jobs)
	out := Schedule{
		BatsimVersion:       Version,
		Makespan:            s.makespan,
		MaxSlowdown:         s.maxSlowdown,
		MaxTurnaroundTime:   s.maxTurnaround,
		MaxWaitingTime:      s.maxWaiting,
		MeanSlowdown:        s.sumSlowdown / n,
		MeanTurnaroundTime:  s.sumTurnaround / n,
		MeanWaitingTime:     s.sumWaiting / n,
		NbComputingMachines: len(e.platform.Resources) + len(e.platform.Storage),
		NbJobs:              s.jobs,
		NbJobsFinished:      s.finished,
		NbJobsKilled:        s.killed,
		NbJobsRejected:      s.rejected,
		NbJobsSuccess:       s.success,
		SchedulingTime:      schedulingTime.Seconds(),
		SimulationTime:      simulationTime.Seconds(),
		SuccessRate:         float64(s.success) / n,
	}
	for i := range e.hosts {
		out.TimeComputing += e.hosts[i].working.Seconds()
		out.TimeIdle += e.hosts[i].idle.Seconds()
	}
	return out
}

// WriteCSV writes the schedule as Batsim's _schedule.csv: a header and one
// row, columns in lexicographic order.
func (s Schedule) WriteCSV(w io.Writer) error {
	cols := []struct {
		name  string
		value []byte
	}{
		{"batsim_version", []byte(s.BatsimVersion)},
		{"consumed_joules", appendFloat(nil, s.ConsumedJoules)},
		{"makespan", appendFloat(nil, s.Makespan)},
		{"max_slowdown", appendFloat(nil, s.MaxSlowdown)},
		{"max_turnaround_time", appendFloat(nil, s.MaxTurnaroundTime)},
		{"max_waiting_time", appendFloat(nil, s.MaxWaitingTime)},
		{"mean_slowdown", appendFloat(nil, s.MeanSlowdown)},
		{"mean_turnaround_time", appendFloat(nil, s.MeanTurnaroundTime)},
		{"mean_waiting_time", appendFloat(nil, s.MeanWaitingTime)},
		{"nb_computing_machines", appendInt(nil, s.NbComputingMachines)},
		{"nb_grouped_switches", appendInt(nil, s.NbGroupedSwitches)},
		{"nb_jobs", appendInt(nil, s.NbJobs)},
		{"nb_jobs_finished", appendInt(nil, s.NbJobsFinished)},
		{"nb_jobs_killed", appendInt(nil, s.NbJobsKilled)},
		{"nb_jobs_rejected", appendInt(nil, s.NbJobsRejected)},
		{"nb_jobs_success", appendInt(nil, s.NbJobsSuccess)},
		{"nb_machine_switches", appendInt(nil, s.NbMachineSwitches)},
		{"scheduling_time", appendFloat(nil, s.SchedulingTime)},
		{"simulation_time", appendFloat(nil, s.SimulationTime)},
		{"success_rate", appendFloat(nil, s.SuccessRate)},
		{"time_computing", appendFloat(nil, s.TimeComputing)},
		{"time_idle", appendFloat(nil, s.TimeIdle)},
		{"time_sleeping", appendFloat(nil, s.TimeSleeping)},
		{"time_switching_off", appendFloat(nil, s.TimeSwitchingOff)},
		{"time_switching_on", appendFloat(nil, s.TimeSwitchingOn)},
		{"time_unavailable", appendFloat(nil, s.TimeUnavailable)},
	}
	var header, row []byte
	for i, c := range cols {
		if i > 0 {
			header = append(header, ',')
			row = append(row, ',')
		}
		header = append(header, c.name...)
		row = append(row, c.value...)
	}
	header = append(header, '\n')
	row = append(row, '\n')
	if _, err := w.Write(append(header, row...)); err != nil {
		return fmt.Errorf("engine: schedule output: %w", err)
	}
	return nil
}
