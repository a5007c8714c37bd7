package main

import (
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/launch"
)

// The progress line says how far the jobs are and, on a Kueue run, the
// Workloads by state (quota reserved counting as admitted) and the timed
// objects still to come; a run without them shows neither.
func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		name string
		pr   broker.Progress
		want string
	}{
		{"plain", broker.Progress{Now: 61.4, Done: 3, Total: 10, Running: 2, Pending: 5},
			"t=1m1s simulated  jobs: 3/10 done, 2 running, 5 pending  wall 2.5s\n"},
		{"Kueue", broker.Progress{Now: 40, Done: 624, Total: -1, Running: 16, TimedObjectsLeft: 9000,
			Workloads: &broker.WorkloadStates{Pending: 5000, QuotaReserved: 2, Admitted: 28, Finished: 600}},
			"t=40s simulated  jobs: 624/? done, 16 running, 0 pending  Workloads: 5000 pending, 30 admitted, 600 finished  9000 timed objects to come  wall 2.5s\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			newProgressPrinter(&out).print(launch.Progress{Progress: c.pr, Wall: 2500 * time.Millisecond})
			if got := out.String(); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
