package broker

import (
	"cmp"
	"encoding/csv"
	"io"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// A column of one of the run's CSV files: its name in the header and how
// a row's record gives its cell. Each file's columns are one table, so its
// header cannot drift from its rows.
type column[R any] struct {
	name string
	cell func(R) string
}

// columns are a CSV file's columns, in order.
type columns[R any] []column[R]

func (cs columns[R]) header() []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

func (cs columns[R]) row(r R) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.cell(r)
	}
	return out
}

// writeRecords writes a log kept as records by uid (the controllers',
// the workloads'): its header, then a row per record, in order.
func writeRecords[R any](out io.Writer, cols columns[*R], records map[types.UID]*R, order func(a, b *R) int) error {
	w := csv.NewWriter(out)
	_ = w.Write(cols.header())
	for _, r := range slices.SortedFunc(maps.Values(records), order) {
		_ = w.Write(cols.row(r))
	}
	w.Flush()
	return w.Error()
}

// byInstantThenName orders records by an instant, then by names.
func byInstantThenName(a, b float64, names ...[2]string) int {
	c := cmp.Compare(a, b)
	for _, n := range names {
		c = cmp.Or(c, cmp.Compare(n[0], n[1]))
	}
	return c
}
