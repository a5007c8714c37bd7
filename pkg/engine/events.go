package engine

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The types of the external events Batsim knows.
const (
	EventTypeMachineAvailable   = "machine_available"
	EventTypeMachineUnavailable = "machine_unavailable"
)

// EventList is a file of external events (Batsim's --events): one JSON
// object a line, {"timestamp": date, "type": machine_unavailable or
// machine_available, "resources": "0-1 3"}, or of another type, a generic
// event Batsim forwards to the decision process as it is (with its
// --forward-unknown-events; it refuses them otherwise).
type EventList struct {
	// Name is the list's name, Batsim's "we0", "we1"... in the order of
	// its --events options.
	Name string
	// Path is the file it was read from, or empty.
	Path string
	// Events are in the order Batsim takes them: by timestamp, then
	// machine_available, machine_unavailable and generic events, then in
	// the order of the file.
	Events []*ExternalEvent
}

// ExternalEvent is one line of an events file.
type ExternalEvent struct {
	// Timestamp is the date the event occurs at, in seconds.
	Timestamp float64
	// Type is machine_available, machine_unavailable or a generic event's.
	Type string
	// Resources are the machines a machine event names (resource ids,
	// sorted, distinct).
	Resources []int
	// Raw is the event's JSON object as written: a generic event's
	// NOTIFY data.
	Raw json.RawMessage
}

// generic reports whether e is a generic event.
func (e *ExternalEvent) generic() bool {
	return e.Type != EventTypeMachineAvailable && e.Type != EventTypeMachineUnavailable
}

// kindOrder is the rank of an event's type in Batsim's EventType enum, by
// which it sorts the events of one timestamp.
func (e *ExternalEvent) kindOrder() int {
	switch e.Type {
	case EventTypeMachineAvailable:
		return 0
	case EventTypeMachineUnavailable:
		return 1
	}
	return 2
}

// BatsimEventListName is the name real Batsim gives to its i-th events
// file ("we0", "we1", ...).
func BatsimEventListName(i int) string { return "we" + strconv.Itoa(i) }

// ReadEventsFile reads an events file; forwardUnknown accepts events of
// types Batsim does not know as generic ones (its
// --forward-unknown-events).
func ReadEventsFile(path, name string, forwardUnknown bool) (*EventList, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("engine: events %q: %w", name, err)
	}
	defer f.Close()
	l, err := ParseEvents(f, name, forwardUnknown)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	l.Path = path
	return l, nil
}

// ParseEvents reads events as Batsim's EventList::load_from_json does: one
// JSON object a non-empty line, with a type (a string) and a timestamp (a
// number >= 0); a machine event has resources, an interval set of machine
// ids ("0-1 3"); an event of another type is refused unless forwardUnknown.
// The events are then sorted by timestamp and type.
func ParseEvents(r io.Reader, name string, forwardUnknown bool) (*EventList, error) {
	l, err := parseEvents(r, name, forwardUnknown)
	if err != nil {
		return nil, fmt.Errorf("engine: events %q: %w", name, err)
	}
	return l, nil
}

