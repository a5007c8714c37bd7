package main

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// The committed workload is what the generator writes with its defaults.
func TestCommittedWorkloadIsGenerated(t *testing.T) {
	want, err := os.ReadFile("../daily.json")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := (day{hours: 24, jobsPerHour: 10, depth: 0.8, seed: 1}).write(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Error("examples/karpenter/daily.json is not what the generator writes: go run -C examples/karpenter ./daily > examples/karpenter/daily.json")
	}
}

// The arrivals follow the cycle: more in the afternoon (12:00–18:00)
// than at night (00:00–06:00), every one within the day, in order; every
// job's profile exists, and its walltime is twice its run time.
func TestArrivalsFollowTheDailyCycle(t *testing.T) {
	var got bytes.Buffer
	if err := (day{hours: 24, jobsPerHour: 10, depth: 0.8, seed: 1}).write(&got); err != nil {
		t.Fatal(err)
	}
	var wl workload
	if err := json.Unmarshal(got.Bytes(), &wl); err != nil {
		t.Fatal(err)
	}
	night, afternoon := 0, 0
	last := 0.0
	for _, j := range wl.Jobs {
		if j.Subtime < last || j.Subtime >= 24*3600 {
			t.Fatalf("job %s at %g: out of order or past the day", j.ID, j.Subtime)
		}
		last = j.Subtime
		switch h := j.Subtime / 3600; {
		case h < 6:
			night++
		case h >= 12 && h < 18:
			afternoon++
		}
		p, ok := wl.Profiles[j.Profile]
		if !ok {
			t.Fatalf("job %s: no profile %q", j.ID, j.Profile)
		}
		if j.Walltime != 2*p.Delay {
			t.Errorf("job %s: walltime %g for a run of %g s", j.ID, j.Walltime, p.Delay)
		}
	}
	if len(wl.Jobs) < 200 || len(wl.Jobs) > 300 {
		t.Errorf("%d jobs, want about 240 (10 an hour)", len(wl.Jobs))
	}
	if afternoon < 3*night {
		t.Errorf("%d jobs in the afternoon, %d at night: want at least three times as many", afternoon, night)
	}
}
