package launch

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/batkube/batkube/pkg/metrics"
)

// The metrics files a run leaves in its output folder.
const (
	// ServerMetricsFile is the server's /metrics at the end of the run.
	ServerMetricsFile = "server-metrics.txt"
	// KubeSchedulerMetricsFile is kube-scheduler's whole /metrics, scraped
	// by the server when the simulation ends.
	KubeSchedulerMetricsFile = "kube-scheduler-metrics.txt"
)

// readKubeSchedulerMetrics summarises the kube-scheduler's metrics saved in
// path. A missing file (the scrape failed: the server's log says why)
// leaves the summary without them.
func (s *Summary) readKubeSchedulerMetrics(path string) error {
	f, err := metrics.ParseFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("launch: kube-scheduler's metrics: %w", err)
	}
	sum, err := metrics.SummarizeKubeScheduler(f)
	if err != nil {
		return fmt.Errorf("launch: %s: %w", filepath.Base(path), err)
	}
	s.KubeScheduler = &sum
	return nil
}

// writeKubeScheduler prints the kube-scheduler's summary.
func writeKubeScheduler(w io.Writer, k *metrics.SchedulerSummary) {
	a := k.Attempts
	fmt.Fprintf(w, "kube-scheduler: %d scheduling attempts: %d scheduled, %d unschedulable, %d error", a.Total(), a.Scheduled, a.Unschedulable, a.Error)
	if k.AttemptsPerPod > 0 {
		fmt.Fprintf(w, " (%.2f per scheduled pod)", k.AttemptsPerPod)
	}
	fmt.Fprintf(w, "; %d preemption attempts\n", k.PreemptionAttempts)
	var parts []string
	for _, l := range []struct {
		what string
		l    *metrics.Latency
	}{{"attempt", k.AttemptLatency}, {"pod scheduling", k.PodLatency}} {
		if l.l != nil && l.l.Count > 0 {
			p := fmt.Sprintf("%s mean %s, p95 %s", l.what, seconds(l.l.Mean), seconds(l.l.P95))
			if l.l.Note != "" {
				p += " (" + l.l.Note + ")"
			}
			parts = append(parts, p)
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "                latency (wall clock): ")
		for i, p := range parts {
			if i > 0 {
				fmt.Fprint(w, "; ")
			}
			fmt.Fprint(w, p)
		}
		fmt.Fprintln(w)
	}
}

// seconds prints a duration in seconds at a readable precision.
func seconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
