package batsim

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzDecodeMessage checks that Decode never panics and that whatever it
// accepts encodes, and decodes again to the same value and the same bytes.
func FuzzDecodeMessage(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(ev(`{"timestamp":1,"type":"JOB_SUBMITTED","data":{"job_id":7,"job":{"id":7,"subtime":1,"res":2.0,"profile":"p","x":"\u00e9<>\ud800"}}}`)))
	f.Add([]byte(ev(`{"timestamp":1,"type":"EXECUTE_JOB","data":{"job_id":"w!1","alloc":"5 2-2 7 1-3","mapping":{"0":"0","01":1}}}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, from := range []Direction{FromBatsim, FromScheduler} {
			m, err := Decode(data, from)
			if err != nil {
				continue
			}
			out, err := Encode(m, from)
			if err != nil {
				t.Fatalf("Encode of a decoded message failed: %v\ninput %q", err, data)
			}
			again, err := Decode(out, from)
			if err != nil {
				t.Fatalf("Decode(Encode) failed: %v\nencoded %s", err, out)
			}
			if !reflect.DeepEqual(again, m) {
				t.Fatalf("Decode(Encode) differs:\ngot  %#v\nwant %#v", again, m)
			}
			out2, err := Encode(again, from)
			if err != nil || string(out2) != string(out) {
				t.Fatalf("Encode is not stable:\n%s\n%s (%v)", out, out2, err)
			}
		}
	})
}

// FuzzParseIntervalSet checks that whatever parses has a canonical form that
// parses back to the same set and prints the same.
func FuzzParseIntervalSet(f *testing.F) {
	for _, s := range []string{"", "0-3 7 9-10", "5 2-2 7 1-3", "1-2 1-3 5 7", "3-1", "-1", "a", "2147483647", "0-2147483648"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseIntervalSet(s)
		if err != nil {
			return
		}
		canonical := set.String()
		again, err := ParseIntervalSet(canonical)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", canonical, s, err)
		}
		if !again.Equal(set) || again.String() != canonical {
			t.Fatalf("round trip of %q: got %q, want %q", s, again, canonical)
		}
		if set.Len() <= 1<<12 {
			ids := set.IDs()
			if len(ids) != set.Len() {
				t.Fatalf("%q: %d ids, Len %d", s, len(ids), set.Len())
			}
			fromIDs, err := IntervalSetFromIDs(ids)
			if err != nil || !fromIDs.Equal(set) {
				t.Fatalf("IntervalSetFromIDs(IDs()) of %q = %q, %v", s, fromIDs, err)
			}
			for _, id := range ids {
				if !set.Contains(id) {
					t.Fatalf("%q does not contain its id %d", s, id)
				}
			}
		}
		if u := set.Union(set); !u.Equal(set) {
			t.Fatalf("%q ∪ itself = %q", s, u)
		}
		if d := set.Difference(set); !d.IsEmpty() {
			t.Fatalf("%q ∖ itself = %q", s, d)
		}
		if i := set.Intersection(set); !i.Equal(set) {
			t.Fatalf("%q ∩ itself = %q", s, i)
		}
	})
}
