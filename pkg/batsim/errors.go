package batsim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrPeerDisconnected is returned (wrapped) by Conn.Recv and Client.Request
// when every peer that had connected to the socket has gone: Batsim (or the
// decision process) closed its socket or died.
var ErrPeerDisconnected = errors.New("batsim: peer disconnected")

// ErrClosed is returned (wrapped) by the methods of a closed Conn or Client.
var ErrClosed = errors.New("batsim: connection closed")

// MessageError reports a message that does not follow the protocol, found
// while decoding or before encoding it.
type MessageError struct {
	// Event is the index of the offending event, or -1 when the problem is
	// the message's own ("now", "events", invalid JSON).
	Event int
	// Type is the type of the offending event, when known.
	Type EventType
	// Field is the path of the offending field, relative to the event's data
	// (or to the message when Event is -1), such as "job.res" or
	// "compute_resources[2].id"; empty when the problem is not one field's.
	Field string
	Err   error
}

func (e *MessageError) Error() string {
	var b strings.Builder
	b.WriteString("batsim: ")
	if e.Event >= 0 {
		b.WriteString("event ")
		b.WriteString(strconv.Itoa(e.Event))
		if e.Type != "" {
			b.WriteString(" (")
			b.WriteString(string(e.Type))
			b.WriteString(")")
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString("field ")
		b.WriteString(strconv.Quote(e.Field))
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *MessageError) Unwrap() error { return e.Err }

// messageError places err, which may be a *fieldError, in event i of type t.
func messageError(i int, t EventType, err error) *MessageError {
	if fe, ok := err.(*fieldError); ok {
		return &MessageError{Event: i, Type: t, Field: fe.path, Err: fe.err}
	}
	return &MessageError{Event: i, Type: t, Err: err}
}

// fieldError is an error inside a JSON value, located by its path.
type fieldError struct {
	path string
	err  error
}

func (e *fieldError) Error() string { return fmt.Sprintf("field %q: %v", e.path, e.err) }
func (e *fieldError) Unwrap() error { return e.err }

// inField locates err in the member name of an object (or, for names such as
// "[3]", in an element of an array). It returns nil for a nil err.
func inField(name string, err error) error {
	if err == nil {
		return nil
	}
	if fe, ok := err.(*fieldError); ok {
		sep := "."
		if strings.HasPrefix(fe.path, "[") {
			sep = ""
		}
		return &fieldError{path: name + sep + fe.path, err: fe.err}
	}
	return &fieldError{path: name, err: err}
}

// atIndex locates err in element i of an array.
func atIndex(i int, err error) error {
	return inField("["+strconv.Itoa(i)+"]", err)
}

// kindError is a JSON value of the wrong kind.
type kindError struct {
	want, got string
}

func (e *kindError) Error() string { return "expected " + e.want + ", got " + e.got }

var (
	errMissing    = errors.New("missing")
	errEmpty      = errors.New("empty")
	errUnexpected = errors.New("unexpected field")
	errShadow     = errors.New("extra field shadows a known one")
)
