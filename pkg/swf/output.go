package swf

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/batkube/batkube/pkg/workloadjson"
)

// WriteJSON writes the workload as Batsim workload JSON, one job and one
// profile per line, profiles sorted by name: the same workload always gives
// the same bytes (package workloadjson).
func (w Workload) WriteJSON(out io.Writer) error {
	return workloadjson.Write(out, w.NbRes, w.Description, w.Jobs, w.Profiles)
}

// Write prints the report for a person: what was kept, nb_res, the largest
// job, then one line per drop reason.
func (r Report) Write(out io.Writer) error {
	bw := bufio.NewWriter(out)
	fmt.Fprintf(bw, "read %d records, kept %d jobs, dropped %d\n", r.Read, r.Kept, r.DroppedTotal())
	if r.Kept > 0 {
		shift := "times kept as in the trace"
		if r.Shift != 0 {
			shift = "shifted by -" + formatSeconds(r.Shift) + " s"
		}
		fmt.Fprintf(bw, "kept submit times %s to %s s in the trace, %s\n",
			formatSeconds(r.FirstSubmit), formatSeconds(r.LastSubmit), shift)
		fmt.Fprintf(bw, "nb_res %d (%s), %d profiles\n", r.NbRes, r.NbResFrom, r.Profiles)
		fmt.Fprintf(bw, "largest job: %d, %d processors on %d hosts\n", r.Largest.JobNumber, r.Largest.Processors, r.Largest.Hosts)
	}
	for _, d := range reasonDescriptions {
		if n := r.Dropped[d.reason]; n > 0 {
			fmt.Fprintf(bw, "dropped %d %s: %s\n", n, d.reason, d.what)
		}
	}
	return bw.Flush()
}

func formatSeconds(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) }
