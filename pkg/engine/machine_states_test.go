package engine

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestAppendSeconds6FormatsAsCg checks the time column against C's %g
// (which Go's 'g' with precision 6 reproduces on doubles), with exact
// decimal ties rounded up as Batsim's slightly late clock rounds them.
func TestAppendSeconds6FormatsAsCg(t *testing.T) {
	for _, c := range []struct {
		t    float64
		want string
	}{
		{0, "0"},
		{1, "1"},
		{10, "10"},
		{100000, "100000"},
		{1000000, "1e+06"},
		{1234567, "1.23457e+06"},
		{35815.672, "35815.7"},
		{519.576, "519.576"},
		{0.0001, "0.0001"},
		{1.5e-5, "1.5e-05"},
		{1e-9, "1e-09"},
		{999999.5, "1e+06"},
		{1006.795, "1006.8"}, // a tie: %g on the double says 1006.79
		{2548.185, "2548.19"},
		{-2, "-2"},
		{0.1 + 0.2, "0.3"},
		{1e17, "1e+17"},
		{1e17 + 16, "1e+17"},
		{1.234565e17, "1.23456e+17"},    // an exact tie: %g rounds it to even
		{1867.8549999999998, "1867.86"}, // a tie to the nanosecond
		{1867.8549999, "1867.85"},
		{math.MaxFloat64, "1.79769e+308"},
		{5e-324, "4.94066e-324"},
	} {
		if got := string(appendSeconds6(nil, c.t)); got != c.want {
			t.Errorf("appendSeconds6(%v): got %q, want %q", c.t, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		v := math.Ldexp(rng.Float64(), rng.IntN(140)-80)
		if rng.IntN(2) == 0 {
			v = float64(rng.Int64N(int64(1e18))>>rng.IntN(60)) / 1e9
		}
		want := strconv.FormatFloat(v, 'g', 6, 64)
		// Away from ties both agree; near one the double may fall on
		// either side.
		if got := string(appendSeconds6(nil, v)); got != want && !nearTie(v) {
			t.Fatalf("appendSeconds6(%v): got %q, %%g says %q", v, got, want)
		}
	}
}

// nearTie reports whether v is within a nanosecond (or a few ulps) of a
// rounding tie at six significant digits.
func nearTie(v float64) bool {
	scale := math.Pow(10, 5-math.Floor(math.Log10(v)))
	frac := v*scale - math.Floor(v*scale)
	return math.Abs(frac-0.5) < 1e-6 || math.Abs(frac-0.5)/scale <= 1.5e-9
}

// TestMachineStatesRows checks the rows Batsim 4.2.1 writes: one after each
// job start and each job end (when no count changes too), multi-host jobs
// counted once per host, jobs taking no time writing both rows, killed and
// walltime jobs releasing their hosts, rejected jobs writing nothing.
func TestMachineStatesRows(t *testing.T) {
	w := mustWorkload(t, "w0", `{"nb_res": 3, "profiles": {
		"d5": {"type": "delay", "delay": 5}, "c0": {"type": "parallel_homogeneous", "cpu": 0, "com": 0},
		"c2": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0}},
		"jobs": [{"id": "a", "subtime": 0, "res": 2, "profile": "d5"},
		         {"id": "b", "subtime": 1, "res": 1, "profile": "d5"},
		         {"id": "z", "subtime": 2, "res": 1, "profile": "c0"},
		         {"id": "r", "subtime": 2, "res": 1, "profile": "d5"},
		         {"id": "k", "subtime": 3, "res": 1, "profile": "d5"},
		         {"id": "c", "subtime": 3, "res": 1, "profile": "c2", "walltime": 1.5}]}`)
	var out bytes.Buffer
	e, err := New(hostsPlatform([]float64{1e9, 1e9, 1e9}, 2, 2, 2), []*Workload{w},
		Options{ComputeSharing: true, MachineStatesOutput: &out})
	if err != nil {
		t.Fatal(err)
	}
	err = loop(e, func(msg Message) (float64, []Decision) {
		var ds []Decision
		for _, ev := range msg.Events {
			if _, ok := ev.(RequestedCall); ok {
				ds = append(ds, KillJob{Timestamp: msg.Now, JobIDs: []string{"w0!k"}})
			}
			s, ok := ev.(JobSubmitted)
			if !ok {
				continue
			}
			switch s.Job.ID {
			case "w0!a":
				ds = append(ds, ExecuteJob{Timestamp: msg.Now, JobID: s.Job.ID, Alloc: []int{0, 1}})
			case "w0!b": // shares host 1 with a
				ds = append(ds, ExecuteJob{Timestamp: msg.Now, JobID: s.Job.ID, Alloc: []int{1}})
			case "w0!z":
				ds = append(ds, ExecuteJob{Timestamp: msg.Now, JobID: s.Job.ID, Alloc: []int{2}})
			case "w0!r":
				ds = append(ds, RejectJob{Timestamp: msg.Now, JobID: s.Job.ID})
			case "w0!k":
				ds = append(ds, ExecuteJob{Timestamp: msg.Now, JobID: s.Job.ID, Alloc: []int{2}},
					CallMeLater{Timestamp: msg.Now, When: msg.Now + 0.5})
			case "w0!c":
				ds = append(ds, ExecuteJob{Timestamp: msg.Now, JobID: s.Job.ID, Alloc: []int{0}})
			}
		}
		return msg.Now, ds
	})
	if err != nil {
		t.Fatal(err)
	}
	want := machineStatesHeader + strings.Join([]string{
		"0,0,0,0,1,2",   // a starts on 0-1
		"1,0,0,0,1,2",   // b starts on 1, already computing
		"2,0,0,0,0,3",   // z starts on 2...
		"2,0,0,0,1,2",   // ...and ends at once
		"3,0,0,0,1,2",   // c (submitted before k) starts on 0, still running a
		"3,0,0,0,0,3",   // k starts on 2
		"3.5,0,0,0,1,2", // k killed
		"4.5,0,0,0,1,2", // c reaches its walltime; a still runs on 0
		"5,0,0,0,2,1",   // a ends: 0 idle, 1 still runs b
		"6,0,0,0,3,0",   // b ends
	}, "\n") + "\n"
	if got := out.String(); got != want {
		t.Errorf("_machine_states.csv:\ngot:\n%s\nwant:\n%s", got, want)
	}
}
