package batsim

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxResourceID is the largest resource id an IntervalSet holds (Batsim
// numbers its machines with C ints).
const MaxResourceID = math.MaxInt32

// Interval is the closed range of resource ids [First, Last].
type Interval struct {
	First, Last int
}

// IntervalSet is a set of resource ids, written in the protocol as
// space-separated ids and closed ranges: "0-3 7 9-10" = {0,1,2,3,7,9,10}.
//
// The zero value is the empty set. An IntervalSet is an immutable value:
// operations return new sets and never modify their operands.
type IntervalSet struct {
	ivs []Interval // sorted, disjoint and non-adjacent
}

// ParseIntervalSet parses any representation Batsim accepts: ids and ranges
// in any order, overlapping or not, separated by spaces. The empty string is
// the empty set.
func ParseIntervalSet(s string) (IntervalSet, error) {
	set, err := parseIntervalSet(s)
	if err != nil {
		return IntervalSet{}, fmt.Errorf("batsim: %w", err)
	}
	return set, nil
}

// parseIntervalSet is ParseIntervalSet without the package prefix on errors,
// for callers that add their own context.
func parseIntervalSet(s string) (IntervalSet, error) {
	var ivs []Interval
	for tok := range strings.FieldsSeq(s) {
		iv, err := parseInterval(tok)
		if err != nil {
			return IntervalSet{}, fmt.Errorf("interval set %q: %w", s, err)
		}
		ivs = append(ivs, iv)
	}
	return normalize(ivs), nil
}

func parseInterval(tok string) (Interval, error) {
	lo, hi, isRange := strings.Cut(tok, "-")
	if lo == "" && isRange {
		return Interval{}, fmt.Errorf("negative or missing id in %q", tok)
	}
	first, err := parseID(lo, tok)
	if err != nil {
		return Interval{}, err
	}
	if !isRange {
		return Interval{first, first}, nil
	}
	if hi == "" || hi[0] == '-' {
		return Interval{}, fmt.Errorf("negative or missing id in %q", tok)
	}
	last, err := parseID(hi, tok)
	if err != nil {
		return Interval{}, err
	}
	if last < first {
		return Interval{}, fmt.Errorf("decreasing range %q", tok)
	}
	return Interval{first, last}, nil
}

func parseID(s, tok string) (int, error) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not an id or a range of ids", tok)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxResourceID {
		return 0, fmt.Errorf("id %s in %q is out of range (max %d)", s, tok, MaxResourceID)
	}
	return n, nil
}

// IntervalSetFromIDs returns the set of the given ids, in any order and with
// duplicates allowed. Every id must be in [0, MaxResourceID].
func IntervalSetFromIDs(ids []int) (IntervalSet, error) {
	ivs := make([]Interval, 0, len(ids))
	for _, id := range ids {
		if id < 0 || id > MaxResourceID {
			return IntervalSet{}, fmt.Errorf("batsim: resource id %d out of range [0, %d]", id, MaxResourceID)
		}
		ivs = append(ivs, Interval{id, id})
	}
	return normalize(ivs), nil
}

// NewIntervalSet returns the union of the given intervals. Each must satisfy
// 0 <= First <= Last <= MaxResourceID.
func NewIntervalSet(ivs ...Interval) (IntervalSet, error) {
	for _, iv := range ivs {
		if iv.First < 0 || iv.Last > MaxResourceID || iv.Last < iv.First {
			return IntervalSet{}, fmt.Errorf("batsim: invalid interval [%d, %d]", iv.First, iv.Last)
		}
	}
	return normalize(slices.Clone(ivs)), nil
}

// normalize sorts and merges valid intervals in place and returns them as a
// set.
func normalize(ivs []Interval) IntervalSet {
	if len(ivs) == 0 {
		return IntervalSet{}
	}
	slices.SortFunc(ivs, func(a, b Interval) int { return a.First - b.First })
	out := ivs[:1]
	for _, iv := range ivs[1:] {
		last := &out[len(out)-1]
		if iv.First-1 <= last.Last {
			last.Last = max(last.Last, iv.Last)
			continue
		}
		out = append(out, iv)
	}
	return IntervalSet{ivs: slices.Clip(out)}
}

