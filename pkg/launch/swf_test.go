package launch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/swf"
)

// TestTracesConvertedIntoTheOutputFolder: a workload named *.swf is a
// Parallel Workloads Archive trace, converted (package swf, with the run's
// options) into OUT/NAME.json, which the run then uses, with the
// conversion's report beside it; other workloads are left alone.
func TestTracesConvertedIntoTheOutputFolder(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "site.swf")
	if err := os.WriteFile(trace, []byte(`; Version: 2.2
; MaxProcs: 16
1 0 5 100 4 -1 -1 4 300 -1 1 1 1 -1 1 -1 -1 -1
2 10 0 50 8 -1 -1 8 60 -1 0 1 1 -1 1 -1 -1 -1
3 20 -1 -1 2 -1 -1 2 100 -1 5 1 1 -1 1 -1 -1 -1
`), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.json")
	r := &run{cfg: Config{OutDir: dir, Workloads: []string{plain, trace}, SWF: swf.Options{CoresPerHost: 4}}}
	if err := r.convertTraces(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "site.json")
	if r.cfg.Workloads[0] != plain || r.cfg.Workloads[1] != out {
		t.Fatalf("workloads %v, want the plain one and %s", r.cfg.Workloads, out)
	}
	var w struct {
		NbRes int `json:"nb_res"`
		Jobs  []struct {
			ID  int `json:"id"`
			Res int `json:"res"`
		} `json:"jobs"`
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	// 16 processors of 4 cores: 4 hosts; job 1 (4 processors) on 1 host,
	// job 2 (8, failed: kept) on 2, job 3 (cancelled before it ran) dropped.
	if w.NbRes != 4 || len(w.Jobs) != 2 || w.Jobs[0].Res != 1 || w.Jobs[1].Res != 2 {
		t.Errorf("converted workload %+v, want nb_res 4 and jobs 1 (1 host) and 2 (2 hosts)", w)
	}
	report, err := os.ReadFile(filepath.Join(dir, "site.swf-report.txt"))
	if err != nil || !strings.Contains(string(report), "cancelled") {
		t.Errorf("report %q (%v), want the dropped cancelled job counted", report, err)
	}
}
