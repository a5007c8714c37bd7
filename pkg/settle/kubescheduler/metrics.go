package kubescheduler

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"

	"github.com/batkube/batkube/pkg/metrics"
)

// Metric families the policy reads.
const (
	familyPendingPods      = metrics.KubeSchedulerPendingPods
	familyGoroutines       = "scheduler_goroutines"           // 1.22+
	familyGoroutinesOld    = "scheduler_scheduler_goroutines" // up to 1.21
	familyAsyncCalls       = "scheduler_pending_async_api_calls"
	familyHandled          = "scheduler_event_handling_duration_seconds"
	familyHandledCount     = familyHandled + "_count"
	familyProcessStart     = "process_start_time_seconds"
	familyAttempt          = metrics.KubeSchedulerAttemptLatency     // 1.23+
	familyAttemptOld       = metrics.KubeSchedulerAttemptLatency118  // up to 1.22
	familyQueuedEntities   = "scheduler_queued_entities"             // 1.37: by queue and type (pod, podgroup)
	familyVictims          = metrics.KubeSchedulerVictims            // one observation per preemption carried out
	familyGroupVictims     = "scheduler_workload_preemption_victims" // 1.37: the same, for pod groups
	familyPreemptionsDone  = "scheduler_preemption_goroutines_execution_total"
	familyFeature          = "kubernetes_feature_enabled"
	eventAssignedPodDelete = "AssignedPodDelete"
	eventNodeAdd           = "NodeAdd"
	eventNodeDelete        = "NodeDelete"
	eventNodeTaint         = "NodeUpdateNodeTaint"
	eventPodGroupAdd       = "scheduling.k8s.io/PodGroupAdd"
	eventPodGroupDelete    = "scheduling.k8s.io/PodGroupDelete"
	eventPodGroupUpdate    = "scheduling.k8s.io/PodGroupUpdate"
	// Feature gates the policy reads (kubernetes_feature_enabled).
	gateGenericWorkload = "GenericWorkload"
	gateAsyncPreemption = "SchedulerAsyncPreemption"
)

// families is the name[] filter of a scrape.
var families = []string{familyPendingPods, familyGoroutines, familyGoroutinesOld, familyAsyncCalls,
	familyHandled, familyProcessStart, familyAttempt, familyAttemptOld, familyQueuedEntities,
	familyVictims, familyGroupVictims, familyPreemptionsDone, familyFeature}

// sample is what a scrape tells.
type sample struct {
	// queues holds scheduler_pending_pods by queue.
	queues map[string]float64
	// goroutines sums the scheduler's goroutines at work (binding cycles,
	// extenders, parallel plugin work); asyncCalls its pending async API
	// calls.
	goroutines, asyncCalls float64
	// handled counts handled events by label (empty before the first
	// event, and on versions that do not count them).
	handled map[string]float64
	// started is process_start_time_seconds (0 if absent).
	started float64
	// attempts and attemptSeconds count the scheduling attempts so far and
	// the time they took.
	attempts, attemptSeconds float64
	// entities holds scheduler_queued_entities by queue and type
	// ("backoff/pod": the pods in the back-off queue that belong to no pod
	// group); hasEntities tells whether the family was there (1.37).
	entities    map[string]float64
	hasEntities bool
	// preemptions counts the preemptions carried out (one observation of
	// the victims' histogram each), preemptionsDone the asynchronous ones
	// whose goroutine has ended.
	preemptions, preemptionsDone float64
	// gates holds kubernetes_feature_enabled by feature name.
	gates map[string]bool
}

// parse reads a Prometheus text exposition, keeping the families above.
func parse(data []byte) (sample, error) {
	s := sample{queues: map[string]float64{}, handled: map[string]float64{}, entities: map[string]float64{}, gates: map[string]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	sawPending := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		name, labels, value, err := metrics.ParseLine(line)
		if err != nil {
			return sample{}, err
		}
		switch name {
		case familyPendingPods:
			sawPending = true
			s.queues[labels["queue"]] += value
		case familyGoroutines, familyGoroutinesOld:
			s.goroutines += value
		case familyAsyncCalls:
			s.asyncCalls += value
		case familyHandledCount:
			s.handled[labels["event"]] += value
		case familyProcessStart:
			s.started = value
		case familyAttempt + "_count", familyAttemptOld + "_count":
			s.attempts += value
		case familyAttempt + "_sum", familyAttemptOld + "_sum":
			s.attemptSeconds += value
		case familyQueuedEntities:
			s.hasEntities = true
			s.entities[labels["queue"]+"/"+labels["type"]] += value
		case familyVictims + "_count", familyGroupVictims + "_count":
			s.preemptions += value
		case familyPreemptionsDone:
			s.preemptionsDone += value
		case familyFeature:
			s.gates[labels["name"]] = value == 1
		}
	}
	if err := sc.Err(); err != nil {
		return sample{}, fmt.Errorf("reading the metrics: %w", err)
	}
	if !sawPending {
		return sample{}, errors.New("no scheduler_pending_pods in the metrics: is this a kube-scheduler?")
	}
	return s, nil
}
