package batsim

import (
	"encoding/json"
	"errors"
)

// A small scanner that splits JSON objects and arrays into their members
// without decoding them: each level of a message is split once and its
// members are handed to typed decoders. Decode checks the whole message with
// json.Valid first; the scanner still never reads out of bounds, and reports
// errInvalidJSON if the input turns out not to be JSON.

var errInvalidJSON = errors.New("invalid JSON")

// member is one member of a JSON object.
type member struct {
	key   string
	value json.RawMessage
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// valueEnd returns the index just past the JSON value starting at b[i].
func valueEnd(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errInvalidJSON
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, err := stringEnd(b, i)
				if err != nil {
					return 0, err
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errInvalidJSON
	default: // number, true, false, null
		start := i
		for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
			i++
		}
		if i == start {
			return 0, errInvalidJSON
		}
		return i, nil
	}
}

// stringEnd returns the index just past the string starting at b[i] == '"'.
func stringEnd(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errInvalidJSON
}

// splitObject returns the members of an object in document order. A key
// that appears twice is an error: JSON libraries disagree on which one wins
// (Batsim's RapidJSON takes the first, encoding/json the last).
func splitObject(raw []byte) ([]member, error) {
	if err := expect(raw, "object"); err != nil {
		return nil, err
	}
	i := skipSpace(raw, 0) + 1
	members := make([]member, 0, 8)
	var seen map[string]bool // the keys, once there are many
	for {
		i = skipSpace(raw, i)
		if i < len(raw) && raw[i] == '}' && len(members) == 0 {
			return nil, nil // an empty object
		}
		if i >= len(raw) || raw[i] != '"' {
			return nil, errInvalidJSON
		}
		end, err := stringEnd(raw, i)
		if err != nil {
			return nil, err
		}
		key, err := decodeString(raw[i:end])
		if err != nil {
			return nil, err
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, errInvalidJSON
		}
		start := skipSpace(raw, i+1)
		if end, err = valueEnd(raw, start); err != nil {
			return nil, err
		}
		if duplicate(&seen, members, key) {
			return nil, inField(key, errors.New("duplicate member"))
		}
		members = append(members, member{key: key, value: raw[start:end]})
		var last bool
		if i, last, err = afterValue(raw, end, '}'); err != nil {
			return nil, err
		}
		if last {
			return members, nil
		}
	}
}

// duplicate reports whether key is among members. Objects of the protocol
// are small, except the maps of SIMULATION_BEGINS and JOB_KILLED: past a few
// members, the keys go into the set *seen.
func duplicate(seen *map[string]bool, members []member, key string) bool {
	const linear = 16
	if *seen == nil && len(members) < linear {
		for _, m := range members {
			if m.key == key {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, 2*len(members))
		for _, m := range members {
			(*seen)[m.key] = true
		}
	}
	if (*seen)[key] {
		return true
	}
	(*seen)[key] = true
	return false
}

// splitArray returns the elements of an array.
func splitArray(raw []byte) ([]json.RawMessage, error) {
	if err := expect(raw, "array"); err != nil {
		return nil, err
	}
	i := skipSpace(raw, 0) + 1
	var elems []json.RawMessage
	for {
		i = skipSpace(raw, i)
		if i < len(raw) && raw[i] == ']' && len(elems) == 0 {
			return nil, nil
		}
		end, err := valueEnd(raw, i)
		if err != nil {
			return nil, err
		}
		elems = append(elems, raw[i:end])
		var last bool
		if i, last, err = afterValue(raw, end, ']'); err != nil {
			return nil, err
		}
		if last {
			return elems, nil
		}
	}
}

// afterValue reads what follows a member or element that ends at raw[end]: a
// comma, after which the next one starts at i, or the closing byte of the
// object or array, when last is true.
func afterValue(raw []byte, end int, closing byte) (i int, last bool, err error) {
	i = skipSpace(raw, end)
	switch {
	case i >= len(raw):
		return 0, false, errInvalidJSON
	case raw[i] == ',':
		return i + 1, false, nil
	case raw[i] == closing:
		return i, true, nil
	}
	return 0, false, errInvalidJSON
}
