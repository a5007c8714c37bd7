package metrics

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestSummarizeKubeScheduler reads the scheduling families saved from real
// runs of examples/schedulers/preemption with kube-scheduler 1.37.1 and
// 1.18.19 (testdata; the other families left out), whose metric names
// differ. The means are the files' sums over counts; the p95s were worked
// out by hand from their buckets.
func TestSummarizeKubeScheduler(t *testing.T) {
	type latency = Latency
	for _, c := range []struct {
		file           string
		want           SchedulerSummary
		attemptP95     float64
		podP95         float64
		attemptsPerPod float64
	}{
		{
			file: "testdata/kube-scheduler-1.37-preemption.txt",
			want: SchedulerSummary{
				Attempts:           Attempts{Scheduled: 6, Unschedulable: 2},
				AttemptLatency:     &latency{Metric: "scheduler_scheduling_attempt_duration_seconds", Count: 8, Mean: (0.008468758 + 0.000497672) / 8},
				PodLatency:         &latency{Metric: "scheduler_pod_scheduling_sli_duration_seconds", Count: 6, Mean: (0.419032795 + 0.10406978) / 6},
				PreemptionAttempts: 2, PreemptionVictims: 2,
			},
			// 8 attempts: 3 under 1 ms, 5 in (1, 2] ms: rank 7.6 is 4.6/5 of the way.
			attemptP95: 0.001 + 0.001*4.6/5,
			// 6 pods: 2 in (40, 80] ms, 4 in (80, 160]: rank 5.7 is 3.7/4 of the way.
			podP95:         0.08 + 0.08*3.7/4,
			attemptsPerPod: 8.0 / 6,
		},
		{
			file: "testdata/kube-scheduler-1.18-preemption.txt",
			want: SchedulerSummary{
				Attempts: Attempts{Scheduled: 6, Unschedulable: 5},
				AttemptLatency: &latency{Metric: "scheduler_e2e_scheduling_duration_seconds", Count: 6, Mean: 0.008437445000000002 / 6,
					Note: "scheduled attempts only"},
				PodLatency:         &latency{Metric: "scheduler_pod_scheduling_duration_seconds", Count: 6, Mean: 4.397211036 / 6},
				PreemptionAttempts: 5, PreemptionVictims: 2,
			},
			// 6 attempts: 1 under 1 ms, 4 in (1, 2] ms, 1 in (2, 4]: rank 5.7 is 0.7/1 of the way.
			attemptP95: 0.002 + 0.002*0.7/1,
			// 6 pods: 4 in (64, 128] ms, 2 in (1.024, 2.048] s: rank 5.7 is 1.7/2 of the way.
			podP95:         1.024 + 1.024*1.7/2,
			attemptsPerPod: 8.0 / 6,
		},
	} {
		f, err := ParseFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := SummarizeKubeScheduler(f)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
		if got.Attempts != c.want.Attempts || got.PreemptionAttempts != c.want.PreemptionAttempts ||
			got.PreemptionVictims != c.want.PreemptionVictims || !near(got.AttemptsPerPod, c.attemptsPerPod) {
			t.Errorf("%s: attempts %+v, preemption attempts %d, victims %d, attempts per pod %g; want %+v, %d, %d, %g", c.file,
				got.Attempts, got.PreemptionAttempts, got.PreemptionVictims, got.AttemptsPerPod,
				c.want.Attempts, c.want.PreemptionAttempts, c.want.PreemptionVictims, c.attemptsPerPod)
		}
		for _, l := range []struct {
			what      string
			got, want *Latency
			p95       float64
		}{
			{"attempt latency", got.AttemptLatency, c.want.AttemptLatency, c.attemptP95},
			{"pod scheduling latency", got.PodLatency, c.want.PodLatency, c.podP95},
		} {
			if l.got == nil {
				t.Errorf("%s: no %s", c.file, l.what)
				continue
			}
			g, w := *l.got, *l.want
			if g.Metric != w.Metric || g.Note != w.Note || g.Count != w.Count || !near(g.Mean, w.Mean) {
				t.Errorf("%s: %s %+v, want %+v", c.file, l.what, g, w)
			}
			if !near(g.P95, l.p95) {
				t.Errorf("%s: %s p95 %g, want %g", c.file, l.what, g.P95, l.p95)
			}
		}
	}
}

// A kube-scheduler that has attempted nothing has no attempts counter yet,
// but its pending-pods gauge.
func TestSummarizeKubeSchedulerBeforeAnyAttempt(t *testing.T) {
	f, err := Parse(strings.NewReader("# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := SummarizeKubeScheduler(f)
	if err != nil || s.Attempts.Total() != 0 || s.AttemptLatency != nil {
		t.Errorf("a kube-scheduler before any attempt: %+v, %v; want zero attempts, no error", s, err)
	}
}

func TestSummarizeWhatIsNotKubeScheduler(t *testing.T) {
	f, err := Parse(strings.NewReader("# TYPE apiserver_request_total counter\napiserver_request_total{verb=\"GET\"} 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SummarizeKubeScheduler(f); !errors.Is(err, ErrNotKubeScheduler) {
		t.Errorf("summarising an API server's metrics: %v, want ErrNotKubeScheduler", err)
	}
}
