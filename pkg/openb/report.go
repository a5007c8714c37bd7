package openb

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// Write prints the report for a person: what was kept, the creation times
// and the shift, the pods by qos, the claim templates, then one line per
// drop reason.
func (r Report) Write(out io.Writer) error {
	bw := bufio.NewWriter(out)
	fmt.Fprintf(bw, "read %d pods, kept %d, dropped %d\n", r.Read, r.Kept, r.DroppedTotal())
	if r.Kept > 0 {
		shift := "times kept as in the trace"
		if r.Shift != 0 {
			shift = "shifted by -" + seconds(r.Shift) + " s"
		}
		fmt.Fprintf(bw, "kept creation times %s to %s s in the trace, %s\n", seconds(r.FirstSubmit), seconds(r.LastSubmit), shift)
		qos := make([]string, 0, len(r.ByQoS))
		for q := range r.ByQoS {
			qos = append(qos, q)
		}
		sort.Strings(qos)
		for _, q := range qos {
			class := "no PriorityClass"
			if c, ok := QoSClass(q); ok && !r.NoPriority {
				class = "PriorityClass " + c.Name
			}
			fmt.Fprintf(bw, "qos %q: %d pods (%s)\n", q, r.ByQoS[q], class)
		}
		fmt.Fprintf(bw, "%d ResourceClaimTemplates\n", r.ClaimTemplates)
	}
	for _, d := range reasonDescriptions() {
		if n := r.Dropped[d.reason]; n > 0 {
			fmt.Fprintf(bw, "dropped %d %s: %s\n", n, d.reason, d.what)
		}
	}
	return bw.Flush()
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) }
