package batsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/batkube/batkube/pkg/unstructjson"
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
	w.buf = unstructjson.AppendString(w.buf, k, false)
	w.buf = append(w.buf, ':')
}

func (w *writer) string(s string) {
	w.sep()
	w.buf = unstructjson.AppendString(w.buf, s, false)
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
	w.buf = unstructjson.AppendFloat(w.buf, f)
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
