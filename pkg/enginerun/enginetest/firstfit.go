package enginetest

import (
	"fmt"

	"github.com/batkube/batkube/pkg/batsim"
)

// FirstFit is a trivial scheduler: each job, in submission order, runs alone
// on the first free resources as soon as enough are free; a job that asks
// for more resources than the platform has (or for none) is rejected.
// Completed jobs free their resources. Its zero value is ready to use.
type FirstFit struct {
	// CallEvery, if positive, makes the scheduler ask for a REQUESTED_CALL
	// CallEvery seconds later whenever jobs are left waiting (a real
	// scheduler's periodic wake-up; completions wake it up anyway).
	CallEvery float64

	all, free batsim.IntervalSet
	queue     []waiting
	callAt    float64 // the pending CALL_ME_LATER's date, or 0
	// Started and Completed count the jobs started and reported completed.
	Started, Completed int
}

type waiting struct {
	id  batsim.JobID
	res int
}

var _ Decider = (*FirstFit)(nil)

// Decide implements Decider.
func (s *FirstFit) Decide(m batsim.Message) (batsim.Message, error) {
	reply := batsim.Message{Now: m.Now}
	decide := func(d batsim.EventData) {
		reply.Events = append(reply.Events, batsim.Event{Timestamp: m.Now, Data: d})
	}
	for _, ev := range m.Events {
		switch d := ev.Data.(type) {
		case batsim.SimulationBegins:
			ids := make([]int, len(d.ComputeResources))
			for i, r := range d.ComputeResources {
				ids[i] = r.ID
			}
			all, err := batsim.IntervalSetFromIDs(ids)
			if err != nil {
				return batsim.Message{}, fmt.Errorf("first fit: %w", err)
			}
			s.all, s.free = all, all
		case batsim.JobSubmitted:
			if d.Job.Res <= 0 || d.Job.Res > s.all.Len() {
				decide(batsim.RejectJob{JobID: d.JobID})
				continue
			}
			s.queue = append(s.queue, waiting{d.JobID, d.Job.Res})
		case batsim.JobCompleted:
			s.free = s.free.Union(d.Alloc)
			s.Completed++
		case batsim.RequestedCall:
			if ev.Timestamp >= s.callAt {
				s.callAt = 0
			}
		}
	}
	left := s.queue[:0]
	for _, j := range s.queue {
		if s.free.Len() < j.res {
			left = append(left, j)
			continue
		}
		alloc := s.free.First(j.res)
		s.free = s.free.Difference(alloc)
		s.Started++
		decide(batsim.ExecuteJob{JobID: j.id, Alloc: alloc})
	}
	clear(s.queue[len(left):])
	s.queue = left
	if len(s.queue) > 0 && s.CallEvery > 0 && s.callAt == 0 {
		s.callAt = m.Now + s.CallEvery
		decide(batsim.CallMeLater{At: s.callAt})
	}
	return reply, nil
}
