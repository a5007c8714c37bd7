package batsim

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The data of the events both sides send.

// NotifyType is the "type" of a NOTIFY.
type NotifyType string

// The notifications of Batsim 4.x.
const (
	// From Batsim.
	NoMoreStaticJobToSubmit    NotifyType = "no_more_static_job_to_submit"
	NoMoreExternalEventToOccur NotifyType = "no_more_external_event_to_occur"
	EventMachineUnavailable    NotifyType = "event_machine_unavailable" // with Resources
	EventMachineAvailable      NotifyType = "event_machine_available"   // with Resources

	// From the decision process (dynamic jobs).
	RegistrationFinished NotifyType = "registration_finished"
	ContinueRegistration NotifyType = "continue_registration"
)

// Notify tells something that needs no answer. Batsim also forwards the
// external events it does not know as notifications of their own type, with
// their other members in Extra.
type Notify struct {
	Type NotifyType
	// Resources are the machines of EventMachineUnavailable and
	// EventMachineAvailable.
	Resources IntervalSet
	// Extra holds the other members, as compact JSON.
	Extra map[string]json.RawMessage
}

func (Notify) EventType() EventType { return TypeNotify }

func (n Notify) hasResources() bool {
	return n.Type == EventMachineUnavailable || n.Type == EventMachineAvailable
}

func decodeNotify(f *fields) EventData {
	n := Notify{Type: NotifyType(req(f, "type", decodeString))}
	if n.hasResources() {
		n.Resources = req(f, "resources", decodeIntervalSet)
	}
	n.Extra = f.rest()
	return n
}

func (n Notify) validate(from Direction) error {
	if n.Type == "" {
		return inField("type", errEmpty)
	}
	if from == FromScheduler && n.Type != RegistrationFinished && n.Type != ContinueRegistration {
		return inField("type", fmt.Errorf("%q is not a notification a decision process sends (%s or %s)",
			n.Type, RegistrationFinished, ContinueRegistration))
	}
	if n.hasResources() && n.Resources.IsEmpty() {
		return inField("resources", errEmpty)
	}
	if !n.hasResources() && !n.Resources.IsEmpty() {
		return inField("resources", fmt.Errorf("only %s and %s notifications have resources", EventMachineUnavailable, EventMachineAvailable))
	}
	if _, ok := n.Extra["type"]; ok {
		return inField("type", errShadow)
	}
	if _, ok := n.Extra["resources"]; ok && n.hasResources() {
		return inField("resources", errShadow)
	}
	return nil
}

func (n Notify) encodeMembers(w *writer) {
	w.stringField("type", string(n.Type))
	if n.hasResources() {
		w.setField("resources", n.Resources)
	}
	w.rawFields(n.Extra)
}

// Query asks the other side for information, answered by an ANSWER. Batsim
// asks for EstimateWaitingTime; a decision process asks for ConsumedEnergy.
type Query struct {
	ConsumedEnergy      bool // the energy consumed so far, in joules (energy plugin)
	EstimateWaitingTime *WaitingTimeQuery
}

// WaitingTimeQuery asks how long a potential job would wait.
type WaitingTimeQuery struct {
	JobID JobID
	Job   Job // res and walltime matter; id, subtime and profile may be absent
}

func (Query) EventType() EventType { return TypeQuery }

func decodeRequests(raw json.RawMessage) (Query, error) {
	members, err := splitObject(raw)
	if err != nil {
		return Query{}, err
	}
	var q Query
	for _, m := range members {
		switch k := m.key; k {
		case "consumed_energy":
			if _, err := decodeEmptyObject(m.value); err != nil {
				return Query{}, inField(k, err)
			}
			q.ConsumedEnergy = true
		case "estimate_waiting_time":
			wq, err := decodeObject(m.value, func(f *fields) WaitingTimeQuery {
				return WaitingTimeQuery{
					JobID: req(f, "job_id", decodeJobID),
					Job:   req(f, "job", decodePartialJob),
				}
			})
			if err != nil {
				return Query{}, inField(k, err)
			}
			q.EstimateWaitingTime = &wq
		default:
			return Query{}, inField(m.key, errors.New("unknown request"))
		}
	}
	return q, nil
}

