package metrics

import (
	"errors"
	"math"
)

// SchedulerSummary is what a kube-scheduler's own metrics say of a run:
// its scheduling attempts by result, their latency and the pods'
// scheduling latency (wall-clock seconds: the scheduler lives in real
// time), and preemption.
type SchedulerSummary struct {
	Attempts Attempts `json:"attempts"`
	// AttemptLatency is the latency of one scheduling attempt (algorithm
	// and binding): scheduler_scheduling_attempt_duration_seconds, every
	// result; kube-scheduler 1.18 has only
	// scheduler_e2e_scheduling_duration_seconds, of the attempts that
	// scheduled a pod.
	AttemptLatency *Latency `json:"attemptLatency,omitempty"`
	// PodLatency is the time from a pod's entering the scheduling queue to
	// its successful attempt, several attempts included:
	// scheduler_pod_scheduling_sli_duration_seconds
	// (scheduler_pod_scheduling_duration_seconds for 1.18).
	PodLatency *Latency `json:"podSchedulingLatency,omitempty"`
	// AttemptsPerPod is the mean number of attempts a pod took to be
	// scheduled (scheduler_pod_scheduling_attempts).
	AttemptsPerPod float64 `json:"attemptsPerScheduledPod"`
	// PreemptionAttempts counts the scheduler's preemption attempts,
	// PreemptionVictims the victims they chose.
	PreemptionAttempts int `json:"preemptionAttempts"`
	PreemptionVictims  int `json:"preemptionVictims"`
}

// Attempts counts scheduling attempts by result
// (scheduler_schedule_attempts_total).
type Attempts struct {
	// Scheduled pods; Unschedulable: no node fitted; Error: an internal
	// error of the scheduler (a failed binding...).
	Scheduled     int `json:"scheduled"`
	Unschedulable int `json:"unschedulable"`
	Error         int `json:"error"`
}

// Total is every attempt.
func (a Attempts) Total() int { return a.Scheduled + a.Unschedulable + a.Error }

// Latency summarises a latency histogram.
type Latency struct {
	// Metric is the histogram it was read from.
	Metric string  `json:"metric"`
	Count  int     `json:"count"`
	Mean   float64 `json:"meanSeconds"`
	// P95 is estimated from the buckets as Prometheus's histogram_quantile
	// does.
	P95 float64 `json:"p95Seconds"`
	// Note says what the histogram leaves out, if anything.
	Note string `json:"note,omitempty"`
}

// The names of kube-scheduler's metrics, in 1.37 and before (1.18), that
// Batkube reads (here for a run's summary, and in the settle policy).
const (
	KubeSchedulerPendingPods       = "scheduler_pending_pods" // created at start: present before any attempt
	KubeSchedulerAttemptLatency    = "scheduler_scheduling_attempt_duration_seconds"
	KubeSchedulerAttemptLatency118 = "scheduler_e2e_scheduling_duration_seconds"
	KubeSchedulerVictims           = "scheduler_preemption_victims"
	schedulerAttempts              = "scheduler_schedule_attempts_total"
	schedulerPodLatency            = "scheduler_pod_scheduling_sli_duration_seconds"
	schedulerPodLatency118         = "scheduler_pod_scheduling_duration_seconds"
	schedulerPodAttempts           = "scheduler_pod_scheduling_attempts"
	schedulerPreemptions           = "scheduler_preemption_attempts_total"
	schedulerPreemptions118        = "scheduler_total_preemption_attempts"
	schedulerVictims118            = "scheduler_pod_preemption_victims"
)

// ErrNotKubeScheduler says metrics are not a kube-scheduler's.
var ErrNotKubeScheduler = errors.New("metrics: no scheduler_pending_pods: not a kube-scheduler's metrics")

// SummarizeKubeScheduler reads the summary of a run from a kube-scheduler's
// metrics (1.37's names, or 1.18's where they differ). A scheduler that
// has made no attempt yet exposes no attempts counter: zero attempts.
func SummarizeKubeScheduler(f Families) (SchedulerSummary, error) {
	if !f.Has(KubeSchedulerPendingPods) && !f.Has(schedulerAttempts) {
		return SchedulerSummary{}, ErrNotKubeScheduler
	}
	var s SchedulerSummary
	byResult := f.SumBy(schedulerAttempts, "result", nil)
	s.Attempts = Attempts{Scheduled: int(byResult["scheduled"]), Unschedulable: int(byResult["unschedulable"]), Error: int(byResult["error"])}
	s.AttemptLatency = latency(f, KubeSchedulerAttemptLatency, KubeSchedulerAttemptLatency118)
	if s.AttemptLatency != nil && s.AttemptLatency.Metric == KubeSchedulerAttemptLatency118 {
		s.AttemptLatency.Note = "scheduled attempts only"
	}
	s.PodLatency = latency(f, schedulerPodLatency, schedulerPodLatency118)
	if h, ok := f.Histogram(schedulerPodAttempts, nil); ok && h.Count > 0 {
		s.AttemptsPerPod = h.Mean()
	}
	s.PreemptionAttempts = int(f.Sum(first(f, schedulerPreemptions, schedulerPreemptions118), nil))
	if h, ok := f.Histogram(first(f, KubeSchedulerVictims, schedulerVictims118), nil); ok {
		s.PreemptionVictims = int(math.Round(h.Sum))
	}
	return s, nil
}

// first returns the first of the names that f has (the last one if none).
func first(f Families, names ...string) string {
	for _, n := range names {
		if f.Has(n) {
			return n
		}
	}
	return names[len(names)-1]
}

// latency summarises the first histogram of names that f has; nil if none.
func latency(f Families, names ...string) *Latency {
	name := first(f, names...)
	h, ok := f.Histogram(name, nil)
	if !ok {
		return nil
	}
	l := &Latency{Metric: name, Count: int(h.Count)}
	if h.Count > 0 {
		l.Mean, l.P95 = h.Mean(), h.Quantile(0.95)
	}
	return l
}
