package e2e

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/compare"
)

// TestCompareRunsTheFamiliesAndTabulates: batkube-compare runs two
// families (the FIFO and the random client-go schedulers) on a small
// contended workload and prints a table whose figures are each run's:
// makespan and mean waiting from _schedule.csv, p95 recomputed from
// _jobs.csv; run again, it skips the finished runs.
func TestCompareRunsTheFamiliesAndTabulates(t *testing.T) {
	bin := batkubeBinaries(t)
	tmp := t.TempDir()
	compareBin := filepath.Join(tmp, "batkube-compare")
	build := exec.Command("go", "build", "-o", compareBin, "./cmd/batkube-compare")
	build.Dir = repoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building batkube-compare: %v\n%s", err, out)
	}
	workload := filepath.Join(tmp, "contended.json")
	writeContendedWorkload(t, workload, 60, 0.8, 7)
	families := filepath.Join(tmp, "families.yaml")
	content := "platform: " + abs(repoRoot(), platform4) + "\nworkloads: [" + workload + "]\nfamilies:\n" +
		"  - name: fifo\n    schedulerCmd: " + filepath.Join(bin, "fifo") + " --kubeconfig {kubeconfig}\n    serverArgs: [--settle=signal]\n" +
		"  - name: random\n    schedulerCmd: " + filepath.Join(bin, "random") + " --kubeconfig {kubeconfig} --seed 3\n    serverArgs: [--settle=signal]\n"
	if err := os.WriteFile(families, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	runCompare := func() string {
		cmd := exec.Command(compareBin, "-q", "-f", families, "-o", out, "--bin-dir", bin)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		if err != nil {
			t.Fatalf("batkube-compare: %v\n%s", err, stderr.String())
		}
		return stderr.String() + string(stdout)
	}
	first := runCompare()
	data, err := os.ReadFile(filepath.Join(out, "compare.json"))
	if err != nil {
		t.Fatal(err)
	}
	var figures []compare.Figures
	if err := json.Unmarshal(data, &figures); err != nil {
		t.Fatal(err)
	}
	if len(figures) != 2 || figures[0].Name != "fifo" || figures[1].Name != "random" {
		t.Fatalf("compare.json: %+v, want fifo and random", figures)
	}
	for _, f := range figures {
		dir := filepath.Join(out, f.Name)
		sched, err := readCSVFile(filepath.Join(dir, "_schedule.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if f.Makespan != num(t, sched[0]["makespan"]) || f.MeanWait != num(t, sched[0]["mean_waiting_time"]) {
			t.Errorf("%s: makespan %g mean wait %g, _schedule.csv says %s and %s", f.Name, f.Makespan, f.MeanWait, sched[0]["makespan"], sched[0]["mean_waiting_time"])
		}
		jobs, err := readCSVFile(filepath.Join(dir, "_jobs.csv"))
		if err != nil {
			t.Fatal(err)
		}
		var waits []float64
		for _, j := range jobs {
			waits = append(waits, num(t, j["waiting_time"]))
		}
		slices.Sort(waits)
		if p95 := waits[int(math.Ceil(0.95*float64(len(waits))))-1]; f.P95Wait != p95 || f.Jobs != 60 || f.Succeeded != 60 {
			t.Errorf("%s: p95 %g, %d jobs (%d succeeded); _jobs.csv gives p95 %g over 60", f.Name, f.P95Wait, f.Jobs, f.Succeeded, p95)
		}
		if !strings.Contains(first, "| "+f.Name+" | 60 (60) |") {
			t.Errorf("the printed table has no row for %s:\n%s", f.Name, first)
		}
	}
	if second := runCompare(); strings.Contains(second, "[1/2]") || strings.Contains(second, "[2/2]") {
		t.Errorf("the second run ran finished families again:\n%s", second)
	}
}
