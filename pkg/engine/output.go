package engine

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/batkube/batkube/pkg/engine/internal/ld"
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

// stats are the running sums behind _schedule.csv (Batsim's JobsTracer),
// in long double as Batsim keeps them.
type stats struct {
	jobs, finished, success, killed, rejected int

	sumWaiting, sumTurnaround, sumSlowdown           ld.Sum
	makespan, maxWaiting, maxTurnaround, maxSlowdown ld.Max
}

// jobTimes are a finished job's times as Batsim computes them, in long
// double from its starting time and runtime (its end less its start, or
// 1e-5 s if it took no time), cast to double for the outputs. Usually all
// but the slowdown are doubles exactly (exact is true, and f holds them);
// x holds them otherwise. slowdown is the slowdown, in either case.
type jobTimes struct {
	exact    bool
	f        [tSlowdown]float64
	x        [tSlowdown]ld.Float
	slowdown ld.Float
}

// The times of jobTimes, in the order of _jobs.csv.
const (
	tStart = iota
	tRuntime
	tCompletion
	tWaiting
	tTurnaround
	tSlowdown
	nbTimes
)

var ldOne = ld.FromFloat64(1)

func timesOf(t *jobTimes, subtime, start, end float64) {
	run, runExact := ld.ExactDiff(end, start)
	wait, waitExact := ld.ExactDiff(start, subtime)
	turn, turnExact := ld.ExactDiff(end, subtime)
	if runExact && waitExact && turnExact && run != 0 && start+run == end {
		// the usual case: every difference is a double, and start +
		// (end - start) is end, exactly
		t.f = [tSlowdown]float64{start, run, end, wait, turn}
		t.exact = true
		if turn == run {
			t.slowdown = ldOne
		} else {
			t.slowdown = ld.Div(ld.FromFloat64(turn), ld.FromFloat64(run))
		}
		return
	}
	x := &t.x
	x[tStart] = ld.FromFloat64(start)
	x[tRuntime] = ld.Diff(end, start)
	if x[tRuntime].IsZero() {
		x[tRuntime] = ld.Epsilon
	}
	x[tCompletion] = ld.Add(x[tStart], x[tRuntime])
	x[tWaiting] = ld.Diff(start, subtime)
	if c, ok := x[tCompletion].Exact(); ok {
		x[tTurnaround] = ld.Diff(c, subtime)
	} else {
		x[tTurnaround] = ld.Sub(x[tCompletion], ld.FromFloat64(subtime))
	}
	t.slowdown = ld.Div(x[tTurnaround], x[tRuntime])
	t.exact = false
}

// value returns time i as a double.
func (t *jobTimes) value(i int) float64 {
	switch {
	case i == tSlowdown:
		return t.slowdown.Float64()
	case t.exact:
		return t.f[i]
	}
	return t.x[i].Float64()
}

