package engine

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// firstFitAll is a decision process that starts each submitted job at once
// on the lowest free resources, its decisions stamped with the message's
// now as it reads it from Batsim (with six decimals; package enginerun
// sends them so).
func firstFitAll(hosts int) policy {
	free := make([]bool, hosts)
	for i := range free {
		free[i] = true
	}
	return func(msg Message) (float64, []Decision) {
		now := batsimDecimals(msg.Now)
		var ds []Decision
		for _, ev := range msg.Events {
			switch ev := ev.(type) {
			case JobCompleted:
				for _, h := range ev.Alloc {
					free[h] = true
				}
			case JobSubmitted:
				var alloc []int
				for h := 0; h < hosts && len(alloc) < ev.Job.Res; h++ {
					if free[h] {
						alloc = append(alloc, h)
					}
				}
				for _, h := range alloc {
					free[h] = false
				}
				ds = append(ds, ExecuteJob{Timestamp: now, JobID: ev.Job.ID, Alloc: alloc})
			}
		}
		return max(now, msg.Now), ds
	}
}

// runFile runs a workload file on n hosts of 1 Gflops with firstFitAll and
// returns the jobs output, its rows sorted, and the schedule.
func runFile(t *testing.T, path string, n int) (string, Schedule) {
	t.Helper()
	w := mustReadWorkload(t, path)
	var out bytes.Buffer
	e := mustNew(t, homogeneous(n), []*Workload{w}, Options{JobsOutput: &out})
	if err := loop(e, firstFitAll(n)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	slices.Sort(lines[1:])
	return strings.Join(lines, "\n") + "\n", e.Schedule(0, 0)
}

// TestFarFutureDates runs testdata/far_future/far_future.json: at each
// power of ten from 1 s to 1e17 s a delay job d (20.7 s, walltime 30) and a
// parallel job p (3e6 and 1.5e6 flops on two hosts of 1 Gflops: 0.003 s,
// walltime 100), plus at 1e16 s a composed job c16 (3.3 s of delay then
// 0.003 s of computation, twice) and x16 (three delays of 3.3 s, walltime
// 9), at 1e17 s w17 (the delay with walltime 10), and t17 submitted at
// 100000000000000024 s. Dates are SimGrid's clock, a double advanced by
// steps (see clock.go), and the outputs Batsim's long double arithmetic on
// them (a real Batsim 4.2.1 run, without the latency of its internal
// messages, writes the same rows, but for d12, which it starts 1.2e-4 s
// later after parsing the decision's date a double off).
//
// Up to 1e9 s the doubles are finer than the outputs' six decimals. Then:
//
//   - d10: doubles are 2^-19 s apart at 1e10: 1e10 + 20.7 is
//     10000000020.700000763, so the delay took 20.700001 s.
//   - d11: its submitter slept 9e10 s from 1e10; meanwhile two steps (p10
//     ended 0.003 s later, d10 20.697 s after that) were taken off its time
//     left, rounded each time (doubles are 1.5e-5 s apart at 9e10):
//     89999999979.29999 left, and the clock reads 10000000020.700001 +
//     89999999979.29999 = 99999999999.999985 when it wakes and submits d11
//     (p11, whose subtime is after the clock, comes after another sleep of
//     1.5e-5 s, at 1e11). d11 starts then: waiting -0.000015 s, and its
//     20.7 s end at 100000000020.699997 (execution 20.700012 s).
//   - d12, d13: the same, one ulp early (1.2e-4 and 0.002 s); d14 and p14
//     one ulp late (0.015625 s).
//   - p11 to p13: 0.003 s rounds to the doubles around 1e11 to 1e13
//     (0.003006, 0.003052, 0.003906 s).
//   - p14 to p17: 0.003 s is less than half an ulp: the clock does not
//     move, the job took no time, and Batsim writes 1e-5 s. Its finish,
//     start + 1e-5 in long double (a 64-bit mantissa, 2^-17 s apart at
//     1e14), is 1e14 + 0.015625 + 0.0000076 for p14 (turnaround 0.015633 s,
//     stretch 0.015633 / 1e-5 = 1563.26), and start itself from 1e15 on
//     (turnaround 0, stretch 0).
//   - d15: 1e15 + 20.7 = 1e15 + 20.75 (doubles 0.125 s apart).
//   - At 1e16 (doubles 2 s apart) the steps are: p16 ends at +0.003 (the
//     clock stays at 1e16); c16's and x16's first delays end at +3.3 (the
//     clock takes 3.297 s: 1e16+4); c16's computation at +3.303 (1e16+4);
//     x16's second delay at +6.6 (3.297 s more: 1e16+8), x16 having 2.4 s
//     of walltime left, less than its third delay: it sleeps that long;
//     c16's third and fourth leaves at +6.603 and +6.606 (1e16+8: c16 took
//     8 s); x16's walltime at +9 (2.394 s more: 1e16+10: it took 10 s for a
//     walltime of 9); d16 at +20.7 (11.7 s more: 1e16+22: 22 s).
//   - At 1e17 (doubles 16 s apart): p17 at +0.003 (the clock stays); w17
//     sleeps its walltime, 10 s, shorter than its delay: 9.997 s more,
//     1e17+16, it reached its walltime after 16 s; d17 at +20.7 (10.7 s
//     more: 1e17+32); t17's subtime reads 1e17+32 (ties to even), and its
//     submitter, woken at 1e17, sleeps 32 s: 11.3 s more, 1e17+48 (waiting
//     16 s); its delay ends 20.7 s later, 1e17+64: it took 16 s.
//   - d06, d07: the submitter wakes a double before 1e6 and 1e7, submits
//     them, and the decision process, reading 1000000.000000 and
//     10000000.000000, starts them at 1e6 and 1e7 (the engine waits until
//     then, as Batsim).
func TestFarFutureDates(t *testing.T) {
	got, sched := runFile(t, "testdata/far_future/far_future.json", 6)
	want := jobsHeader + strings.ReplaceAll(`
	c16,w0,composed,10000000000000000.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,10000000000000000.000000,8.000000,10000000000000008.000000,0.000000,8.000000,1.000000,0,-1.000000,""
	d00,w0,delay,1.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,1.000000,20.700000,21.700000,0.000000,20.700000,1.000000,0,-1.000000,""
	d01,w0,delay,10.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,10.000000,20.700000,30.700000,0.000000,20.700000,1.000000,1,-1.000000,""
	d02,w0,delay,100.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,100.000000,20.700000,120.700000,0.000000,20.700000,1.000000,0,-1.000000,""
	d03,w0,delay,1000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,1000.000000,20.700000,1020.700000,0.000000,20.700000,1.000000,0,-1.000000,""
	d04,w0,delay,10000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,10000.000000,20.700000,10020.700000,0.000000,20.700000,1.000000,0,-1.000000,""
	d05,w0,delay,100000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,100000.000000,20.700000,100020.700000,0.000000,20.700000,1.000000,0,-1.000000,""
	d06,w0,delay,1000000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,1000000.000000,20.700000,1000020.700000,0.000000,20.700000,1.000000,0,-1.000000,""
	d07,w0,delay,10000000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,10000000.000000,20.700000,10000020.700000,0.000000,20.700000,1.000000,0,-1.000000,""
	d08,w0,delay,100000000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,100000000.000000,20.700000,100000020.700000,0.000000,20.700000,1.000000,0,-1.000000,""
	d09,w0,delay,1000000000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,1000000000.000000,20.700000,1000000020.700000,0.000000,20.700000,1.000000,0,-1.000000,""
	d10,w0,delay,10000000000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,10000000000.000000,20.700001,10000000020.700001,0.000000,20.700001,1.000000,0,-1.000000,""
	d11,w0,delay,100000000000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,99999999999.999985,20.700012,100000000020.699997,-0.000015,20.699997,0.999999,0,-1.000000,""
	d12,w0,delay,1000000000000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,999999999999.999878,20.700073,1000000000020.699951,-0.000122,20.699951,0.999994,0,-1.000000,""
	d13,w0,delay,10000000000000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,9999999999999.998047,20.701172,10000000000020.699219,-0.001953,20.699219,0.999906,0,-1.000000,""
	d14,w0,delay,100000000000000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,100000000000000.015625,20.703125,100000000000020.718750,0.015625,20.718750,1.000755,0,-1.000000,""
	d15,w0,delay,1000000000000000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,1000000000000000.000000,20.750000,1000000000000020.750000,0.000000,20.750000,1.000000,0,-1.000000,""
	d16,w0,delay,10000000000000000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,10000000000000000.000000,22.000000,10000000000000022.000000,0.000000,22.000000,1.000000,1,-1.000000,""
	d17,w0,delay,100000000000000000.000000,1,30.000000,1,COMPLETED_SUCCESSFULLY,100000000000000000.000000,32.000000,100000000000000032.000000,0.000000,32.000000,1.000000,0,-1.000000,""
	p00,w0,parallel,1.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,1.000000,0.003000,1.003000,0.000000,0.003000,1.000000,1-2,-1.000000,""
	p01,w0,parallel,10.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,10.000000,0.003000,10.003000,0.000000,0.003000,1.000000,2-3,-1.000000,""
	p02,w0,parallel,100.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,100.000000,0.003000,100.003000,0.000000,0.003000,1.000000,1-2,-1.000000,""
	p03,w0,parallel,1000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,1000.000000,0.003000,1000.003000,0.000000,0.003000,1.000000,1-2,-1.000000,""
	p04,w0,parallel,10000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,10000.000000,0.003000,10000.003000,0.000000,0.003000,1.000000,1-2,-1.000000,""
	p05,w0,parallel,100000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,100000.000000,0.003000,100000.003000,0.000000,0.003000,1.000000,1-2,-1.000000,""
	p06,w0,parallel,1000000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,1000000.000000,0.003000,1000000.003000,0.000000,0.003000,1.000000,1-2,-1.000000,""
	p07,w0,parallel,10000000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,10000000.000000,0.003000,10000000.003000,0.000000,0.003000,1.000000,1-2,-1.000000,""
	p08,w0,parallel,100000000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,100000000.000000,0.003000,100000000.003000,0.000000,0.003000,1.000000,1-2,-1.000000,""
	p09,w0,parallel,1000000000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,1000000000.000000,0.003000,1000000000.003000,0.000000,0.003000,1.000000,1-2,-1.000000,""
	p10,w0,parallel,10000000000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,10000000000.000000,0.003000,10000000000.003000,0.000000,0.003000,1.000000,1-2,-1.000000,""
	p11,w0,parallel,100000000000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,100000000000.000000,0.003006,100000000000.003006,0.000000,0.003006,1.000000,1-2,-1.000000,""
	p12,w0,parallel,1000000000000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,1000000000000.000000,0.003052,1000000000000.003052,0.000000,0.003052,1.000000,1-2,-1.000000,""
	p13,w0,parallel,10000000000000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,10000000000000.000000,0.003906,10000000000000.003906,0.000000,0.003906,1.000000,1-2,-1.000000,""
	p14,w0,parallel,100000000000000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,100000000000000.015625,0.000010,100000000000000.015625,0.015625,0.015633,1563.262939,1-2,-1.000000,""
	p15,w0,parallel,1000000000000000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,1000000000000000.000000,0.000010,1000000000000000.000000,0.000000,0.000000,0.000000,1-2,-1.000000,""
	p16,w0,parallel,10000000000000000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,10000000000000000.000000,0.000010,10000000000000000.000000,0.000000,0.000000,0.000000,2-3,-1.000000,""
	p17,w0,parallel,100000000000000000.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,100000000000000000.000000,0.000010,100000000000000000.000000,0.000000,0.000000,0.000000,1-2,-1.000000,""
	t17,w0,delay,100000000000000032.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,100000000000000048.000000,16.000000,100000000000000064.000000,16.000000,32.000000,2.000000,0,-1.000000,""
	w17,w0,delay,100000000000000000.000000,1,10.000000,0,COMPLETED_WALLTIME_REACHED,100000000000000000.000000,16.000000,100000000000000016.000000,0.000000,16.000000,1.000000,3,-1.000000,""
	x16,w0,thrice,10000000000000000.000000,1,9.000000,0,COMPLETED_WALLTIME_REACHED,10000000000000000.000000,10.000000,10000000000000010.000000,0.000000,10.000000,1.000000,4,-1.000000,""
`[1:], "\t", "")
	if got != want {
		t.Errorf("_jobs.csv differs: %s", firstDiff(got, want))
	}
	if sched.Makespan != 1e17+64 || sched.NbJobsSuccess != 38 || sched.NbJobsKilled != 2 {
		t.Errorf("schedule: makespan %v, %d successes, %d killed; want 1e17+64, 38 and 2", sched.Makespan, sched.NbJobsSuccess, sched.NbJobsKilled)
	}
}
