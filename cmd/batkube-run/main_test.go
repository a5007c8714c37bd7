package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/launch"
)

// copyTiny copies pkg/report's tiny run into a new folder.
func copyTiny(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"_jobs.csv", "_pods.csv", "_schedule.csv", "summary.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "pkg", "report", "testdata", "tiny", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestReportOfARunAndOfRepetitions: --report writes the run's report into
// its folder, with its figures and charts (the platform and workloads are
// the run's flags); with several runs, one of all of them with their group.
func TestReportOfARunAndOfRepetitions(t *testing.T) {
	testdata := filepath.Join("..", "..", "pkg", "report", "testdata")
	opts := options{Platform: filepath.Join(testdata, "platform.xml"), Workloads: []string{filepath.Join(testdata, "workload.json")}}
	one := copyTiny(t)
	var stdout strings.Builder
	if err := writeReport(&stdout, one, []string{one}, opts); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(one, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<td data-metric="makespan">25.000</td>`, `<td data-metric="cpu-utilisation">56.7 %</td>`, "platform.xml, workload.json"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the run's report lacks %s", want)
		}
	}
	if strings.Contains(string(page), `id="groups"`) {
		t.Error("the report of one run has a table of groups")
	}
	if charts, err := os.ReadDir(filepath.Join(one, "report-charts")); err != nil || len(charts) != 8 {
		t.Errorf("report-charts: %d files (%v), want 4 charts × SVG and PNG", len(charts), err)
	}
	if !strings.Contains(stdout.String(), filepath.Join(one, "report.html")) {
		t.Errorf("output %q does not name the report", stdout.String())
	}

	out := t.TempDir()
	two := copyTiny(t)
	if err := writeReport(&stdout, out, []string{one, two}, opts); err != nil {
		t.Fatal(err)
	}
	page, err = os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || !strings.Contains(string(page), `<tr data-group="all 2 runs">`) {
		t.Errorf("the report of repetitions: %v; want the group of the 2 runs", err)
	}
}

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
