package campaign

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/batkube/batkube/pkg/launch"
)

func launchBase() launch.Config { return launch.Config{BinDir: "bin-dir"} }

// inputs makes the campaign's input files (empty) in a new current
// directory.
func inputs(t *testing.T, c *Campaign) {
	t.Helper()
	t.Chdir(t.TempDir())
	var files []string
	for _, p := range c.Platforms {
		files = append(files, p.Files...)
	}
	for _, w := range c.Workloads {
		files = append(files, w.Files...)
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// finishRun makes run r's folder in out look like a run that ended with
// the given status, started with the settings of r.
func finishRun(t *testing.T, r Run, out, status string) {
	t.Helper()
	if err := prepare(r, out); err != nil {
		t.Fatal(err)
	}
	dir := r.Dir(out)
	if err := os.WriteFile(filepath.Join(dir, "_jobs.csv"), []byte("job_id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := launch.WriteJSON(filepath.Join(dir, SummaryFile), launch.Summary{Status: status, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
}

// TestInspectKeepsOnlyFinishedRuns: the rules of resumption. Only a folder
// whose summary says succeeded, with _jobs.csv and the run's own settings,
// is a finished run.
func TestInspectKeepsOnlyFinishedRuns(t *testing.T) {
	c := mustParse(t, matrixFile)
	r := c.Runs()[0]
	write := func(t *testing.T, out, file, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(r.Dir(out), file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, out string)
		want  State
	}{
		{"no folder", func(*testing.T, string) {}, NotStarted},
		{"interrupted: settings and logs, no summary", func(t *testing.T, out string) {
			if err := prepare(r, out); err != nil {
				t.Fatal(err)
			}
			write(t, out, "server.log", "half a run")
		}, Unfinished},
		{"a summary that is not JSON", func(t *testing.T, out string) {
			finishRun(t, r, out, launch.StatusSucceeded)
			write(t, out, SummaryFile, `{"status": "succ`)
		}, Unfinished},
		{"failed", func(t *testing.T, out string) { finishRun(t, r, out, launch.StatusFailed) }, Failed},
		{"a summary of before the status existed", func(t *testing.T, out string) {
			finishRun(t, r, out, launch.StatusSucceeded)
			write(t, out, SummaryFile, `{"jobs": 3}`)
		}, Failed},
		{"succeeded without _jobs.csv", func(t *testing.T, out string) {
			finishRun(t, r, out, launch.StatusSucceeded)
			if err := os.Remove(filepath.Join(r.Dir(out), "_jobs.csv")); err != nil {
				t.Fatal(err)
			}
		}, Unfinished},
		{"succeeded with other settings", func(t *testing.T, out string) {
			other := r
			other.Scheduler.SchedulerCmd += " --verbose"
			finishRun(t, other, out, launch.StatusSucceeded)
		}, Changed},
		{"succeeded without run.json", func(t *testing.T, out string) {
			finishRun(t, r, out, launch.StatusSucceeded)
			if err := os.Remove(filepath.Join(r.Dir(out), SettingsFile)); err != nil {
				t.Fatal(err)
			}
		}, Changed},
		{"finished", func(t *testing.T, out string) { finishRun(t, r, out, launch.StatusSucceeded) }, Finished},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			tc.setup(t, out)
			got, _, err := Inspect(r, out)
			if err != nil || got != tc.want {
				t.Errorf("Inspect: %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestPrepareStartsFromScratch: whatever an unfinished run left is gone,
// and the folder holds the run's settings.
func TestPrepareStartsFromScratch(t *testing.T) {
	r := mustParse(t, matrixFile).Runs()[3]
	out := t.TempDir()
	if err := os.MkdirAll(r.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir(out), "_jobs.csv"), []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := prepare(r, out); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(r.Dir(out))
	if err != nil || len(entries) != 1 || entries[0].Name() != SettingsFile {
		t.Errorf("after prepare: %v, %v; want run.json alone", entries, err)
	}
}

// TestRunnerGoesOnPastFailures: runs that fail (here, no binaries to
// start) are each reported and do not stop the others; a finished run is
// kept, untouched; the counts add up at every event.
func TestRunnerGoesOnPastFailures(t *testing.T) {
	c := mustParse(t, matrixFile)
	runs := c.Runs()[:5]
	inputs(t, c)
	out := t.TempDir()
	finishRun(t, runs[2], out, launch.StatusSucceeded)
	kept, err := os.ReadFile(filepath.Join(runs[2].Dir(out), SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	kinds := map[EventKind][]string{}
	rn := &Runner{Out: out, Parallel: 2, Base: launch.Config{BinDir: t.TempDir()}, Events: func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		kinds[e.Kind] = append(kinds[e.Kind], e.Run.Name)
		if n := e.Counts; n.Done+n.Failed+n.Running+n.Left != n.Total || n.Total != 5 || n.Running > 2 {
			t.Errorf("counts %+v after a %v event", n, e.Kind)
		}
	}}
	results, err := rn.Run(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		switch {
		case i == 2:
			if !res.Skipped || res.Err != nil {
				t.Errorf("the finished run: skipped %v, err %v", res.Skipped, res.Err)
			}
		case res.Err == nil || !strings.Contains(res.Err.Error(), "not found"):
			t.Errorf("run %d: %v, want a failure naming the missing binary", i, res.Err)
		}
	}
	if len(kinds[EventSkipped]) != 1 || len(kinds[EventStarted]) != 4 || len(kinds[EventFailed]) != 4 {
		t.Errorf("events: %v", kinds)
	}
	if again, _ := os.ReadFile(filepath.Join(runs[2].Dir(out), SummaryFile)); string(again) != string(kept) {
		t.Error("the finished run's summary changed")
	}
	if state, _, _ := Inspect(runs[0], out); state != Failed {
		t.Errorf("a failed run's folder: %v, want failed (its summary says so)", state)
	}
}

// TestRunnerStopsWithItsContext: a cancelled campaign starts nothing and
// says so for each run.
func TestRunnerStopsWithItsContext(t *testing.T) {
	runs := mustParse(t, matrixFile).Runs()[:3]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := t.TempDir()
	results, err := (&Runner{Out: out, Base: launch.Config{BinDir: t.TempDir()}}).Run(ctx, runs)
	if err == nil {
		t.Fatal("Run with a cancelled context: no error")
	}
	for _, res := range results {
		if res.Err == nil {
			t.Errorf("%s: no error", res.Run.Name)
		}
		if _, err := os.Stat(res.Run.Dir(out)); err == nil {
			t.Errorf("%s: a folder was made", res.Run.Name)
		}
	}
}
