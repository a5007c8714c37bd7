package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummaryReadsKubeSchedulerMetrics: a saved kube-scheduler /metrics
// (pkg/metrics' testdata, from a real 1.37 run) fills the summary and its
// printed lines; no file (another scheduler, or a failed scrape) leaves
// both without it; a file that is not kube-scheduler's is an error.
func TestSummaryReadsKubeSchedulerMetrics(t *testing.T) {
	var s Summary
	if err := s.readKubeSchedulerMetrics("../metrics/testdata/kube-scheduler-1.37-preemption.txt"); err != nil {
		t.Fatal(err)
	}
	if s.KubeScheduler == nil || s.KubeScheduler.Attempts.Scheduled != 6 || s.KubeScheduler.Attempts.Unschedulable != 2 {
		t.Fatalf("summary %+v, want 6 scheduled and 2 unschedulable attempts", s.KubeScheduler)
	}
	var out strings.Builder
	s.Write(&out)
	for _, want := range []string{
		"kube-scheduler: 8 scheduling attempts: 6 scheduled, 2 unschedulable, 0 error (1.33 per scheduled pod); 2 preemption attempts",
		"latency (wall clock): attempt mean 1.12ms, p95 1.92ms; pod scheduling mean 87.18ms, p95 154ms",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, out.String())
		}
	}

	var none Summary
	if err := none.readKubeSchedulerMetrics(filepath.Join(t.TempDir(), KubeSchedulerMetricsFile)); err != nil || none.KubeScheduler != nil {
		t.Errorf("no file: %v, %+v; want nothing", err, none.KubeScheduler)
	}
	out.Reset()
	none.Write(&out)
	if strings.Contains(out.String(), "kube-scheduler") {
		t.Errorf("a summary without kube-scheduler's metrics mentions it:\n%s", out.String())
	}

	other := filepath.Join(t.TempDir(), "other.txt")
	if err := os.WriteFile(other, []byte("# TYPE apiserver_request_total counter\napiserver_request_total 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := none.readKubeSchedulerMetrics(other); err == nil {
		t.Error("an API server's metrics read as kube-scheduler's")
	}
}
