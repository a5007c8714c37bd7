package batsim

import "fmt"

// EventType is the "type" of an event.
type EventType string

// The event types of the protocol.
const (
	// Both directions.
	TypeQuery  EventType = "QUERY"
	TypeAnswer EventType = "ANSWER"
	TypeNotify EventType = "NOTIFY"

	// Batsim to the decision process.
	TypeSimulationBegins     EventType = "SIMULATION_BEGINS"
	TypeSimulationEnds       EventType = "SIMULATION_ENDS"
	TypeJobSubmitted         EventType = "JOB_SUBMITTED"
	TypeJobCompleted         EventType = "JOB_COMPLETED"
	TypeJobKilled            EventType = "JOB_KILLED"
	TypeResourceStateChanged EventType = "RESOURCE_STATE_CHANGED"
	TypeRequestedCall        EventType = "REQUESTED_CALL"

	// The decision process to Batsim.
	TypeExecuteJob       EventType = "EXECUTE_JOB"
	TypeRejectJob        EventType = "REJECT_JOB"
	TypeKillJob          EventType = "KILL_JOB"
	TypeCallMeLater      EventType = "CALL_ME_LATER"
	TypeRegisterJob      EventType = "REGISTER_JOB"
	TypeRegisterProfile  EventType = "REGISTER_PROFILE"
	TypeSetResourceState EventType = "SET_RESOURCE_STATE"
	TypeSetJobMetadata   EventType = "SET_JOB_METADATA"
	TypeChangeJobState   EventType = "CHANGE_JOB_STATE"
)

// Direction tells who sends a message.
type Direction uint8

// The two directions of the protocol.
const (
	FromBatsim    Direction = 1 << iota // Batsim (the REQ side) to the decision process
	FromScheduler                       // the decision process (the REP side) to Batsim
)

func (d Direction) String() string {
	switch d {
	case FromBatsim:
		return "Batsim"
	case FromScheduler:
		return "the decision process"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// senders returns the directions in which events of type t travel; 0 for an
// unknown type.
func (t EventType) senders() Direction {
	switch t {
	case TypeQuery, TypeAnswer, TypeNotify:
		return FromBatsim | FromScheduler
	case TypeSimulationBegins, TypeSimulationEnds, TypeJobSubmitted, TypeJobCompleted,
		TypeJobKilled, TypeResourceStateChanged, TypeRequestedCall:
		return FromBatsim
	case TypeExecuteJob, TypeRejectJob, TypeKillJob, TypeCallMeLater, TypeRegisterJob,
		TypeRegisterProfile, TypeSetResourceState, TypeSetJobMetadata, TypeChangeJobState:
		return FromScheduler
	}
	return 0
}

// Event is one event of a message. Its type is that of its data.
type Event struct {
	Timestamp float64 // seconds of simulated time
	Data      EventData
}

// Type returns the type of the event's data ("" if it has none).
func (e Event) Type() EventType {
	if e.Data == nil {
		return ""
	}
	return e.Data.EventType()
}

// EventData is the typed "data" of an event: one of the types of this
// package named after the event types (SimulationBegins, ExecuteJob, ...).
type EventData interface {
	EventType() EventType
	// validate checks the rules of the protocol the JSON types do not
	// express, for data sent in direction from.
	validate(from Direction) error
	// encodeMembers writes the members of the data object, which Encode
	// opens and closes.
	encodeMembers(w *writer)
}

// Message is what each side sends in turn: the sender's current time and a
// sequence of events.
type Message struct {
	// Now is the time of the message in seconds. From Batsim: decisions
	// cannot be taken before it. From the decision process: the time at
	// which it finished deciding (at least the now it answers).
	Now    float64
	Events []Event
}
