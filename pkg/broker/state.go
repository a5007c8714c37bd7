package broker

import (
	"sync/atomic"

	"github.com/batkube/batkube/pkg/batsim"
)

type jobPhase int

const (
	jobPending  jobPhase = iota // submitted, not all pods bound
	jobRunning                  // EXECUTE_JOB sent
	jobFinished                 // completed, rejected or killed
)

// podRef names a pod.
type podRef struct{ namespace, name string }

// job is what the broker tracks of one Batsim job.
type job struct {
	id           batsim.JobID
	pods         []podRef
	nodes        map[podRef]string // node of each bound pod
	phase        jobPhase
	pendingSince float64
	killSent     bool
	rejected     bool
	dynamic      bool
}

// state is the broker's view of the simulation. Only the broker's loop
// touches it, except the atomics read by admission.
type state struct {
	jobs     map[batsim.JobID]*job
	byPod    map[podRef]*job
	nodes    map[string]int // node name → Batsim resource id
	nodeByID map[int]string // Batsim resource id → node name
	// unavailable holds the nodes of machines Batsim said are unavailable
	// (external events): cordoned, and never given a job.
	unavailable map[string]bool
	busy        map[string]int // node name → running jobs (for runs without compute sharing)
	profiles    map[string]map[string]batsim.Profile

	// removing holds the pods the broker deletes itself, whose DELETED
	// events it must not take for a user's deletion.
	removing map[podRef]bool
	// finished pods waiting for their removal time (simulated seconds).
	finished []finishedPod

	computeSharing bool
	dynamicAck     bool
	begun          atomic.Bool
	dynamicEnabled atomic.Bool
	noMoreJobs     bool
	registrationOK atomic.Bool // NOTIFY registration_finished sent
	profilesSent   map[string]bool
	nextCall       float64 // earliest CALL_ME_LATER not yet answered; 0 if none

	submitted, running, done int
	pending                  int // jobs in jobPending
}

type finishedPod struct {
	ref podRef
	at  float64
}

func newState() *state {
	return &state{
		jobs:         map[batsim.JobID]*job{},
		byPod:        map[podRef]*job{},
		nodes:        map[string]int{},
		nodeByID:     map[int]string{},
		unavailable:  map[string]bool{},
		busy:         map[string]int{},
		removing:     map[podRef]bool{},
		profilesSent: map[string]bool{},
	}
}

func (s *state) pendingJobs() []*job {
	if s.pending == 0 {
		return nil
	}
	var out []*job
	for _, j := range s.jobs {
		if j.phase == jobPending {
			out = append(out, j)
		}
	}
	return out
}

// hasPending is asked at every pod event while the scheduler settles, so it
// reads a count rather than scanning the jobs.
func (s *state) hasPending() bool { return s.pending > 0 }

// add tracks a new, pending job.
func (s *state) add(j *job) {
	j.phase = jobPending
	s.jobs[j.id] = j
	for _, p := range j.pods {
		s.byPod[p] = j
	}
	s.pending++
	s.submitted++
}

// setPhase moves a job to phase p, keeping the pending count.
func (s *state) setPhase(j *job, p jobPhase) {
	if j.phase == jobPending {
		s.pending--
	}
	if p == jobPending {
		s.pending++
	}
	j.phase = p
}

func (s *state) progress(now float64, steps int) Progress {
	total := -1
	if s.noMoreJobs {
		total = s.submitted
	}
	return Progress{Now: now, Submitted: s.submitted, Pending: s.pending, Running: s.running, Done: s.done, Total: total, Steps: steps}
}

// forget drops a finished job once its pods are gone.
func (s *state) forget(j *job) {
	s.setPhase(j, jobFinished)
	for _, p := range j.pods {
		delete(s.byPod, p)
	}
	delete(s.jobs, j.id)
}
