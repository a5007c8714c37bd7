package batsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// The decoding side of the codec: small typed decoders of json.RawMessage
// values, each returning errors that name what was expected and what was
// found, and a field reader that locates those errors by field path. Their
// input has been validated as JSON (by Decode or encoding/json) beforehand.

// decoder decodes one JSON value.
type decoder[T any] func(json.RawMessage) (T, error)

// kindOf names the kind of a JSON value for error messages.
func kindOf(raw []byte) string {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return "object"
		case '[':
			return "array"
		case '"':
			return "string"
		case 't', 'f':
			return "boolean"
		case 'n':
			return "null"
		default:
			return "number"
		}
	}
	return "nothing"
}

func isNull(raw []byte) bool { return kindOf(raw) == "null" }

func expect(raw []byte, want string) error {
	if got := kindOf(raw); got != want {
		return &kindError{want: want, got: got}
	}
	return nil
}

func decodeString(raw json.RawMessage) (string, error) {
	if err := expect(raw, "string"); err != nil {
		return "", err
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 {
		return "", errInvalidJSON
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

func decodeFloat(raw json.RawMessage) (float64, error) {
	if err := expect(raw, "number"); err != nil {
		return 0, err
	}
	s := string(bytes.TrimSpace(raw))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, fmt.Errorf("bad number %s: %w", s, err)
	}
	if math.IsInf(f, 0) {
		return 0, fmt.Errorf("number %s out of range", s)
	}
	return f, nil
}

// decodeInt accepts integers written as floats ("2.0", "1e3") as well.
func decodeInt(raw json.RawMessage) (int, error) {
	if err := expect(raw, "number"); err != nil {
		return 0, &kindError{want: "integer", got: kindOf(raw)}
	}
	s := string(bytes.TrimSpace(raw))
	if n, err := strconv.Atoi(s); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !math.IsInf(f, 0):
		return 0, fmt.Errorf("bad number %s: %w", s, err)
	case f != math.Trunc(f):
		return 0, &kindError{want: "integer", got: "number " + s}
	case f < math.MinInt64 || f >= math.MaxInt64:
		return 0, fmt.Errorf("number %s out of range", s)
	}
	return int(f), nil
}

func decodeBool(raw json.RawMessage) (bool, error) {
	if err := expect(raw, "boolean"); err != nil {
		return false, err
	}
	return bytes.Equal(bytes.TrimSpace(raw), []byte("true")), nil
}

// decodeJobID accepts strings and, as workload files may write them, integers.
func decodeJobID(raw json.RawMessage) (JobID, error) {
	if kindOf(raw) == "number" {
		n, err := decodeInt(raw)
		if err != nil {
			return "", err
		}
		return JobID(strconv.Itoa(n)), nil
	}
	s, err := decodeString(raw)
	return JobID(s), err
}

func decodeIntervalSet(raw json.RawMessage) (IntervalSet, error) {
	s, err := decodeString(raw)
	if err != nil {
		return IntervalSet{}, err
	}
	return parseIntervalSet(s)
}

// decodeRaw keeps a value as compact JSON, so that equal values decode to
// equal bytes whatever their spacing.
func decodeRaw(raw json.RawMessage) (json.RawMessage, error) {
	b := bytes.NewBuffer(make([]byte, 0, len(raw)))
	if err := json.Compact(b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decodeEmptyObject accepts any object and returns nothing: for data that
// carry no information ({}).
func decodeEmptyObject(raw json.RawMessage) (struct{}, error) {
	return struct{}{}, expect(raw, "object")
}

// listOf decodes an array; an empty array decodes to nil.
func listOf[T any](dec decoder[T]) decoder[[]T] {
	return func(raw json.RawMessage) ([]T, error) {
		elems, err := splitArray(raw)
		if err != nil || len(elems) == 0 {
			return nil, err
		}
		out := make([]T, len(elems))
		for i, e := range elems {
			v, err := dec(e)
			if err != nil {
				return nil, atIndex(i, err)
			}
			out[i] = v
		}
		return out, nil
	}
}

// mapOf decodes an object with values of one type; an empty object decodes
// to nil.
func mapOf[K ~string, V any](dec decoder[V]) decoder[map[K]V] {
	return func(raw json.RawMessage) (map[K]V, error) {
		members, err := splitObject(raw)
		if err != nil || len(members) == 0 {
			return nil, err
		}
		out := make(map[K]V, len(members))
		for _, m := range members {
			v, err := dec(m.value)
			if err != nil {
				return nil, inField(m.key, err)
			}
			out[K(m.key)] = v
		}
		return out, nil
	}
}

// fields reads the members of an object one by one. The first error sticks:
// later reads return zero values, so a decoder can read all its fields in a
// composite literal and check f.err once.
type fields struct {
	members []member
	used    []bool
	err     error
}

func objectFields(raw json.RawMessage) (*fields, error) {
	members, err := splitObject(raw)
	if err != nil {
		return nil, err
	}
	return &fields{members: members, used: make([]bool, len(members))}, nil
}

// decodeObject decodes an object whose members readMembers reads from f; it
// returns the first error of either.
func decodeObject[T any](raw json.RawMessage, readMembers func(f *fields) T) (T, error) {
	var zero T
	f, err := objectFields(raw)
	if err != nil {
		return zero, err
	}
	v := readMembers(f)
	if f.err != nil {
		return zero, f.err
	}
	return v, nil
}

// lookup returns the member name and marks it read.
func (f *fields) lookup(name string) (json.RawMessage, bool) {
	for i, m := range f.members {
		if m.key == name {
			f.used[i] = true
			return m.value, true
		}
	}
	return nil, false
}

func read[T any](f *fields, name string, dec decoder[T], required bool) (T, bool) {
	var zero T
	if f.err != nil {
		return zero, false
	}
	raw, ok := f.lookup(name)
	if !ok || (!required && isNull(raw)) {
		if required {
			f.err = inField(name, errMissing)
		}
		return zero, false
	}
	v, err := dec(raw)
	if err != nil {
		f.err = inField(name, err)
		return zero, false
	}
	return v, true
}

// req reads a member that must be present.
func req[T any](f *fields, name string, dec decoder[T]) T {
	v, _ := read(f, name, dec, true)
	return v
}

// opt reads a member that may be absent or null (then it is the zero value).
func opt[T any](f *fields, name string, dec decoder[T]) T {
	v, _ := read(f, name, dec, false)
	return v
}

// has reports whether a member is present and not null, without reading it.
func (f *fields) has(name string) bool {
	for _, m := range f.members {
		if m.key == name {
			return !isNull(m.value)
		}
	}
	return false
}

// unread returns the members not read so far, in document order.
func (f *fields) unread() []member {
	var out []member
	for i, m := range f.members {
		if !f.used[i] {
			out = append(out, m)
		}
	}
	return out
}

// rest returns the members not read so far, compacted; nil if none.
func (f *fields) rest() map[string]json.RawMessage {
	if f.err != nil {
		return nil
	}
	var out map[string]json.RawMessage
	for _, m := range f.unread() {
		v, err := decodeRaw(m.value)
		if err != nil {
			f.err = inField(m.key, err)
			return nil
		}
		if out == nil {
			out = make(map[string]json.RawMessage)
		}
		out[m.key] = v
	}
	return out
}

// noRest fails on the first member not read so far.
func (f *fields) noRest() {
	if f.err != nil {
		return
	}
	if unread := f.unread(); len(unread) > 0 {
		f.err = inField(unread[0].key, errUnexpected)
	}
}
