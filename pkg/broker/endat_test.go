package broker_test

import (
	"slices"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/broker"
)

// TestEndAtRejectsPendingAndKillsRunning: with EndAt, the broker asks for
// a call at that instant while work remains, and the step at it takes in
// its completions, then kills the running jobs and rejects the pending
// ones; a job submitted later is rejected at once, and no call is asked
// for any more.
func TestEndAtRejectsPendingAndKillsRunning(t *testing.T) {
	h := startOnNode0(t, broker.Options{Quiet: 20 * time.Millisecond, EndAt: 15 * time.Second})
	r := h.send(1, submitted("w!run"), submitted("w!done"), stuckJob("w!stuck"))
	// The pending job's backed-off wake-ups come first (2, 4, 8), then
	// the one at EndAt, before the next (16).
	var asked []float64
	for now := 1.0; ; {
		at, _ := calls(r)
		asked = append(asked, at...)
		if len(at) == 0 || slices.Contains(at, 15) {
			break
		}
		now = slices.Min(at)
		r = h.send(now, batsim.RequestedCall{})
	}
	if !slices.Contains(asked, 15) {
		t.Fatalf("CALL_ME_LATER at %v, want one at EndAt (15)", asked)
	}
	r = h.send(15, batsim.JobCompleted{JobID: "w!done", JobState: batsim.JobStateCompletedSuccessfully}, batsim.RequestedCall{})
	var killed, rejected []batsim.JobID
	for _, ev := range r.Events {
		switch d := ev.Data.(type) {
		case batsim.KillJob:
			killed = append(killed, d.JobIDs...)
		case batsim.RejectJob:
			rejected = append(rejected, d.JobID)
		case batsim.CallMeLater:
			t.Errorf("CALL_ME_LATER at %g after the end", d.At)
		default:
			t.Errorf("unexpected decision %T %+v", d, d)
		}
	}
	if !slices.Equal(killed, []batsim.JobID{"w!run"}) || !slices.Equal(rejected, []batsim.JobID{"w!stuck"}) {
		t.Fatalf("at EndAt: killed %v and rejected %v, want w!run killed (w!done completed at that instant) and w!stuck rejected", killed, rejected)
	}
	h.send(15, batsim.JobCompleted{JobID: "w!run", JobState: batsim.JobStateCompletedKilled, ReturnCode: -1},
		batsim.JobKilled{JobIDs: []batsim.JobID{"w!run"}})
	r = h.send(20, submitted("w!late"))
	if len(r.Events) != 1 {
		t.Fatalf("a job submitted after the end: got %+v, want REJECT_JOB", r.Events)
	}
	if rj, ok := r.Events[0].Data.(batsim.RejectJob); !ok || rj.JobID != "w!late" {
		t.Fatalf("a job submitted after the end: got %+v, want REJECT_JOB w!late", r.Events[0].Data)
	}
	h.end(20)
}
