package engine

import "encoding/json"

// Message is one request of the engine to the decision process, as Batsim's
// {"now", "events"}: every event's timestamp is <= Now.
type Message struct {
	Now    float64
	Events []Event
}

// Event is what the engine tells the decision process. Its concrete type is
// one of SimulationBegins, JobSubmitted, JobCompleted, JobKilled,
// RequestedCall, Notification and SimulationEnds, each the Batsim 4.x
// protocol event its Type names.
type Event interface {
	// Type is the protocol name of the event, e.g. "JOB_SUBMITTED".
	Type() string
	// Time is the event's timestamp, in simulated seconds.
	Time() float64
	isEvent()
}

// JobState is the final state of a job (JOB_COMPLETED's job_state).
type JobState string

// The final states of a job.
const (
	CompletedSuccessfully    JobState = "COMPLETED_SUCCESSFULLY"
	CompletedFailed          JobState = "COMPLETED_FAILED"
	CompletedWalltimeReached JobState = "COMPLETED_WALLTIME_REACHED"
	CompletedKilled          JobState = "COMPLETED_KILLED"
	Rejected                 JobState = "REJECTED"
)

// NotifyKind is the type of a NOTIFY event, in either direction.
type NotifyKind string

// The NOTIFY types the engine sends and understands.
const (
	// NoMoreStaticJobToSubmit: every job of the workloads has been submitted.
	NoMoreStaticJobToSubmit NotifyKind = "no_more_static_job_to_submit"
	// NoMoreExternalEventToOccur: every event of the events files has
	// occurred.
	NoMoreExternalEventToOccur NotifyKind = "no_more_external_event_to_occur"
	// EventMachineUnavailable: the machines of Resources became unavailable
	// (an external event); the jobs running on them go on.
	EventMachineUnavailable NotifyKind = "event_machine_unavailable"
	// EventMachineAvailable: the machines of Resources became available
	// again (an external event).
	EventMachineAvailable NotifyKind = "event_machine_available"
	// RegistrationFinished: the decision process will register no more jobs.
	RegistrationFinished NotifyKind = "registration_finished"
	// ContinueRegistration: it will register jobs again after all.
	ContinueRegistration NotifyKind = "continue_registration"
)

// SimulationBegins opens the simulation: SIMULATION_BEGINS. Its data
// (nb_resources, compute_resources with their properties and zone
// properties, storage_resources, workloads, profiles, config) comes from
// Platform, Workloads and the flags.
type SimulationBegins struct {
	Timestamp float64
	Platform  *Platform
	// Workloads are the static workloads, in the order given to New.
	Workloads []*Workload
	// The Batsim options the run mirrors (allow_compute_sharing,
	// config.dynamic-jobs-enabled, config.dynamic-jobs-acknowledged).
	ComputeSharing         bool
	DynamicJobs            bool
	AcknowledgeDynamicJobs bool
}

// JobSubmitted tells that a job can be scheduled: JOB_SUBMITTED. The job's
// JSON is Job.Description(); Profile is there for
// --forward-profiles-on-submission.
type JobSubmitted struct {
	Timestamp float64
	Job       *Job
	Profile   *Profile
}

// JobCompleted tells that a job has ended: JOB_COMPLETED.
type JobCompleted struct {
	Timestamp float64
	JobID     string
	State     JobState
	// ReturnCode is the profile's ret (0 on success), -1 at the walltime,
	// and for a job killed by KILL_JOB -2 if it was computing or -1 if it
	// was in a delay, as Batsim 4.2.1 reports them.
	ReturnCode int
	// Alloc are the resource ids the job ran on, sorted.
	Alloc []int
}

// JobKilled acknowledges a KILL_JOB: JOB_KILLED.
type JobKilled struct {
	Timestamp float64
	JobIDs    []string
	// Progress of the jobs that were running, by job id.
	Progress map[string]*Progress
}

// Progress is how far a killed job had gone: an entry of JOB_KILLED's
// job_progress ({"profile_name", "progress"} for a delay or a computation,
// {"profile_name", "current_task_index", "current_task"} for a composed
// profile).
type Progress struct {
	// Profile is the profile's name.
	Profile string
	// Progress is the fraction of a delay or computation done, in [0, 1]
	// (for composed profiles, see CurrentTask).
	Progress float64
	// CurrentTaskIndex and CurrentTask describe the running step of a
	// composed profile (CurrentTask is nil for other profiles).
	CurrentTaskIndex int
	CurrentTask      *Progress
}

// RequestedCall is the wake-up asked by a CALL_ME_LATER: REQUESTED_CALL.
type RequestedCall struct {
	Timestamp float64
}

// Notification is a NOTIFY from the engine: no_more_static_job_to_submit,
// no_more_external_event_to_occur, event_machine_unavailable and
// event_machine_available, or a generic external event, whose Kind is its
// type.
type Notification struct {
	Timestamp float64
	Kind      NotifyKind
	// Resources are the machines of EventMachineUnavailable and
	// EventMachineAvailable (resource ids, sorted).
	Resources []int
	// Event is a generic external event's JSON object, as written in its
	// file (its type is Kind): the NOTIFY's data.
	Event json.RawMessage
}

// SimulationEnds closes the simulation: SIMULATION_ENDS. Answer it with an
// Apply without decisions.
type SimulationEnds struct {
	Timestamp float64
}

func (SimulationBegins) Type() string { return "SIMULATION_BEGINS" }
func (JobSubmitted) Type() string     { return "JOB_SUBMITTED" }
func (JobCompleted) Type() string     { return "JOB_COMPLETED" }
func (JobKilled) Type() string        { return "JOB_KILLED" }
func (RequestedCall) Type() string    { return "REQUESTED_CALL" }
func (Notification) Type() string     { return "NOTIFY" }
func (SimulationEnds) Type() string   { return "SIMULATION_ENDS" }

func (e SimulationBegins) Time() float64 { return e.Timestamp }
func (e JobSubmitted) Time() float64     { return e.Timestamp }
func (e JobCompleted) Time() float64     { return e.Timestamp }
func (e JobKilled) Time() float64        { return e.Timestamp }
func (e RequestedCall) Time() float64    { return e.Timestamp }
func (e Notification) Time() float64     { return e.Timestamp }
func (e SimulationEnds) Time() float64   { return e.Timestamp }

func (SimulationBegins) isEvent() {}
func (JobSubmitted) isEvent()     {}
func (JobCompleted) isEvent()     {}
func (JobKilled) isEvent()        {}
func (RequestedCall) isEvent()    {}
func (Notification) isEvent()     {}
func (SimulationEnds) isEvent()   {}
