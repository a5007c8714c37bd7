package launch

import (
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/outputs"
)

// The queues' lines of the summary: Kueue's times to admission by
// ClusterQueue and, when Kueue evicted Workloads, how often and which one
// most (a preemption loop shows as one Workload evicted thousands of times).
func TestSummaryPrintsKueuesEvictions(t *testing.T) {
	q := &outputs.Queues{
		Jobs:          outputs.Waits{Count: 2, Done: 2},
		ClusterQueues: []outputs.QueueWaits{{Queue: "cq-a", Waits: outputs.Waits{Count: 2, Done: 2}}},
	}
	var b strings.Builder
	writeQueues(&b, q)
	if strings.Contains(b.String(), "evictions") {
		t.Errorf("a run without evictions prints them:\n%s", b.String())
	}
	q.Evictions, q.Evicted, q.MostEvicted, q.MostEvictions = 6660, 2, "ns/job-large-3", 6657
	b.Reset()
	writeQueues(&b, q)
	if want := "6660 evictions of 2 Workloads; the most evicted, ns/job-large-3, 6657 times"; !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nwant a line with %q", b.String(), want)
	}
}
