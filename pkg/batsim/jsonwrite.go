package batsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// writer appends compact JSON to a buffer. Separators are implicit: a value
// or key written after another in the same object or array gets its comma.
// The first error (a non-finite float, invalid raw JSON) sticks.
type writer struct {
	buf []byte
	err error
}

func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// sep writes the comma before a new member or element, if one is needed.
func (w *writer) sep() {
	if n := len(w.buf); n > 0 {
		switch w.buf[n-1] {
		case '{', '[', ':':
		default:
			w.buf = append(w.buf, ',')
		}
	}
}

func (w *writer) open(c byte) {
	w.sep()
	w.buf = append(w.buf, c)
}

func (w *writer) close(c byte) { w.buf = append(w.buf, c) }

func (w *writer) key(k string) {
	w.sep()
	w.buf = appendString(w.buf, k)
	w.buf = append(w.buf, ':')
}

func (w *writer) string(s string) {
	w.sep()
	w.buf = appendString(w.buf, s)
}

func (w *writer) int(n int) {
	w.sep()
	w.buf = strconv.AppendInt(w.buf, int64(n), 10)
}

func (w *writer) bool(b bool) {
	w.sep()
	w.buf = strconv.AppendBool(w.buf, b)
}

func (w *writer) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.fail(fmt.Errorf("%v cannot be written in JSON", f))
		f = 0
	}
	w.sep()
	w.buf = appendFloat(w.buf, f)
}

// raw writes a JSON value as it is, compacted.
func (w *writer) raw(v json.RawMessage) {
	w.sep()
	b := bytes.NewBuffer(w.buf)
	if err := json.Compact(b, v); err != nil {
		w.fail(fmt.Errorf("invalid raw JSON value: %w", err))
		b.WriteString("null")
	}
	w.buf = b.Bytes()
}

func (w *writer) stringField(k, v string)          { w.key(k); w.string(v) }
func (w *writer) intField(k string, v int)         { w.key(k); w.int(v) }
func (w *writer) boolField(k string, v bool)       { w.key(k); w.bool(v) }
func (w *writer) floatField(k string, v float64)   { w.key(k); w.float(v) }
func (w *writer) setField(k string, v IntervalSet) { w.key(k); w.string(v.String()) }

// rawFields writes the members of m in key order.
func (w *writer) rawFields(m map[string]json.RawMessage) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.key(k)
		w.raw(m[k])
	}
}

// stringMap writes an object of strings in key order ({} for nil).
func (w *writer) stringMap(m map[string]string) {
	w.open('{')
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.stringField(k, m[k])
	}
	w.close('}')
}

func (w *writer) jobIDs(ids []JobID) {
	w.open('[')
	for _, id := range ids {
		w.string(string(id))
	}
	w.close(']')
}

// appendFloat formats f as encoding/json does: the shortest representation
// that parses back to f, with an exponent only for very small or large values.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 becomes 1e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString quotes s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does; HTML characters are not escaped.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
