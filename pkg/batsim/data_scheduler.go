package batsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// The data of the events the decision process sends. Batsim rejects members
// it does not know in several of them, so decodeData does in all of them.

// ExecuteJob starts a job on an allocation.
type ExecuteJob struct {
	JobID JobID
	Alloc IntervalSet // the resources, never empty
	// Mapping maps executors (MPI ranks, 0..n-1) to indexes in Alloc; only
	// SMPI profiles use it.
	Mapping map[int]int
	// StorageMapping maps the storage labels of the job's profile to
	// resource ids.
	StorageMapping map[string]int
}

func (ExecuteJob) EventType() EventType { return TypeExecuteJob }

// decodeIntOrString reads an integer, written as a number or a string.
func decodeIntOrString(raw json.RawMessage) (int, error) {
	if kindOf(raw) != "string" {
		return decodeInt(raw)
	}
	s, err := decodeString(raw)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return n, nil
}

func decodeMapping(raw json.RawMessage) (map[int]int, error) {
	byKey, err := mapOf[string](decodeIntOrString)(raw)
	if err != nil || byKey == nil {
		return nil, err
	}
	m := make(map[int]int, len(byKey))
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		executor, err := strconv.Atoi(k)
		if err != nil {
			return nil, inField(k, fmt.Errorf("executor %q is not an integer", k))
		}
		m[executor] = byKey[k]
	}
	return m, nil
}

func decodeExecuteJob(f *fields) EventData {
	return ExecuteJob{
		JobID:          req(f, "job_id", decodeJobID),
		Alloc:          req(f, "alloc", decodeIntervalSet),
		Mapping:        opt(f, "mapping", decodeMapping),
		StorageMapping: opt(f, "storage_mapping", mapOf[string](decodeInt)),
	}
}

func (d ExecuteJob) validate(Direction) error {
	if err := validateJobID(d.JobID); err != nil {
		return err
	}
	if d.Alloc.IsEmpty() {
		return inField("alloc", errors.New("empty allocation"))
	}
	n := d.Alloc.Len()
	for executor := range len(d.Mapping) {
		index, ok := d.Mapping[executor]
		switch {
		case !ok:
			return inField("mapping", fmt.Errorf("no resource for executor %d of %d", executor, len(d.Mapping)))
		case index < 0 || index >= n:
			return inField("mapping", inField(strconv.Itoa(executor), fmt.Errorf("index %d outside the allocation of %d resources", index, n)))
		}
	}
	for _, label := range slices.Sorted(maps.Keys(d.StorageMapping)) {
		if id := d.StorageMapping[label]; id < 0 || id > MaxResourceID {
			return inField("storage_mapping", inField(label, fmt.Errorf("resource id %d out of range [0, %d]", id, MaxResourceID)))
		}
	}
	return nil
}

func (d ExecuteJob) encodeMembers(w *writer) {
	w.stringField("job_id", string(d.JobID))
	w.setField("alloc", d.Alloc)
	if len(d.Mapping) > 0 {
		w.key("mapping")
		w.open('{')
		for _, executor := range slices.Sorted(maps.Keys(d.Mapping)) {
			w.intField(strconv.Itoa(executor), d.Mapping[executor])
		}
		w.close('}')
	}
	if len(d.StorageMapping) > 0 {
		w.key("storage_mapping")
		w.open('{')
		for _, label := range slices.Sorted(maps.Keys(d.StorageMapping)) {
			w.intField(label, d.StorageMapping[label])
		}
		w.close('}')
	}
}

// RejectJob rejects a submitted job; it will not run.
type RejectJob struct {
	JobID JobID
}

func (RejectJob) EventType() EventType { return TypeRejectJob }

func decodeRejectJob(f *fields) EventData {
	return RejectJob{JobID: req(f, "job_id", decodeJobID)}
}

func (d RejectJob) validate(Direction) error {
	return validateJobID(d.JobID)
}

func (d RejectJob) encodeMembers(w *writer) {
	w.stringField("job_id", string(d.JobID))
}

// KillJob kills running jobs; Batsim answers with one JOB_KILLED once they
// have all stopped.
type KillJob struct {
	JobIDs []JobID
}

func (KillJob) EventType() EventType { return TypeKillJob }

func decodeKillJob(f *fields) EventData {
	return KillJob{JobIDs: req(f, "job_ids", listOf(decodeJobID))}
}

func (d KillJob) validate(Direction) error { return validateJobIDs(d.JobIDs) }

func (d KillJob) encodeMembers(w *writer) {
	w.key("job_ids")
	w.jobIDs(d.JobIDs)
}

// CallMeLater asks Batsim for a REQUESTED_CALL at time At.
type CallMeLater struct {
	At float64 // absolute simulated time, seconds ("timestamp" in JSON)
}

func (CallMeLater) EventType() EventType { return TypeCallMeLater }

func decodeCallMeLater(f *fields) EventData {
	return CallMeLater{At: req(f, "timestamp", decodeFloat)}
}

