package unstructjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// reference is encoding/json's Encoder, as the server used it.
func reference(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return buf.Bytes()
}

func check(t testing.TB, v any) {
	t.Helper()
	got, err := Append(nil, v)
	if err != nil {
		t.Fatalf("Append(%#v): %v", v, err)
	}
	if want := reference(t, v); !bytes.Equal(got, want) {
		t.Fatalf("Append(%#v):\n%s\nencoding/json:\n%s", v, got, want)
	}
}

// checkString: AppendString without HTML escaping is encoding/json's
// Encoder with SetEscapeHTML(false) (Batsim's messages, pkg/batsim).
func checkString(t testing.TB, s string) {
	t.Helper()
	var want bytes.Buffer
	e := json.NewEncoder(&want)
	e.SetEscapeHTML(false)
	if err := e.Encode(s); err != nil {
		t.Fatal(err)
	}
	if got := AppendString(nil, s, false); !bytes.Equal(append(got, '\n'), want.Bytes()) {
		t.Fatalf("AppendString(%q, false): %s, encoding/json: %s", s, got, want.Bytes())
	}
}

// The cases encoding/json treats apart: each escape, invalid UTF-8, the
// two line separators, floats on both sides of the exponent form's
// bounds, the integer extremes, empty and nil containers, nested ones.
func TestAppendEncodesAsEncodingJSON(t *testing.T) {
	var all strings.Builder
	for b := range 128 {
		all.WriteByte(byte(b))
	}
	strs := []string{"", "plain", all.String(), "a<b>&c", "\u2028\u2029", "é中😀", "bad\xffutf8\xc3", "\xe2\x80", `quote"back\slash`}
	floats := []float64{0, math.Copysign(0, -1), 0.5, -1.25, 1e-6, 9.99e-7, 1e-7, 1.5e-10, 1e20, 1e21, -1e21, 123456789012345678901234.0,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 3, 1e100, 1e-100}
	for _, s := range strs {
		check(t, s)
		check(t, map[string]any{s: s})
		checkString(t, s)
	}
	for _, f := range floats {
		check(t, f)
	}
	for _, v := range []any{nil, true, false, int64(math.MaxInt64), int64(math.MinInt64), 42, int32(-7),
		map[string]any{}, []any{}, map[string]any(nil), []any(nil),
		map[string]any{"b": []any{int64(1), "x", nil, map[string]any{"z": 1.5, "a": false}}, "a": map[string]any{}, "B": []any{[]any{}}}} {
		check(t, v)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		check(t, randomValue(r, 4))
		checkString(t, randomString(r))
	}
}

func randomValue(r *rand.Rand, depth int) any {
	kind := r.IntN(8)
	if depth == 0 {
		kind = r.IntN(5)
	}
	switch kind {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return int64(r.Uint64())
	case 3:
		return math.Float64frombits(r.Uint64()&^(0x7ff<<52) | uint64(r.IntN(0x7ff))<<52) // any finite float
	case 4:
		return randomString(r)
	case 5, 6:
		m := map[string]any{}
		for range r.IntN(6) {
			m[randomString(r)] = randomValue(r, depth-1)
		}
		return m
	default:
		l := []any{}
		for range r.IntN(6) {
			l = append(l, randomValue(r, depth-1))
		}
		return l
	}
}

func randomString(r *rand.Rand) string {
	b := make([]byte, r.IntN(12))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b)
}

// What it does not encode, it says so (and the caller falls back).
func TestAppendRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), map[string]any{"x": []string{"typed"}}, struct{}{}} {
		if _, err := Append(nil, v); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Append(%#v): %v, want ErrUnsupported", v, err)
		}
	}
}

func FuzzAppendEncodesAsEncodingJSON(f *testing.F) {
	f.Add("a<b>\u2028\xff", 1e21, int64(-3))
	f.Fuzz(func(t *testing.T, s string, x float64, n int64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		check(t, map[string]any{s: []any{s, x, n}, "k": map[string]any{s: x}})
		checkString(t, s)
	})
}

func BenchmarkAppend(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	v := map[string]any{}
	for i := range 40 {
		v[strings.Repeat("k", i%7)+string(rune('a'+i%26))] = randomValue(r, 3)
	}
	b.Run("unstructjson", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf, _ = Append(buf[:0], v)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			_ = json.NewEncoder(&buf).Encode(v)
		}
	})
}
