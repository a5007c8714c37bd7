package engine

import "encoding/json"

// Decision is what the decision process asks of the engine. Its concrete
// type is one of ExecuteJob, RejectJob, KillJob, CallMeLater, RegisterJob,
// RegisterProfile, Notify and SetJobMetadata, each the Batsim 4.x protocol
// event its Type names.
type Decision interface {
	// Type is the protocol name of the decision, e.g. "EXECUTE_JOB".
	Type() string
	// Time is the decision's timestamp: when it takes effect.
	Time() float64
	// applyTo applies the decision to e at its current time (decide.go).
	applyTo(e *Engine) error
}

// ExecuteJob starts a submitted job on resources: EXECUTE_JOB.
type ExecuteJob struct {
	Timestamp float64
	JobID     string
	// Alloc are compute resource ids (the protocol's interval set).
	Alloc []int
	// Mapping, if any, gives for each executor the index of its resource in
	// the sorted Alloc (the protocol's mapping, executor i -> Mapping[i]).
	Mapping []int
}

// RejectJob drops a submitted job that has not started: REJECT_JOB.
type RejectJob struct {
	Timestamp float64
	JobID     string
}

// KillJob kills running jobs: KILL_JOB, answered by JOB_KILLED.
type KillJob struct {
	Timestamp float64
	JobIDs    []string
}

// CallMeLater asks for a REQUESTED_CALL at When (absolute, > now).
type CallMeLater struct {
	Timestamp float64
	When      float64
}

// RegisterJob adds a job (dynamic jobs): REGISTER_JOB. Job is the job's
// JSON object; it needs a subtime, and its profile must exist.
type RegisterJob struct {
	Timestamp float64
	JobID     string
	Job       json.RawMessage
}

// RegisterProfile adds a profile to a workload, created if needed (dynamic
// jobs): REGISTER_PROFILE.
type RegisterProfile struct {
	Timestamp float64
	Workload  string
	Name      string
	Profile   json.RawMessage
}

// Notify is a NOTIFY from the decision process: RegistrationFinished or
// ContinueRegistration.
type Notify struct {
	Timestamp float64
	Kind      NotifyKind
}

// SetJobMetadata sets the metadata column of a job in the jobs output:
// SET_JOB_METADATA.
type SetJobMetadata struct {
	Timestamp float64
	JobID     string
	Metadata  string
}

func (ExecuteJob) Type() string      { return "EXECUTE_JOB" }
func (RejectJob) Type() string       { return "REJECT_JOB" }
func (KillJob) Type() string         { return "KILL_JOB" }
func (CallMeLater) Type() string     { return "CALL_ME_LATER" }
func (RegisterJob) Type() string     { return "REGISTER_JOB" }
func (RegisterProfile) Type() string { return "REGISTER_PROFILE" }
func (Notify) Type() string          { return "NOTIFY" }
func (SetJobMetadata) Type() string  { return "SET_JOB_METADATA" }

func (d ExecuteJob) Time() float64      { return d.Timestamp }
func (d RejectJob) Time() float64       { return d.Timestamp }
func (d KillJob) Time() float64         { return d.Timestamp }
func (d CallMeLater) Time() float64     { return d.Timestamp }
func (d RegisterJob) Time() float64     { return d.Timestamp }
func (d RegisterProfile) Time() float64 { return d.Timestamp }
func (d Notify) Time() float64          { return d.Timestamp }
func (d SetJobMetadata) Time() float64  { return d.Timestamp }