func decodeQuery(f *fields) EventData { return req(f, "requests", decodeRequests) }

func (q Query) validate(from Direction) error {
	switch {
	case !q.ConsumedEnergy && q.EstimateWaitingTime == nil:
		return inField("requests", errEmpty)
	case from == FromBatsim && q.ConsumedEnergy:
		return inField("requests", inField("consumed_energy", errors.New("Batsim does not send this query")))
	case from == FromScheduler && q.EstimateWaitingTime != nil:
		return inField("requests", inField("estimate_waiting_time", errors.New("the decision process does not send this query")))
	case q.EstimateWaitingTime != nil && q.EstimateWaitingTime.JobID == "":
		return inField("requests", inField("estimate_waiting_time", inField("job_id", errEmpty)))
	case q.EstimateWaitingTime != nil:
		return inField("requests", inField("estimate_waiting_time", inField("job", q.EstimateWaitingTime.Job.validate(false))))
	}
	return nil
}

func (q Query) encodeMembers(w *writer) {
	w.key("requests")
	w.open('{')
	if q.ConsumedEnergy {
		w.key("consumed_energy")
		w.open('{')
		w.close('}')
	}
	if q := q.EstimateWaitingTime; q != nil {
		w.key("estimate_waiting_time")
		w.open('{')
		w.stringField("job_id", string(q.JobID))
		w.key("job")
		q.Job.encode(w)
		w.close('}')
	}
	w.close('}')
}

// Answer replies to a Query.
type Answer struct {
	ConsumedEnergy      *float64 // joules, from Batsim
	EstimateWaitingTime *WaitingTimeEstimate
}

// WaitingTimeEstimate answers a WaitingTimeQuery.
type WaitingTimeEstimate struct {
	JobID                JobID
	EstimatedWaitingTime float64 // seconds
}

func (Answer) EventType() EventType { return TypeAnswer }

func decodeEstimate(raw json.RawMessage) (WaitingTimeEstimate, error) {
	return decodeObject(raw, func(f *fields) WaitingTimeEstimate {
		return WaitingTimeEstimate{
			JobID:                req(f, "job_id", decodeJobID),
			EstimatedWaitingTime: req(f, "estimated_waiting_time", decodeFloat),
		}
	})
}

func decodeAnswer(f *fields) EventData {
	var a Answer
	if v, ok := read(f, "consumed_energy", decodeFloat, false); ok {
		a.ConsumedEnergy = &v
	}
	if v, ok := read(f, "estimate_waiting_time", decodeEstimate, false); ok {
		a.EstimateWaitingTime = &v
	}
	if unread := f.unread(); f.err == nil && len(unread) > 0 {
		f.err = inField(unread[0].key, errors.New("unknown answer"))
	}
	return a
}

func (a Answer) validate(from Direction) error {
	switch {
	case a.ConsumedEnergy == nil && a.EstimateWaitingTime == nil:
		return errors.New("no answer")
	case from == FromBatsim && a.EstimateWaitingTime != nil:
		return inField("estimate_waiting_time", errors.New("Batsim does not send this answer"))
	case from == FromScheduler && a.ConsumedEnergy != nil:
		return inField("consumed_energy", errors.New("the decision process does not send this answer"))
	case a.EstimateWaitingTime != nil && a.EstimateWaitingTime.JobID == "":
		return inField("estimate_waiting_time", inField("job_id", errEmpty))
	}
	return nil
}

func (a Answer) encodeMembers(w *writer) {
	if a.ConsumedEnergy != nil {
		w.floatField("consumed_energy", *a.ConsumedEnergy)
	}
	if e := a.EstimateWaitingTime; e != nil {
		w.key("estimate_waiting_time")
		w.open('{')
		w.stringField("job_id", string(e.JobID))
		w.floatField("estimated_waiting_time", e.EstimatedWaitingTime)
		w.close('}')
	}
}
