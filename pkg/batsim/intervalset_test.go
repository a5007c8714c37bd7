package batsim

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

func TestParseIntervalSet(t *testing.T) {
	tests := []struct {
		in    string
		want  string // canonical form
		ids   []int
		count int
	}{
		{"", "", nil, 0},
		{"   ", "", nil, 0},
		{"0", "0", []int{0}, 1},
		{"0-3 7 9-10", "0-3 7 9-10", []int{0, 1, 2, 3, 7, 9, 10}, 7},
		{"1-3 5 7", "1-3 5 7", []int{1, 2, 3, 5, 7}, 5},
		{"1-2 3 5 7", "1-3 5 7", []int{1, 2, 3, 5, 7}, 5},
		{"1 2 3 5 7", "1-3 5 7", []int{1, 2, 3, 5, 7}, 5},
		{"1-2 1-3 5 7", "1-3 5 7", []int{1, 2, 3, 5, 7}, 5},
		{"5 2-2 7 1-3", "1-3 5 7", []int{1, 2, 3, 5, 7}, 5},
		{"4-4", "4", []int{4}, 1},
		{"007 8", "7-8", []int{7, 8}, 2},
		{" 3\t4\n", "3-4", []int{3, 4}, 2},
		{"0-2147483647", "0-2147483647", nil, 2147483648},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			s, err := ParseIntervalSet(tc.in)
			if err != nil {
				t.Fatalf("ParseIntervalSet(%q): %v", tc.in, err)
			}
			if got := s.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if got := s.Len(); got != tc.count {
				t.Errorf("Len() = %d, want %d", got, tc.count)
			}
			if got := s.IsEmpty(); got != (tc.count == 0) {
				t.Errorf("IsEmpty() = %v, want %v", got, tc.count == 0)
			}
			if tc.ids != nil {
				if got := s.IDs(); !slices.Equal(got, tc.ids) {
					t.Errorf("IDs() = %v, want %v", got, tc.ids)
				}
				back, err := IntervalSetFromIDs(tc.ids)
				if err != nil || !back.Equal(s) {
					t.Errorf("IntervalSetFromIDs(%v) = %v, %v; want %v", tc.ids, back, err, s)
				}
			}
		})
	}
}

func TestParseIntervalSetErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"3-1", `batsim: interval set "3-1": decreasing range "3-1"`},
		{"a", `batsim: interval set "a": "a" is not an id or a range of ids`},
		{"1 2,3", `batsim: interval set "1 2,3": "2,3" is not an id or a range of ids`},
		{"+1", `batsim: interval set "+1": "+1" is not an id or a range of ids`},
		{"1.5", `batsim: interval set "1.5": "1.5" is not an id or a range of ids`},
		{"-1", `batsim: interval set "-1": negative or missing id in "-1"`},
		{"2--1", `batsim: interval set "2--1": negative or missing id in "2--1"`},
		{"1-", `batsim: interval set "1-": negative or missing id in "1-"`},
		{"1-2-3", `batsim: interval set "1-2-3": "1-2-3" is not an id or a range of ids`},
		{"2147483648", `batsim: interval set "2147483648": id 2147483648 in "2147483648" is out of range (max 2147483647)`},
		{"0-99999999999999999999999", `batsim: interval set "0-99999999999999999999999": id 99999999999999999999999 in "0-99999999999999999999999" is out of range (max 2147483647)`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseIntervalSet(tc.in)
			if got := errString(err); got != tc.want {
				t.Errorf("ParseIntervalSet(%q) error:\ngot  %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestIntervalSetConstructorsErrors(t *testing.T) {
	if _, err := IntervalSetFromIDs([]int{1, -1}); errString(err) != "batsim: resource id -1 out of range [0, 2147483647]" {
		t.Errorf("IntervalSetFromIDs(-1) error = %v", err)
	}
	if _, err := NewIntervalSet(Interval{3, 1}); errString(err) != "batsim: invalid interval [3, 1]" {
		t.Errorf("NewIntervalSet([3,1]) error = %v", err)
	}
	s, err := NewIntervalSet(Interval{5, 6}, Interval{0, 2}, Interval{3, 3})
	if err != nil || s.String() != "0-3 5-6" {
		t.Errorf("NewIntervalSet = %v, %v; want 0-3 5-6", s, err)
	}
	if got, want := s.Intervals(), []Interval{{0, 3}, {5, 6}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Intervals() = %v, want %v", got, want)
	}
}

func TestIntervalSetOperations(t *testing.T) {
	tests := []struct {
		a, b                      string
		union, inter, diff, rdiff string
	}{
		{"", "", "", "", "", ""},
		{"0-3", "", "0-3", "", "0-3", ""},
		{"0-3", "2-5", "0-5", "2-3", "0-1", "4-5"},
		{"0-3", "4-5", "0-5", "", "0-3", "4-5"},
		{"0-9", "2 4-5 9", "0-9", "2 4-5 9", "0-1 3 6-8", ""},
		{"0-1 5-6 10-12", "1-5 11", "0-6 10-12", "1 5 11", "0 6 10 12", "2-4"},
		{"3", "3", "3", "3", "", ""},
		{"0-2147483647", "5-2147483646", "0-2147483647", "5-2147483646", "0-4 2147483647", ""},
	}
	for _, tc := range tests {
		t.Run(tc.a+"|"+tc.b, func(t *testing.T) {
			a, b := set(t, tc.a), set(t, tc.b)
			for _, c := range []struct {
				op        string
				got, want IntervalSet
			}{
				{"a∪b", a.Union(b), set(t, tc.union)},
				{"b∪a", b.Union(a), set(t, tc.union)},
				{"a∩b", a.Intersection(b), set(t, tc.inter)},
				{"b∩a", b.Intersection(a), set(t, tc.inter)},
				{"a∖b", a.Difference(b), set(t, tc.diff)},
				{"b∖a", b.Difference(a), set(t, tc.rdiff)},
			} {
				if !c.got.Equal(c.want) {
					t.Errorf("%s = %q, want %q", c.op, c.got, c.want)
				}
			}
			if a.String() != tc.a || b.String() != tc.b {
				t.Errorf("operands changed to %q and %q", a, b)
			}
		})
	}
}

func TestIntervalSetContainsAndFirst(t *testing.T) {
	s := set(t, "2-4 8 10-11")
	for id, want := range map[int]bool{-1: false, 0: false, 2: true, 4: true, 5: false, 8: true, 9: false, 11: true, 12: false} {
		if got := s.Contains(id); got != want {
			t.Errorf("Contains(%d) = %v, want %v", id, got, want)
		}
	}
	for n, want := range map[int]string{-1: "", 0: "", 1: "2", 3: "2-4", 4: "2-4 8", 5: "2-4 8 10", 6: "2-4 8 10-11", 100: "2-4 8 10-11"} {
		if got := s.First(n).String(); got != want {
			t.Errorf("First(%d) = %q, want %q", n, got, want)
		}
	}
	var ids []int
	for id := range s.All() {
		if id > 8 {
			break
		}
		ids = append(ids, id)
	}
	if want := []int{2, 3, 4, 8}; !slices.Equal(ids, want) {
		t.Errorf("All() with break = %v, want %v", ids, want)
	}
}

func TestIntervalSetJSON(t *testing.T) {
	var v struct {
		Alloc IntervalSet `json:"alloc"`
	}
	if err := json.Unmarshal([]byte(`{"alloc":"4 0-2 3"}`), &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), `{"alloc":"0-4"}`; got != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
	err = json.Unmarshal([]byte(`{"alloc":"3-1"}`), &v)
	if got, want := errString(err), `batsim: interval set "3-1": decreasing range "3-1"`; got != want {
		t.Errorf("Unmarshal error = %s, want %s", got, want)
	}
}
