package batsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Decode parses and validates a message sent in direction from. Any problem
// is reported as a *MessageError naming the event and the field.
//
// Members Batsim may add in a later version are ignored in the events Batsim
// sends; in the events of the decision process, which Batsim checks strictly,
// an unknown member is an error.
func Decode(data []byte, from Direction) (Message, error) {
	if !json.Valid(data) {
		var v json.RawMessage
		err := json.Unmarshal(data, &v)
		if err == nil { // cannot happen: Valid and Unmarshal agree
			err = errors.New("invalid")
		}
		return Message{}, &MessageError{Event: -1, Err: fmt.Errorf("invalid JSON: %w", err)}
	}
	f, err := objectFields(data)
	if err != nil {
		if _, ok := err.(*fieldError); ok {
			return Message{}, messageError(-1, "", err)
		}
		return Message{}, &MessageError{Event: -1, Err: fmt.Errorf("message: %w", err)}
	}
	now := req(f, "now", decodeFloat)
	events := req(f, "events", listOf(decodeRawValue))
	if f.err != nil {
		return Message{}, messageError(-1, "", f.err)
	}
	if err := checkNow(now); err != nil {
		return Message{}, err
	}
	m := Message{Now: now}
	if len(events) > 0 {
		m.Events = make([]Event, 0, len(events))
	}
	for i, raw := range events {
		ev, err := decodeEvent(i, raw, from)
		if err != nil {
			return Message{}, err
		}
		if err := checkEvent(m.Now, m.Events, ev, from); err != nil {
			return Message{}, err
		}
		m.Events = append(m.Events, ev)
	}
	return m, nil
}

// Encode validates a message to be sent in direction from and writes it as
// compact JSON. Problems are reported as by Decode, so that nothing the other
// side would reject is ever sent.
func Encode(m Message, from Direction) ([]byte, error) {
	if err := checkNow(m.Now); err != nil {
		return nil, err
	}
	w := writer{buf: make([]byte, 0, 64+128*len(m.Events))}
	w.open('{')
	w.floatField("now", m.Now)
	w.key("events")
	w.open('[')
	for i, ev := range m.Events {
		if err := checkEvent(m.Now, m.Events[:i], ev, from); err != nil {
			return nil, err
		}
		w.open('{')
		w.floatField("timestamp", ev.Timestamp)
		w.stringField("type", string(ev.Type()))
		w.key("data")
		w.open('{')
		ev.Data.encodeMembers(&w)
		w.close('}')
		w.close('}')
		if w.err != nil {
			return nil, &MessageError{Event: i, Type: ev.Type(), Err: w.err}
		}
	}
	w.close(']')
	w.close('}')
	return w.buf, nil
}

func decodeRawValue(raw json.RawMessage) (json.RawMessage, error) { return raw, nil }

// decodeEvent decodes event i of a message sent in direction from.
func decodeEvent(i int, raw json.RawMessage, from Direction) (Event, error) {
	f, err := objectFields(raw)
	if fe, ok := err.(*fieldError); ok {
		return Event{}, &MessageError{Event: i, Err: fmt.Errorf("%q: %w", fe.path, fe.err)}
	}
	if err != nil {
		return Event{}, &MessageError{Event: i, Err: fmt.Errorf("event: %w", err)}
	}
	ts := req(f, "timestamp", decodeFloat)
	name := req(f, "type", decodeString)
	if fe, ok := f.err.(*fieldError); ok {
		return Event{}, &MessageError{Event: i, Err: fmt.Errorf("%q: %w", fe.path, fe.err)}
	}
	t := EventType(name)
	if t.senders() == 0 {
		return Event{}, &MessageError{Event: i, Err: fmt.Errorf("unknown event type %q", name)}
	}
	if t.senders()&from == 0 {
		return Event{}, &MessageError{Event: i, Type: t, Err: fmt.Errorf("%s does not send %s events", from, t)}
	}
	rawData, ok := f.lookup("data")
	if !ok {
		return Event{}, &MessageError{Event: i, Type: t, Err: errors.New(`"data": missing`)}
	}
	data, err := decodeData(t, rawData)
	if err != nil {
		return Event{}, messageError(i, t, err)
	}
	return Event{Timestamp: ts, Data: data}, nil
}

