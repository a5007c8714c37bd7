package broker_test

import (
	"bytes"
	"encoding/csv"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/outputs"
)

// TestPodsLog: _pods.csv has a row per pod with the simulated instants it
// was created, bound, started and finished, and its final phase; a job
// the run ends before is written too, pending.
func TestPodsLog(t *testing.T) {
	var out bytes.Buffer
	h := startOnNode0(t, broker.Options{Quiet: 50 * time.Millisecond, PodsCSV: &out})
	r := h.send(1, submitted("w!1"), stuckJob("w!stuck"))
	exec := r.Events[0].Data.(batsim.ExecuteJob)
	h.send(11, batsim.JobCompleted{JobID: "w!1", JobState: batsim.JobStateCompletedSuccessfully, Alloc: exec.Alloc})
	h.send(12, batsim.RequestedCall{})
	h.end(13)
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		outputs.PodsColumns,
		{"w!1", "default", "w-1", "node0", "1.000000", "1.000000", "1.000000", "1.000000", "11.000000", "Succeeded", "", "0", "false", ""},
		{"w!stuck", "default", "w-stuck", "", "1.000000", "", "", "", "", "Pending", "", "0", "false", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("got %d rows %q, want %q", len(rows), rows, want)
	}
	for i := range want {
		for k := range want[i] {
			if rows[i][k] != want[i][k] {
				t.Errorf("row %d column %s: got %q, want %q", i, want[0][k], rows[i][k], want[i][k])
			}
		}
	}
}