// String returns the canonical representation: sorted, maximal ranges, single
// ids written alone ("0-3 7 9-10"); "" for the empty set.
func (s IntervalSet) String() string {
	b := make([]byte, 0, len(s.ivs)*8)
	for i, iv := range s.ivs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(iv.First), 10)
		if iv.Last != iv.First {
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(iv.Last), 10)
		}
	}
	return string(b)
}

// MarshalText implements encoding.TextMarshaler (JSON: the canonical string).
func (s IntervalSet) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *IntervalSet) UnmarshalText(text []byte) error {
	set, err := ParseIntervalSet(string(text))
	if err != nil {
		return err
	}
	*s = set
	return nil
}

// Intervals returns the maximal intervals of the set, in ascending order.
func (s IntervalSet) Intervals() []Interval { return slices.Clone(s.ivs) }

// Len returns the number of ids in the set.
func (s IntervalSet) Len() int {
	n := 0
	for _, iv := range s.ivs {
		n += iv.Last - iv.First + 1
	}
	return n
}

// IsEmpty reports whether the set has no id.
func (s IntervalSet) IsEmpty() bool { return len(s.ivs) == 0 }

// Equal reports whether both sets hold the same ids.
func (s IntervalSet) Equal(o IntervalSet) bool { return slices.Equal(s.ivs, o.ivs) }

// Contains reports whether id is in the set.
func (s IntervalSet) Contains(id int) bool {
	_, found := slices.BinarySearchFunc(s.ivs, id, func(iv Interval, id int) int {
		switch {
		case iv.Last < id:
			return -1
		case iv.First > id:
			return 1
		}
		return 0
	})
	return found
}

// All yields the ids of the set in ascending order.
func (s IntervalSet) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for _, iv := range s.ivs {
			for id := iv.First; id <= iv.Last; id++ {
				if !yield(id) {
					return
				}
			}
		}
	}
}

// IDs returns the ids of the set in ascending order.
func (s IntervalSet) IDs() []int {
	ids := make([]int, 0, s.Len())
	for id := range s.All() {
		ids = append(ids, id)
	}
	return ids
}

// First returns the set of the n smallest ids (the whole set if it has fewer).
func (s IntervalSet) First(n int) IntervalSet {
	var out []Interval
	for _, iv := range s.ivs {
		if n <= 0 {
			break
		}
		if size := iv.Last - iv.First + 1; size > n {
			iv.Last = iv.First + n - 1
		}
		out = append(out, iv)
		n -= iv.Last - iv.First + 1
	}
	return IntervalSet{ivs: out}
}

// Union returns the ids in s or in o.
func (s IntervalSet) Union(o IntervalSet) IntervalSet {
	merged := make([]Interval, 0, len(s.ivs)+len(o.ivs))
	merged = append(merged, s.ivs...)
	merged = append(merged, o.ivs...)
	return normalize(merged)
}

// Intersection returns the ids in both s and o.
func (s IntervalSet) Intersection(o IntervalSet) IntervalSet {
	var out []Interval
	for i, j := 0, 0; i < len(s.ivs) && j < len(o.ivs); {
		a, b := s.ivs[i], o.ivs[j]
		if lo, hi := max(a.First, b.First), min(a.Last, b.Last); lo <= hi {
			out = append(out, Interval{lo, hi})
		}
		if a.Last < b.Last {
			i++
		} else {
			j++
		}
	}
	return IntervalSet{ivs: out}
}

// Difference returns the ids in s that are not in o.
func (s IntervalSet) Difference(o IntervalSet) IntervalSet {
	var out []Interval
	j := 0
	for _, a := range s.ivs {
		for j < len(o.ivs) && o.ivs[j].Last < a.First {
			j++
		}
		cur := a.First
		for k := j; k < len(o.ivs) && o.ivs[k].First <= a.Last; k++ {
			if b := o.ivs[k]; b.First > cur {
				out = append(out, Interval{cur, b.First - 1})
			}
			cur = max(cur, o.ivs[k].Last+1)
		}
		if cur <= a.Last {
			out = append(out, Interval{cur, a.Last})
		}
	}
	return IntervalSet{ivs: out}
}
