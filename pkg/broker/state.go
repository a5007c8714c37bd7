package broker

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/batkube/batkube/pkg/batsim"
)

type jobPhase int

const (
	jobPending  jobPhase = iota // submitted, not all pods bound and admitted
	jobRunning                  // EXECUTE_JOB sent
	jobFinished                 // completed, rejected or killed
)

// podRef names a pod.
type podRef struct{ namespace, name string }

func (r podRef) String() string { return r.namespace + "/" + r.name }

// job is what the broker tracks of one Batsim job.
type job struct {
	id    batsim.JobID
	pods  []podRef
	nodes map[podRef]string // node of each bound and admitted pod
	// reserved is what each admitted pod reserved on its node.
	reserved map[podRef]map[corev1.ResourceName]int64
	phase    jobPhase
	// pendingSince is the simulated instant the job started waiting.
	pendingSince float64
	// gone holds the pods removed so far.
	gone     map[podRef]bool
	killSent bool
	// sleepable is the allocation of a started job while it may be on a
	// pool host that sleeps when free (poolpower.go); nil otherwise.
	sleepable []int
	// lost: killed because its machine became unavailable; its pods end
	// Failed (stageLost) rather than deleted.
	lost     bool
	rejected bool
	dynamic  bool
	// owned: its pod has a controller (a Job, a ReplicaSet...) or
	// finalizers; finished, it stays for its controller or the garbage
	// collector to delete, as in a real cluster.
	owned bool
	// service: a controller's pod that runs until deleted (endServices).
	service bool
	// owner is the controller of its pod (a dynamic job's), for the
	// controllers' log.
	owner      types.UID
	ownerEnded bool // its end is in the controllers' log
	// spec is the job as submitted (for a resubmission after preemption);
	// origin and attempt name the first job of resubmitted work and which
	// resubmission this is (0: the first job).
	spec      *batsim.Job
	origin    batsim.JobID
	attempt   int
	preempted bool
	// For the pods' log: when the job started and ended (-1: not yet), how
	// Batsim ended it, why the kubelet refused a pod, and each pod's times
	// (nil unless the log is on).
	startedAt, endedAt float64
	endState           batsim.JobState
	refusal            string
	times              map[podRef]*podTimes
}

// jobs is the broker's view of the jobs of the simulation.
type jobs struct {
	byID  map[batsim.JobID]*job
	byPod map[podRef]*job
	// removing holds the pods the broker deletes itself, whose DELETED
	// events it must not take for a user's deletion.
	removing map[podRef]bool
	// finished pods waiting for their removal time (simulated seconds).
	finished []finishedPod

	submitted, running, done int
	pending                  int // jobs in jobPending
}

type finishedPod struct {
	ref podRef
	at  float64
}

func newJobs() *jobs {
	return &jobs{byID: map[batsim.JobID]*job{}, byPod: map[podRef]*job{}, removing: map[podRef]bool{}}
}

// pendingJobs returns the jobs waiting for their pods to be bound, by
// submission instant then id (so that decisions about them come in a
// reproducible order). It scans every job: only for when the pending
// timeout may apply.
func (s *jobs) pendingJobs() []*job {
	if s.pending == 0 {
		return nil
	}
	var out []*job
	for _, j := range s.byID {
		if j.phase == jobPending {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b *job) int {
		return cmp.Or(cmp.Compare(a.pendingSince, b.pendingSince), cmp.Compare(a.id, b.id))
	})
	return out
}

// sortedByID returns the jobs not finished, by id (a reproducible order
// for decisions about several of them). It scans every job: for rare
// events only.
func (s *jobs) sortedByID() []*job {
	out := make([]*job, 0, s.pending+s.running)
	for _, j := range s.byID {
		if j.phase != jobFinished {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b *job) int { return cmp.Compare(a.id, b.id) })
	return out
}

// add tracks a new, pending job.
func (s *jobs) add(j *job) {
	j.phase = jobPending
	j.startedAt, j.endedAt = -1, -1
	if j.nodes == nil {
		j.nodes = map[podRef]string{}
		j.reserved = map[podRef]map[corev1.ResourceName]int64{}
	}
	s.byID[j.id] = j
	for _, p := range j.pods {
		s.byPod[p] = j
	}
	s.pending++
	s.submitted++
}

// setPhase moves a job to phase p, keeping the counts.
func (s *jobs) setPhase(j *job, p jobPhase) {
	switch {
	case j.phase == p:
		return
	case j.phase == jobPending:
		s.pending--
	case j.phase == jobRunning:
		s.running--
	}
	switch p {
	case jobPending:
		s.pending++
	case jobRunning:
		s.running++
	case jobFinished:
		s.done++
	}
	j.phase = p
}

// forget drops a finished job once its pods are gone.
// sorted returns the jobs known, by submission instant then id.
func (s *jobs) sorted() []*job {
	out := make([]*job, 0, len(s.byID))
	for _, j := range s.byID {
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b *job) int {
		return cmp.Or(cmp.Compare(a.pendingSince, b.pendingSince), cmp.Compare(a.id, b.id))
	})
	return out
}

func (s *jobs) forget(j *job) {
	s.setPhase(j, jobFinished)
	for _, p := range j.pods {
		delete(s.byPod, p)
	}
	delete(s.byID, j.id)
}
