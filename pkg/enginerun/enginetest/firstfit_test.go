package enginetest

import (
	"slices"
	"strconv"
	"testing"

	"github.com/batkube/batkube/pkg/batsim"
)

func TestFirstFit(t *testing.T) {
	set := func(s string) batsim.IntervalSet {
		v, err := batsim.ParseIntervalSet(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	submit := func(id string, res int) batsim.Event {
		return batsim.Event{Data: batsim.JobSubmitted{JobID: batsim.JobID(id), Job: batsim.Job{ID: batsim.JobID(id), Res: res, Profile: "p"}}}
	}
	begins := batsim.Event{Data: batsim.SimulationBegins{ComputeResources: []batsim.Resource{{ID: 0}, {ID: 1}, {ID: 2}}}}
	s := &FirstFit{CallEvery: 10}
	steps := []struct {
		name   string
		now    float64
		events []batsim.Event
		want   []string // the decisions, as "TYPE job alloc" or "CALL_ME_LATER at"
	}{
		{"begins", 0, []batsim.Event{begins}, nil},
		{"fits, queues, rejects", 1, []batsim.Event{submit("w!a", 2), submit("w!b", 2), submit("w!c", 4), submit("w!d", 1)},
			[]string{"REJECT_JOB w!c", "EXECUTE_JOB w!a 0-1", "EXECUTE_JOB w!d 2", "CALL_ME_LATER 11"}},
		{"woken up, still waiting", 11, []batsim.Event{{Timestamp: 11, Data: batsim.RequestedCall{}}},
			[]string{"CALL_ME_LATER 21"}},
		{"completion frees", 12, []batsim.Event{{Timestamp: 12, Data: batsim.JobCompleted{JobID: "w!a", Alloc: set("0-1")}}},
			[]string{"EXECUTE_JOB w!b 0-1"}},
	}
	for _, st := range steps {
		reply, err := s.Decide(batsim.Message{Now: st.now, Events: st.events})
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		var got []string
		for _, ev := range reply.Events {
			switch d := ev.Data.(type) {
			case batsim.ExecuteJob:
				got = append(got, "EXECUTE_JOB "+string(d.JobID)+" "+d.Alloc.String())
			case batsim.RejectJob:
				got = append(got, "REJECT_JOB "+string(d.JobID))
			case batsim.CallMeLater:
				got = append(got, "CALL_ME_LATER "+strconv.FormatFloat(d.At, 'g', -1, 64))
			}
			if ev.Timestamp != st.now {
				t.Errorf("%s: decision stamped %g, want %g", st.name, ev.Timestamp, st.now)
			}
		}
		if reply.Now != st.now || !slices.Equal(got, st.want) {
			t.Errorf("%s: got now %g, %q, want now %g, %q", st.name, reply.Now, got, st.now, st.want)
		}
	}
	if s.Started != 3 || s.Completed != 1 {
		t.Errorf("counts: got %d started, %d completed, want 3 and 1", s.Started, s.Completed)
	}
}
