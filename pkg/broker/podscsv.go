package broker

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/store"
)

// The pods' log: one row per pod of the simulation (_pods.csv), what
// Kubernetes saw of each job, beside Batsim's _jobs.csv. A row is written
// when its job is forgotten (its pods gone), or at the end of the run for
// jobs still known, so memory does not grow with the run's length.

// podRow is what a row of _pods.csv says: a pod of a job.
type podRow struct {
	job           *job
	ref           podRef
	times         *podTimes
	phase, reason string
}

// podsColumns are the columns of _pods.csv. Times are simulated seconds
// (Batsim's clock); an empty cell is an instant that did not happen.
var podsColumns = columns[podRow]{
	{"job_id", func(r podRow) string { return string(r.job.id) }},
	{"namespace", func(r podRow) string { return r.ref.namespace }},
	{"pod", func(r podRow) string { return r.ref.name }},
	{"node", func(r podRow) string { return r.times.node }},
	{"created", func(r podRow) string { return seconds(r.job.pendingSince) }},
	{"first_attempt", func(r podRow) string { return seconds(r.times.firstAttempt) }},
	{"bound", func(r podRow) string { return seconds(r.times.bound) }},
	{"started", func(r podRow) string { return seconds(r.job.startedAt) }},
	{"finished", func(r podRow) string { return seconds(r.job.endedAt) }},
	{"phase", func(r podRow) string { return r.phase }},
	{"reason", func(r podRow) string { return r.reason }},
	{"failed_scheduling", func(r podRow) string {
		var failed int32
		for _, n := range r.times.failedScheduling {
			failed += n
		}
		return strconv.Itoa(int(failed))
	}},
	{"preempted", func(r podRow) string { return strconv.FormatBool(r.job.preempted) }},
	{"devices", func(r podRow) string { return r.times.devices }},
}

// podTimes is what the log gathers of one pod while its job lives.
type podTimes struct {
	firstAttempt, bound float64 // -1: not yet
	node                string
	// devices are the devices its resource claims held when it started
	// (podDevices).
	devices string
	// failedScheduling counts the scheduler's FailedScheduling events about
	// the pod, by event name (an Event aggregates repeats in its count).
	failedScheduling map[string]int32
}

// podLog writes _pods.csv; a nil *podLog does nothing.
type podLog struct {
	w      *csv.Writer
	events *store.Subscription
	buf    []store.Change
	err    error
}

func newPodLog(w io.Writer, st *store.Store) *podLog {
	if w == nil {
		return nil
	}
	l := &podLog{w: csv.NewWriter(w), events: st.Subscribe(eventsGVR.GroupResource())}
	l.write(podsColumns.header())
	return l
}

func (l *podLog) write(row []string) {
	if l.err == nil {
		l.err = l.w.Write(row)
	}
}

// created starts the records of a job's pods.
func (l *podLog) created(j *job) {
	if l == nil {
		return
	}
	j.times = make(map[podRef]*podTimes, len(j.pods))
	for _, ref := range j.pods {
		j.times[ref] = &podTimes{firstAttempt: -1, bound: -1}
	}
}

// observe records the first scheduling attempt the API shows (the
// scheduler's PodScheduled condition or a binding) and the binding.
func (l *podLog) observe(j *job, pod *corev1.Pod, now float64) {
	if l == nil || j == nil {
		return
	}
	t := j.times[podRef{pod.Namespace, pod.Name}]
	if t == nil {
		return
	}
	if t.firstAttempt < 0 && (pod.Spec.NodeName != "" || hasCondition(pod, corev1.PodScheduled)) {
		t.firstAttempt = now
	}
	if t.bound < 0 && pod.Spec.NodeName != "" {
		t.bound, t.node = now, pod.Spec.NodeName
	}
}

// started records the devices a job's pods hold as the job starts.
func (l *podLog) started(r *run, j *job) {
	if l == nil || j.times == nil {
		return
	}
	for _, ref := range j.pods {
		if t := j.times[ref]; t != nil {
			t.devices = r.podDevices(ref)
		}
	}
}

// takeEvents counts the FailedScheduling events written since the last
// call, for the pods still known.
func (l *podLog) takeEvents(jobs *jobs) {
	if l == nil {
		return
	}
	l.buf = l.events.Take(l.buf[:0])
	for _, c := range l.buf {
		ev, ok := c.Object.Object().(*corev1.Event)
		if !ok || ev.Reason != "FailedScheduling" || ev.InvolvedObject.Kind != "Pod" {
			continue
		}
		ref := podRef{ev.InvolvedObject.Namespace, ev.InvolvedObject.Name}
		j := jobs.byPod[ref]
		if j == nil || j.times[ref] == nil {
			continue
		}
		count := max(ev.Count, 1)
		if ev.Series != nil {
			count = max(count, ev.Series.Count)
		}
		t := j.times[ref]
		if t.failedScheduling == nil {
			t.failedScheduling = map[string]int32{}
		}
		t.failedScheduling[ev.Name] = max(t.failedScheduling[ev.Name], count)
	}
	clear(l.buf)
}

// jobDone writes the rows of a job's pods.
func (l *podLog) jobDone(j *job) {
	if l == nil || j.times == nil {
		return
	}
	phase, reason := j.outcome()
	for _, ref := range j.pods {
		l.write(podsColumns.row(podRow{job: j, ref: ref, times: j.times[ref], phase: phase, reason: reason}))
	}
	j.times = nil
}

// close writes the rows of the jobs still known and flushes.
func (l *podLog) close(jobs *jobs) error {
	if l == nil {
		return nil
	}
	l.takeEvents(jobs)
	for _, j := range jobs.sorted() {
		l.jobDone(j)
	}
	l.events.Close()
	l.w.Flush()
	if l.err == nil {
		l.err = l.w.Error()
	}
	if l.err != nil {
		return fmt.Errorf("broker: writing the pods' log: %w", l.err)
	}
	return nil
}

// seconds formats a simulated instant as _jobs.csv does; -1 is empty.
func seconds(t float64) string {
	if t < 0 {
		return ""
	}
	return strconv.FormatFloat(t, 'f', 6, 64)
}

// outcome is the final phase of a job's pods and the reason a kubelet or
// controller would give: Succeeded, or Failed with DeadlineExceeded,
// Killed, Preempted, Rejected, OutOfcpu...; Pending or Running for jobs
// the simulation ended before they did.
func (j *job) outcome() (phase, reason string) {
	switch {
	case j.preempted:
		return string(corev1.PodFailed), "Preempted"
	case j.rejected:
		return string(corev1.PodFailed), cmp.Or(j.refusal, "Rejected")
	case j.lost:
		return string(corev1.PodFailed), stageLost.reason
	case j.endState == batsim.JobStateCompletedSuccessfully:
		return string(corev1.PodSucceeded), ""
	case j.endState == batsim.JobStateCompletedWalltimeReached:
		return string(corev1.PodFailed), "DeadlineExceeded"
	case j.endState == batsim.JobStateCompletedKilled:
		return string(corev1.PodFailed), "Killed"
	case j.endState != "":
		return string(corev1.PodFailed), "Error"
	case j.phase == jobRunning:
		return string(corev1.PodRunning), ""
	}
	return string(corev1.PodPending), ""
}