// decodeData decodes the data of an event of type t.
func decodeData(t EventType, raw json.RawMessage) (EventData, error) {
	if t == TypeSimulationEnds || t == TypeRequestedCall {
		if k := kindOf(raw); k != "object" && k != "null" {
			return nil, fmt.Errorf(`"data": %w`, &kindError{want: "object", got: k})
		}
		if t == TypeSimulationEnds {
			return SimulationEnds{}, nil
		}
		return RequestedCall{}, nil
	}
	f, err := objectFields(raw)
	if _, ok := err.(*fieldError); ok {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf(`"data": %w`, err)
	}
	var d EventData
	switch t {
	case TypeSimulationBegins:
		d = decodeSimulationBegins(f)
	case TypeJobSubmitted:
		d = decodeJobSubmitted(f)
	case TypeJobCompleted:
		d = decodeJobCompleted(f)
	case TypeJobKilled:
		d = decodeJobKilled(f)
	case TypeResourceStateChanged:
		d = decodeResourceStateChanged(f)
	case TypeNotify:
		d = decodeNotify(f)
	case TypeQuery:
		d = decodeQuery(f)
	case TypeAnswer:
		d = decodeAnswer(f)
	case TypeExecuteJob:
		d = decodeExecuteJob(f)
	case TypeRejectJob:
		d = decodeRejectJob(f)
	case TypeKillJob:
		d = decodeKillJob(f)
	case TypeCallMeLater:
		d = decodeCallMeLater(f)
	case TypeRegisterJob:
		d = decodeRegisterJob(f)
	case TypeRegisterProfile:
		d = decodeRegisterProfile(f)
	case TypeSetResourceState:
		d = decodeSetResourceState(f)
	case TypeSetJobMetadata:
		d = decodeSetJobMetadata(f)
	case TypeChangeJobState:
		d = decodeChangeJobState(f)
	default:
		return nil, fmt.Errorf("no decoder for event type %q", t)
	}
	if t.senders() == FromScheduler {
		f.noRest() // Batsim rejects the members it does not know
	}
	if f.err != nil {
		return nil, f.err
	}
	return d, nil
}

func checkNow(now float64) error {
	switch {
	case math.IsNaN(now) || math.IsInf(now, 0):
		return &MessageError{Event: -1, Field: "now", Err: fmt.Errorf("%v is not a time", now)}
	case now < 0:
		return &MessageError{Event: -1, Field: "now", Err: fmt.Errorf("negative time %v", now)}
	}
	return nil
}

// checkEvent validates ev, to be appended to the events before it of a
// message of time now sent in direction from.
func checkEvent(now float64, before []Event, ev Event, from Direction) error {
	i, t := len(before), ev.Type()
	switch {
	case ev.Data == nil:
		return &MessageError{Event: i, Err: errors.New("no data")}
	case t.senders()&from == 0:
		return &MessageError{Event: i, Type: t, Err: fmt.Errorf("%s does not send %s events", from, t)}
	case math.IsNaN(ev.Timestamp) || math.IsInf(ev.Timestamp, 0):
		return &MessageError{Event: i, Type: t, Err: fmt.Errorf("timestamp %v is not a time", ev.Timestamp)}
	case ev.Timestamp < 0:
		return &MessageError{Event: i, Type: t, Err: fmt.Errorf("negative timestamp %v", ev.Timestamp)}
	case ev.Timestamp > now:
		return &MessageError{Event: i, Type: t, Err: fmt.Errorf("timestamp %v is later than now %v", ev.Timestamp, now)}
	case i > 0 && ev.Timestamp < before[i-1].Timestamp:
		return &MessageError{Event: i, Type: t, Err: fmt.Errorf("timestamp %v is earlier than event %d's %v", ev.Timestamp, i-1, before[i-1].Timestamp)}
	}
	if err := ev.Data.validate(from); err != nil {
		return messageError(i, t, err)
	}
	return nil
}
