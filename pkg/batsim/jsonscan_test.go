package batsim

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestSplitObject(t *testing.T) {
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf(`"k%d":%d`, i, i))
	}
	tests := []struct {
		in   string
		keys string // the keys, comma-separated
		err  string
	}{
		{`{}`, "", ""},
		{` { "a" : 1 , "b":[1,{"c":"}"}] ,"c\"d":"x\\"} `, `a,b,c"d`, ""},
		{"{" + strings.Join(many, ",") + "}", "", ""},
		{"{" + strings.Join(many, ",") + `,"k3":0}`, "", `field "k3": duplicate member`},
		{`{"a":1,"a":2}`, "", `field "a": duplicate member`},
		{`[]`, "", "expected object, got array"},
		// Not JSON: Decode never passes such input, but the scanner must not
		// panic on it.
		{`{`, "", "invalid JSON"},
		{`{"a`, "", "invalid JSON"},
		{`{"a"`, "", "invalid JSON"},
		{`{"a":`, "", "invalid JSON"},
		{`{"a":1`, "", "invalid JSON"},
		{`{"a":1 2}`, "", "invalid JSON"},
		{`{"a":"\`, "", "invalid JSON"},
		{`{"a":[1,2}`, "", "invalid JSON"},
		{`{1:2}`, "", "invalid JSON"},
		{`{"a":,}`, "", "invalid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			members, err := splitObject([]byte(tc.in))
			if got := errString(err); (tc.err == "" && err != nil) || (tc.err != "" && got != tc.err) {
				t.Fatalf("splitObject error = %s, want %q", got, tc.err)
			}
			if tc.err != "" || tc.keys == "" {
				return
			}
			var keys []string
			for _, m := range members {
				keys = append(keys, m.key)
			}
			if got := strings.Join(keys, ","); got != tc.keys {
				t.Errorf("keys = %s, want %s", got, tc.keys)
			}
		})
	}
}

func TestSplitArray(t *testing.T) {
	tests := []struct {
		in    string
		elems string // the elements, joined with |
		err   error
	}{
		{`[]`, "", nil},
		{` [ 1 , "a,]" , {"b":[2]} , null ] `, `1|"a,]"|{"b":[2]}|null`, nil},
		{`[1,`, "", errInvalidJSON},
		{`[1 2]`, "", errInvalidJSON},
		{`[,]`, "", errInvalidJSON},
		{`["a]`, "", errInvalidJSON},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			elems, err := splitArray([]byte(tc.in))
			if !errors.Is(err, tc.err) {
				t.Fatalf("splitArray error = %v, want %v", err, tc.err)
			}
			var got []string
			for _, e := range elems {
				got = append(got, string(e))
			}
			if s := strings.Join(got, "|"); s != tc.elems {
				t.Errorf("elements = %s, want %s", s, tc.elems)
			}
		})
	}
}