// record accounts for a job that finished (at end, having started at
// start) or was rejected, and writes its row in the jobs output.
func (e *Engine) record(idx int32, state JobState, start, end float64, alloc []int) {
	job := e.jobs[idx]
	meta, hasMeta := e.meta[idx]
	if hasMeta {
		delete(e.meta, idx)
	}
	s := &e.stats
	s.jobs++
	rejected := state == Rejected
	t := &e.times
	if rejected {
		s.rejected++
	} else {
		s.finished++
		if state == CompletedSuccessfully {
			s.success++
		} else {
			s.killed++
		}
		timesOf(t, job.Subtime, start, end)
		if t.exact {
			s.sumWaiting.AddFloat64(t.f[tWaiting])
			s.sumTurnaround.AddFloat64(t.f[tTurnaround])
			s.makespan.UpdateFloat64(t.f[tCompletion])
			s.maxWaiting.UpdateFloat64(t.f[tWaiting])
			s.maxTurnaround.UpdateFloat64(t.f[tTurnaround])
		} else {
			s.sumWaiting.Add(t.x[tWaiting])
			s.sumTurnaround.Add(t.x[tTurnaround])
			s.makespan.Update(t.x[tCompletion])
			s.maxWaiting.Update(t.x[tWaiting])
			s.maxTurnaround.Update(t.x[tTurnaround])
		}
		s.sumSlowdown.Add(t.slowdown)
		s.maxSlowdown.Update(t.slowdown)
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
		for i := range nbTimes {
			b = append(b, ',')
			b = appendFloat(b, t.value(i))
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
	b := appendMachineStates(e.rowBuf[:0], e.now, e.nbIdle, e.nbComputing)
	e.rowBuf = b
	if _, err := w.Write(b); err != nil {
		e.fail(fmt.Errorf("engine: machine states output: %w", err))
	}
}

// appendMachineStates appends a row of _machine_states.csv as Batsim writes
// it with printf("%g,%d,%d,%d,%d,%d\n"): the time, then the numbers of
// sleeping, switching on, switching off, idle and computing machines.
func appendMachineStates(b []byte, now float64, idle, computing int) []byte {
	b = appendSeconds6(b, now)
	b = append(b, ",0,0,0,"...)
	b = appendInt(b, idle)
	b = append(b, ',')
	b = appendInt(b, computing)
	return append(b, '\n')
}

// appendSeconds6 appends t as C's printf("%g") writes a double: six
// significant digits, trailing zeros dropped, in exponent form below 1e-4
// or from 1e6 on. A date that is a tie at six digits to the nanosecond
// (1867.855, which is 1867.85499999999979 after some steps, or
// 1006.79499999999996 as the nearest double to 1006.795, both of which %g
// writes 1867.85 and 1006.79) is rounded up: Batsim's clock is a few
// tenths of nanoseconds late on the engine's, after the latency of its
// internal messages (or up to 5e-7 s late after a decision stamped with
// the six decimals its messages carry), and so rounds such ties up.
func appendSeconds6(b []byte, t float64) []byte {
	if b, ok := appendNonFinite(b, t); ok {
		return b
	}
	if t < 0 {
		b = append(b, '-')
		t = -t
	}
	if t == 0 {
		return append(b, '0')
	}
	var buf [48]byte
	// d.ddddde±XX: t rounded to six digits, or its tie to the nanosecond
	e := strconv.AppendFloat(buf[:0], t, 'e', 5, 64)
	if t < 1e15 {
		if tie, ok := nanosecondTie(buf[16:16], t); ok {
			e = tie
		}
	}
	mant, expPart, _ := bytesCut(e, 'e')
	exp, _ := strconv.Atoi(string(expPart))
	var dbuf [24]byte
	digits := dbuf[:0]
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	if len(digits) > 6 { // a tie: round it up
		digits = digits[:6]
		up := true
		for i := 5; up && i >= 0; i-- {
			if digits[i] == '9' {
				digits[i] = '0'
				continue
			}
			digits[i]++
			up = false
		}
		if up { // 999999.5 -> 1000000
			digits = append(digits[:0], '1', '0', '0', '0', '0', '0')
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
		return appendExponent(b, exp)
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

// nanosecondTie returns t to the nanosecond in the form d.dddddde±XX (seven
// significant digits) if that is a tie at six digits (its seventh digit a
// 5, nothing after it), appended to b.
func nanosecondTie(b []byte, t float64) ([]byte, bool) {
	var buf [40]byte
	f := strconv.AppendFloat(buf[:0], t, 'f', 9, 64)
	var sig [32]byte
	n, exp := 0, -1 // exp: the decimal exponent of the first significant digit
	point := bytesIndex(f, '.')
	for i, c := range f {
		if c == '.' || n == 0 && c == '0' {
			continue
		}
		if n == 0 {
			exp = point - i - 1
			if i > point {
				exp = point - i
			}
		}
		if n < len(sig) {
			sig[n] = c
		}
		n++
	}
	if n < 7 || sig[6] != '5' {
		return nil, false
	}
	for _, c := range sig[7:min(n, len(sig))] {
		if c != '0' {
			return nil, false
		}
	}
	b = append(b, sig[0], '.')
	b = append(b, sig[1:7]...)
	return appendExponent(b, exp), true
}

// appendExponent appends a decimal exponent as %e writes it: e, its sign,
// at least two digits.
func appendExponent(b []byte, exp int) []byte {
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

func bytesIndex(s []byte, c byte) int {
	for i := range s {
		if s[i] == c {
			return i
		}
	}
	return len(s)
}

// bytesCut is bytes.Cut on one byte.
func bytesCut(s []byte, sep byte) (before, after []byte, found bool) {
	for i, c := range s {
		if c == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, nil, false
}

// appendNonFinite appends v as C's printf writes a NaN ("-nan", as glibc
// writes the NaN of 0/0) or an infinity, and reports whether v was one.
func appendNonFinite(b []byte, v float64) ([]byte, bool) {
	switch {
	case math.IsNaN(v):
		return append(b, "-nan"...), true
	case math.IsInf(v, 1):
		return append(b, "inf"...), true
	case math.IsInf(v, -1):
		return append(b, "-inf"...), true
	}
	return b, false
}

// appendFloat formats like C's printf("%f"), which Batsim's std::to_string
// uses: six decimals; glibc writes the NaN of 0/0 as "-nan". A negative value
// that rounds to zero is written -0.000000, as Batsim writes the waiting time
// of a job started an ulp before its subtime (where SimGrid's rounded steps
// wake the submitter an ulp early and the decision takes no time).
func appendFloat(b []byte, v float64) []byte {
	if b, ok := appendNonFinite(b, v); ok {
		return b
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
		Makespan:            s.makespan.Value().Float64(),
		MaxSlowdown:         s.maxSlowdown.Value().Float64(),
		MaxTurnaroundTime:   s.maxTurnaround.Value().Float64(),
		MaxWaitingTime:      s.maxWaiting.Value().Float64(),
		MeanSlowdown:        s.sumSlowdown.Float64() / n,
		MeanTurnaroundTime:  s.sumTurnaround.Float64() / n,
		MeanWaitingTime:     s.sumWaiting.Float64() / n,
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
	var computing, idle, unavailable ld.Sum
	for i := range e.hosts {
		computing.Add(e.hosts[i].working.Value())
		idle.Add(e.hosts[i].idle.Value())
		unavailable.Add(e.hosts[i].unavailable.Value())
	}
	out.TimeComputing, out.TimeIdle, out.TimeUnavailable = computing.Float64(), idle.Float64(), unavailable.Float64()
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