func parseEvents(r io.Reader, name string, forwardUnknown bool) (*EventList, error) {
	l := &EventList{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Bytes()
		if len(text) == 0 {
			continue
		}
		ev, err := parseEvent(text, forwardUnknown)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		l.Events = append(l.Events, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(l.Events, func(i, j int) bool {
		a, b := l.Events[i], l.Events[j]
		if a.Timestamp != b.Timestamp {
			return a.Timestamp < b.Timestamp
		}
		return a.kindOrder() < b.kindOrder()
	})
	return l, nil
}

func parseEvent(raw []byte, forwardUnknown bool) (*ExternalEvent, error) {
	fields, err := objectFields(raw)
	if err != nil {
		return nil, fmt.Errorf("an event: %w", err)
	}
	ev := &ExternalEvent{Raw: append(json.RawMessage(nil), raw...)}
	if ev.Type, err = stringField(fields, "type", true); err != nil {
		return nil, fmt.Errorf("an event: %w", err)
	}
	if ev.Timestamp, err = numberField(fields, "timestamp"); err != nil {
		return nil, fmt.Errorf("event %q: %w", ev.Type, err)
	}
	if err := checkDate("timestamp", ev.Timestamp); err != nil {
		return nil, fmt.Errorf("event %q: %w", ev.Type, err)
	}
	if ev.generic() {
		if !forwardUnknown {
			return nil, inField("type", "unknown event type %q (want %s or %s; Batsim forwards others as generic events with --forward-unknown-events)",
				ev.Type, EventTypeMachineAvailable, EventTypeMachineUnavailable)
		}
		return ev, nil
	}
	set, err := stringField(fields, "resources", true)
	if err != nil {
		return nil, fmt.Errorf("event %q at %g: %w", ev.Type, ev.Timestamp, err)
	}
	if ev.Resources, err = parseIDs(set); err != nil {
		return nil, fmt.Errorf("event %q at %g: %w", ev.Type, ev.Timestamp, inField("resources", "%w", err))
	}
	return ev, nil
}

// parseIDs reads an interval set as Batsim writes them: "a-b" or "a"
// terms separated by single spaces ("0-1 3").
func parseIDs(s string) ([]int, error) {
	var ids []int
	for _, term := range strings.Split(s, " ") {
		lo, hi, isRange := strings.Cut(term, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return nil, fmt.Errorf("%q is not an interval set of machine ids (such as \"0-1 3\")", s)
		}
		if b-a >= maxHosts {
			return nil, fmt.Errorf("%q names more than %d machines", s, maxHosts)
		}
		for i := a; i <= b; i++ {
			ids = append(ids, i)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// newEventSubmitter returns the submitter of an events file (see
// onSubmitter): as a job submitter, it sleeps from one timestamp to the
// next, and makes the events occur.
func (e *Engine) newEventSubmitter(index int, l *EventList) *submitter {
	s := &submitter{dates: make([]float64, len(l.Events)), timer: timer{kind: timerEvents, index: index},
		handle: func(i int) { e.occurOrFail(l, l.Events[i]) }, bye: e.eventSubmitterDone}
	for i, ev := range l.Events {
		s.dates[i] = ev.Timestamp
	}
	return s
}

// checkEvents checks the machines the events name exist (Batsim aborts on
// one that does not when it occurs).
func (e *Engine) checkEvents(lists []*EventList) error {
	n := len(e.platform.Resources) + len(e.platform.Storage)
	for _, l := range lists {
		if l == nil {
			return errors.New("engine: an events list is nil")
		}
		for _, ev := range l.Events {
			if ev == nil {
				return fmt.Errorf("engine: events %q: an event is nil", l.Name)
			}
			if err := checkDate("timestamp", ev.Timestamp); err != nil {
				return fmt.Errorf("engine: events %q: event %q: %w", l.Name, ev.Type, err)
			}
			for _, id := range ev.Resources {
				if id < 0 || id >= n {
					return fmt.Errorf("engine: events %q: event %q at %g names machine %d, which does not exist (the platform has %d resources, 0-%d)",
						l.Name, ev.Type, ev.Timestamp, id, n, n-1)
				}
			}
		}
	}
	return nil
}

// eventSubmitterDone is an events submitter's goodbye reaching the server:
// no_more_external_event_to_occur after the last one's.
func (e *Engine) eventSubmitterDone() {
	e.eventSubmittersDone++
	if e.eventSubmittersDone == len(e.eventSubmitters) {
		e.noMoreEvents()
	}
}

func (e *Engine) occurOrFail(l *EventList, ev *ExternalEvent) {
	if err := e.occur(l, ev); err != nil {
		e.fail(err)
	}
}

// noMoreEvents is the last events submitter's goodbye reaching the server.
func (e *Engine) noMoreEvents() {
	e.outbox = append(e.outbox, Notification{Timestamp: e.now, Kind: NoMoreExternalEventToOccur})
}

// occur makes an external event occur, as Batsim's server does: the
// machines of a machine_unavailable event become unavailable (Batsim aborts
// if one is already), the jobs running on them go on; those of a
// machine_available event become computing if they run a job, idle
// otherwise (Batsim aborts if one is not unavailable); the decision process
// is notified either way, and of a generic event with its object.
func (e *Engine) occur(l *EventList, ev *ExternalEvent) error {
	switch ev.Type {
	case EventTypeMachineUnavailable:
		for _, id := range ev.Resources {
			if e.hosts[id].state == machineUnavailable {
				return fmt.Errorf("engine: t=%g: events %q: machine %d (%s) is made unavailable while it is unavailable already (real Batsim aborts)",
					e.now, l.Name, id, e.resourceName(id))
			}
			e.setState(id, machineUnavailable)
		}
		e.outbox = append(e.outbox, Notification{Timestamp: e.now, Kind: EventMachineUnavailable, Resources: ev.Resources})
	case EventTypeMachineAvailable:
		for _, id := range ev.Resources {
			if s := e.hosts[id].state; s != machineUnavailable {
				return fmt.Errorf("engine: t=%g: events %q: machine %d (%s) is made available while it is %s, not unavailable (real Batsim aborts)",
					e.now, l.Name, id, e.resourceName(id), s)
			}
			if len(e.hosts[id].jobs) > 0 {
				e.setState(id, machineComputing)
			} else {
				e.setState(id, machineIdle)
			}
		}
		e.outbox = append(e.outbox, Notification{Timestamp: e.now, Kind: EventMachineAvailable, Resources: ev.Resources})
	default:
		e.outbox = append(e.outbox, Notification{Timestamp: e.now, Kind: NotifyKind(ev.Type), Event: ev.Raw})
	}
	return nil
}

func (s machineState) String() string {
	switch s {
	case machineIdle:
		return "idle"
	case machineComputing:
		return "computing"
	case machineUnavailable:
		return "unavailable"
	}
	return "unknown"
}

// resourceName is the name of resource id, compute or storage.
func (e *Engine) resourceName(id int) string {
	if n := len(e.platform.Resources); id >= n {
		return e.platform.Storage[id-n].Name
	}
	return e.platform.Resources[id].Name
}
