package engine

import (
	"strings"
	"testing"
)

// TestWalltimeBoundary runs testdata/walltime/walltime.json, jobs ending at
// their walltime or about, one at a time on hosts of 1 Gflops with no
// network, and checks the rows Batsim 4.2.1 writes for them where its
// messages take no time (a real run on platform_4.xml with SimGrid's
// loopback taken away, --sg-cfg network/loopback-bw:1e300, gives these rows
// byte for byte; with the loopback, its tenths of a nanosecond make
// neg_wall reach its walltime, and step_b_comp too when started after
// step_a_delay: the recording testdata/batsim-4.2.1/walltime). As Batsim's do_delay_task, a delay sleeps its whole length
// only if it is shorter than the walltime left (remaining_time), and
// otherwise sleeps until the walltime and reaches it; as
// execute_parallel_task, a computation is waited for until the walltime,
// and completes if SimGrid finishes it in the step of its timeout. The
// walltime left is carried from leaf to leaf: a delay takes its length off
// it, a computation the time it ran (clock after less clock before).
//
//   - delay_eq: a 10 s delay with a walltime of 10: not shorter, it
//     reaches the walltime at 10 s. delay_lt: a walltime of 10.000000001:
//     the delay completes.
//   - comp_eq: 1e10 flops at 1 Gflops, walltime 10: the computation and
//     the timeout end in the same step; the computation, started first,
//     is handled first: it completes. comp_gt: 1.0000001e10 flops: the
//     timeout comes first, walltime reached at 10 s.
//   - comp_ulp: 1.9e9 flops, walltime 1.9: 1 / (1e9 / 1.9e9) is
//     1.9000000000000001 s, an ulp after the timeout; at the timeout's step
//     1.2e-16 of the work is left, less than SimGrid's 1e-14: done.
//   - c5_d5 (5 s of computation, then a 5 s delay; walltime 10): 5 s left
//     after the computation, and the delay is not shorter: walltime at 10.
//     d5_c5: the delay leaves 5 s, the computation ends with the timeout:
//     completed at 10 s.
//   - c10_d1: the computation completes at the walltime, leaving 0 s; the
//     delay, 1 s, is not shorter than 0: it sleeps 0 s and reaches the
//     walltime at 10. c10_c0: the next computation is empty: SimGrid
//     completes it at once, before its 0 s timeout: completed. c10_c1: a
//     1 s computation with 0 s left: its timeout comes at once, walltime.
//   - d2.5x4 (a 2.5 s delay, four times; walltime 10): 7.5, 5, then 2.5 s
//     left, and the fourth delay is not shorter than 2.5: walltime at 10.
//   - d0.1_d0.2 (walltime 0.30000000000000004, the double sum 0.1 + 0.2):
//     0.1 leaves 0.20000000000000004, and 0.2 is shorter: completed.
//   - neg_wall (0.2 s of computation then 100 s of delay, walltime 0.2,
//     started at 0.1): the computation ends at 0.1 + 0.2 =
//     0.30000000000000004, its timeout's date: completed, and it took
//     0.30000000000000004 - 0.1 = 0.20000000000000004 s, more than the
//     walltime: -2.8e-17 s left, which Batsim takes for no walltime (a
//     negative remaining_time): the delay runs its 100 s, and the job
//     completes after 100.2 s.
//   - c0.2_d100: the same started at 2400.1: 2400.3 - 2400.1 is
//     0.1999999999998181, 1.8e-13 s are left, the delay sleeps that long
//     and reaches the walltime.
//   - step_a_delay and step_b_comp (Batsim's test_walltime.json's jobs 10
//     and 1010): started together, the delay reaching its walltime and
//     the computation ending with its timeout in one step: the delay job
//     reaches its walltime, the computing one completes. (The submitter
//     wakes 4.5e-13 s before 2600 after the steps of the jobs before,
//     submits step_a_delay, and step_b_comp at 2600 after a further
//     sleep; the decision process, reading 2600.000000, starts both at
//     2600. Started 4.5e-13 s apart, the delay's end would time the
//     computation out: a timeout with less than 1e-9 s left ends with
//     the step, a computation only with less than 1e-14 of its work.)
func TestWalltimeBoundary(t *testing.T) {
	got, sched := runFile(t, "testdata/walltime/walltime.json", 2)
	want := jobsHeader + strings.ReplaceAll(`
	c0.2_d100,w0,c0.2_d100,2400.100000,1,0.200000,0,COMPLETED_WALLTIME_REACHED,2400.100000,0.200000,2400.300000,0.000000,0.200000,1.000000,0,-1.000000,""
	c10_c0,w0,c10_c0,1600.000000,1,10.000000,1,COMPLETED_SUCCESSFULLY,1600.000000,10.000000,1610.000000,0.000000,10.000000,1.000000,0,-1.000000,""
	c10_c1,w0,c10_c1,1800.000000,1,10.000000,0,COMPLETED_WALLTIME_REACHED,1800.000000,10.000000,1810.000000,0.000000,10.000000,1.000000,0,-1.000000,""
	c10_d1,w0,c10_d1,1400.000000,1,10.000000,0,COMPLETED_WALLTIME_REACHED,1400.000000,10.000000,1410.000000,0.000000,10.000000,1.000000,0,-1.000000,""
	c5_d5,w0,c5_d5,1000.000000,1,10.000000,0,COMPLETED_WALLTIME_REACHED,1000.000000,10.000000,1010.000000,0.000000,10.000000,1.000000,0,-1.000000,""
	comp_eq,w0,c10,400.000000,1,10.000000,1,COMPLETED_SUCCESSFULLY,400.000000,10.000000,410.000000,0.000000,10.000000,1.000000,0,-1.000000,""
	comp_gt,w0,c10+,600.000000,1,10.000000,0,COMPLETED_WALLTIME_REACHED,600.000000,10.000000,610.000000,0.000000,10.000000,1.000000,0,-1.000000,""
	comp_ulp,w0,c1.9,800.000000,1,1.900000,1,COMPLETED_SUCCESSFULLY,800.000000,1.900000,801.900000,0.000000,1.900000,1.000000,0,-1.000000,""
	d0.1_d0.2,w0,d0.1_d0.2,2200.000000,1,0.300000,1,COMPLETED_SUCCESSFULLY,2200.000000,0.300000,2200.300000,0.000000,0.300000,1.000000,0,-1.000000,""
	d2.5x4,w0,d2.5x4,2000.000000,1,10.000000,0,COMPLETED_WALLTIME_REACHED,2000.000000,10.000000,2010.000000,0.000000,10.000000,1.000000,0,-1.000000,""
	d5_c5,w0,d5_c5,1200.000000,1,10.000000,1,COMPLETED_SUCCESSFULLY,1200.000000,10.000000,1210.000000,0.000000,10.000000,1.000000,0,-1.000000,""
	delay_eq,w0,d10,0.000000,1,10.000000,0,COMPLETED_WALLTIME_REACHED,0.000000,10.000000,10.000000,0.000000,10.000000,1.000000,0,-1.000000,""
	delay_lt,w0,d10,200.000000,1,10.000000,1,COMPLETED_SUCCESSFULLY,200.000000,10.000000,210.000000,0.000000,10.000000,1.000000,0,-1.000000,""
	neg_wall,w0,c0.2_d100,0.100000,1,0.200000,1,COMPLETED_SUCCESSFULLY,0.100000,100.200000,100.300000,0.000000,100.200000,1.000000,1,-1.000000,""
	step_a_delay,w0,d10,2600.000000,1,10.000000,0,COMPLETED_WALLTIME_REACHED,2600.000000,10.000000,2610.000000,0.000000,10.000000,1.000000,0,-1.000000,""
	step_b_comp,w0,c10,2600.000000,1,10.000000,1,COMPLETED_SUCCESSFULLY,2600.000000,10.000000,2610.000000,0.000000,10.000000,1.000000,1,-1.000000,""
`[1:], "\t", "")
	if got != want {
		t.Errorf("_jobs.csv differs: %s", firstDiff(got, want))
	}
	if sched.NbJobsSuccess != 8 || sched.NbJobsKilled != 8 {
		t.Errorf("schedule: %d successes, %d killed; want 8 and 8", sched.NbJobsSuccess, sched.NbJobsKilled)
	}
}
