package broker

import (
	"io"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/batkube/batkube/pkg/batsim"
)

// The controllers' log (_controllers.csv): one row per controller object
// that owned pods during the run (a Job, a ReplicaSet...), written at the
// end: when it was first seen and its first pod started, when its last pod
// ended, how many pods it had and how they ended, and its final state (a
// Job's Complete or Failed condition, with its reason). Times are
// simulated seconds; an empty cell is an instant that did not happen.

var controllersColumns = columns[*ownerRecord]{
	{"kind", func(r *ownerRecord) string { return r.kind }},
	{"namespace", func(r *ownerRecord) string { return r.namespace }},
	{"name", func(r *ownerRecord) string { return r.name }},
	{"created", func(r *ownerRecord) string { return seconds(r.created) }},
	{"first_start", func(r *ownerRecord) string { return seconds(r.firstStart) }},
	{"last_end", func(r *ownerRecord) string { return seconds(r.lastEnd) }},
	{"pods", func(r *ownerRecord) string { return strconv.Itoa(r.pods) }},
	{"succeeded", func(r *ownerRecord) string { return strconv.Itoa(r.succeeded) }},
	{"failed", func(r *ownerRecord) string { return strconv.Itoa(r.failed) }},
	{"killed", func(r *ownerRecord) string { return strconv.Itoa(r.killed) }},
	{"final_state", func(r *ownerRecord) string { return r.state }},
	{"reason", func(r *ownerRecord) string { return r.reason }},
}

// ownerRecord is what the log gathers of one controller object.
type ownerRecord struct {
	kind, namespace, name        string
	created, firstStart, lastEnd float64 // -1: not yet
	pods, succeeded, failed      int
	killed                       int
	state, reason                string
}

// recordLog is a CSV log kept as records by uid, written at the end
// (writeRecords).
type recordLog[R any] struct {
	w       io.Writer
	records map[types.UID]*R
}

func newRecordLog[R any](w io.Writer) recordLog[R] {
	return recordLog[R]{w: w, records: map[types.UID]*R{}}
}

// ownerLog gathers the records; nil when the log is off.
type ownerLog struct{ recordLog[ownerRecord] }

func newOwnerLog(w io.Writer) *ownerLog {
	if w == nil {
		return nil
	}
	return &ownerLog{newRecordLog[ownerRecord](w)}
}

func (l *ownerLog) record(uid types.UID, kind, namespace, name string, now float64) *ownerRecord {
	r := l.records[uid]
	if r == nil {
		r = &ownerRecord{kind: kind, namespace: namespace, name: name, created: now, firstStart: -1, lastEnd: -1}
		l.records[uid] = r
	}
	return r
}

// job records a Job's state.
func (l *ownerLog) job(job *batchv1.Job, now float64) {
	if l == nil || job.Namespace == probeNamespace {
		return
	}
	r := l.record(job.UID, "Job", job.Namespace, job.Name, now)
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			r.state, r.reason = string(c.Type), c.Reason
		}
	}
}

// podCreated records a pod of a controller, created now, that became job
// j: the job's start and end are the pod's.
func (l *ownerLog) podCreated(j *job, pod *corev1.Pod, now float64) {
	if l == nil {
		return
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil {
		return
	}
	r := l.record(owner.UID, owner.Kind, pod.Namespace, owner.Name, now)
	r.pods++
	j.owner = owner.UID
}

// started records the start of job j.
func (l *ownerLog) started(j *job) {
	if r := l.of(j); r != nil && r.firstStart < 0 {
		r.firstStart = j.startedAt
	}
}

// ended records the end of job j: how Batsim ended it (a job rejected, or
// killed before it started, counts as killed).
func (l *ownerLog) ended(j *job, state batsim.JobState) {
	r := l.of(j)
	if r == nil || j.ownerEnded {
		return
	}
	j.ownerEnded = true
	switch state {
	case batsim.JobStateCompletedSuccessfully:
		r.succeeded++
	case batsim.JobStateCompletedFailed, batsim.JobStateCompletedWalltimeReached:
		r.failed++
	default:
		r.killed++
	}
	r.lastEnd = max(r.lastEnd, j.endedAt)
}

func (l *ownerLog) of(j *job) *ownerRecord {
	if l == nil || j.owner == "" {
		return nil
	}
	return l.records[j.owner]
}

// close writes the log.
func (l *ownerLog) close() error {
	if l == nil {
		return nil
	}
	return writeRecords(l.w, controllersColumns, l.records, func(a, b *ownerRecord) int {
		return byInstantThenName(a.created, b.created, [2]string{a.kind, b.kind}, [2]string{a.namespace, b.namespace}, [2]string{a.name, b.name})
	})
}