func (d CallMeLater) validate(Direction) error {
	if d.At < 0 {
		return inField("timestamp", fmt.Errorf("negative time %v", d.At))
	}
	return nil
}

func (d CallMeLater) encodeMembers(w *writer) {
	w.floatField("timestamp", d.At)
}

// RegisterJob submits a job from the decision process (Batsim must run with
// --enable-dynamic-jobs). Batsim 4.2.1 needs the job's subtime.
type RegisterJob struct {
	JobID JobID
	Job   Job
}

func (RegisterJob) EventType() EventType { return TypeRegisterJob }

func decodeRegisterJob(f *fields) EventData {
	return RegisterJob{
		JobID: req(f, "job_id", decodeJobID),
		Job:   req(f, "job", decodeCompleteJob),
	}
}

func (d RegisterJob) validate(Direction) error {
	if err := validateJobID(d.JobID); err != nil {
		return err
	}
	return inField("job", d.Job.validate(true))
}

func (d RegisterJob) encodeMembers(w *writer) {
	w.stringField("job_id", string(d.JobID))
	w.key("job")
	d.Job.encode(w)
}

// RegisterProfile adds a profile to a workload (dynamic jobs).
type RegisterProfile struct {
	WorkloadName string
	ProfileName  string
	Profile      Profile
}

func (RegisterProfile) EventType() EventType { return TypeRegisterProfile }

func decodeRegisterProfile(f *fields) EventData {
	return RegisterProfile{
		WorkloadName: req(f, "workload_name", decodeString),
		ProfileName:  req(f, "profile_name", decodeString),
		Profile:      req(f, "profile", decodeProfile),
	}
}

func (d RegisterProfile) validate(Direction) error {
	switch {
	case d.WorkloadName == "":
		return inField("workload_name", errEmpty)
	case d.ProfileName == "":
		return inField("profile_name", errEmpty)
	}
	return inField("profile", d.Profile.validate())
}

func (d RegisterProfile) encodeMembers(w *writer) {
	w.stringField("workload_name", d.WorkloadName)
	w.stringField("profile_name", d.ProfileName)
	w.key("profile")
	d.Profile.encode(w)
}

// SetResourceState switches resources to a power state; Batsim answers with
// RESOURCE_STATE_CHANGED.
type SetResourceState struct {
	Resources IntervalSet
	State     string // the power state number, as a string ("42")
}

func (SetResourceState) EventType() EventType { return TypeSetResourceState }

// decodeSetResourceState returns its concrete type, which
// RESOURCE_STATE_CHANGED shares.
func decodeSetResourceState(f *fields) SetResourceState {
	return SetResourceState{
		Resources: req(f, "resources", decodeIntervalSet),
		State:     req(f, "state", decodeString),
	}
}

func (d SetResourceState) validate(Direction) error {
	if d.Resources.IsEmpty() {
		return inField("resources", errEmpty)
	}
	if _, err := strconv.Atoi(d.State); err != nil {
		return inField("state", fmt.Errorf("%q is not a power state number", d.State))
	}
	return nil
}

func (d SetResourceState) encodeMembers(w *writer) {
	w.setField("resources", d.Resources)
	w.stringField("state", d.State)
}

// SetJobMetadata sets the string written in the metadata column of
// _jobs.csv for a job.
type SetJobMetadata struct {
	JobID    JobID
	Metadata string
}

func (SetJobMetadata) EventType() EventType { return TypeSetJobMetadata }

func decodeSetJobMetadata(f *fields) EventData {
	return SetJobMetadata{
		JobID:    req(f, "job_id", decodeJobID),
		Metadata: req(f, "metadata", decodeString),
	}
}

func (d SetJobMetadata) validate(Direction) error {
	return validateJobID(d.JobID)
}

func (d SetJobMetadata) encodeMembers(w *writer) {
	w.stringField("job_id", string(d.JobID))
	w.stringField("metadata", d.Metadata)
}

// ChangeJobState sets the state of a job.
type ChangeJobState struct {
	JobID      JobID
	JobState   JobState
	KillReason string // optional
}

func (ChangeJobState) EventType() EventType { return TypeChangeJobState }

func decodeChangeJobState(f *fields) EventData {
	return ChangeJobState{
		JobID:      req(f, "job_id", decodeJobID),
		JobState:   JobState(req(f, "job_state", decodeString)),
		KillReason: opt(f, "kill_reason", decodeString),
	}
}

func (d ChangeJobState) validate(Direction) error {
	if err := validateJobID(d.JobID); err != nil {
		return err
	}
	switch d.JobState {
	case JobStateNotSubmitted, JobStateRunning, JobStateCompletedSuccessfully, JobStateCompletedWalltimeReached, JobStateCompletedKilled, JobStateRejected:
		return nil
	}
	return inField("job_state", fmt.Errorf("%q is not a state Batsim accepts here", d.JobState))
}

func (d ChangeJobState) encodeMembers(w *writer) {
	w.stringField("job_id", string(d.JobID))
	w.stringField("job_state", string(d.JobState))
	if d.KillReason != "" {
		w.stringField("kill_reason", d.KillReason)
	}
}
