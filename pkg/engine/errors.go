package engine

import (
	"errors"
	"fmt"
	"strconv"
)

// DecisionError is a decision the simulation cannot apply (real Batsim
// aborts on it). It names the decision as the event of the reply it comes
// from, and the field of that event's data at fault. The simulation cannot
// go on after it.
type DecisionError struct {
	// Time is the simulated time at which the decision was to be applied.
	Time float64
	// Index is the decision's position in the reply (the index of the
	// protocol event it comes from).
	Index int
	// Type is the decision's protocol type, e.g. "EXECUTE_JOB".
	Type string
	// Field is the field of the event's data at fault, such as "alloc",
	// "job_ids[1]" or "job.subtime", or "" when the problem is not one
	// field's.
	Field string
	Err   error
}

func (e *DecisionError) Error() string {
	s := "engine: t=" + strconv.FormatFloat(e.Time, 'g', -1, 64) + ": event " + strconv.Itoa(e.Index)
	if e.Type != "" {
		s += " (" + e.Type + ")"
	}
	if e.Field != "" {
		s += ": field " + strconv.Quote(e.Field)
	}
	return s + ": " + e.Err.Error()
}

func (e *DecisionError) Unwrap() error { return e.Err }

// fieldError is an error about one field of a decision (or of a job or
// profile object): the path of the field, and what is wrong with it. Its
// message is err's alone.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// inField locates a new error in a field.
func inField(field, format string, args ...any) error {
	return &fieldError{field: field, err: fmt.Errorf(format, args...)}
}

// within locates err inside the field prefix: a fieldError "subtime" in it
// becomes "job.subtime"; an error without field becomes prefix's.
func within(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		return &fieldError{field: prefix + "." + fe.field, err: err}
	}
	return &fieldError{field: prefix, err: err}
}

// decisionError names the decision at index i behind err.
func decisionError(now float64, i int, d Decision, err error) *DecisionError {
	de := &DecisionError{Time: now, Index: i, Err: err}
	if d != nil {
		de.Type = d.Type()
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		de.Field = fe.field
	}
	return de
}
