package batsim

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// The data of the events Batsim sends.

// ResourceState is the state of a resource in SIMULATION_BEGINS.
type ResourceState string

// The resource states of Batsim.
const (
	ResourceSleeping     ResourceState = "sleeping"
	ResourceIdle         ResourceState = "idle"
	ResourceComputing    ResourceState = "computing"
	ResourceSwitchingOn  ResourceState = "switching_on"
	ResourceSwitchingOff ResourceState = "switching_off"
)

// Resource is a compute or storage resource (a SimGrid host).
type Resource struct {
	ID    int
	Name  string
	State ResourceState
	// Properties are the host's <prop>s, values unparsed. Batsim 4.2.1 adds
	// an empty "role" to every compute resource.
	Properties map[string]string
	// ZoneProperties are the <prop>s of the host's zone.
	ZoneProperties map[string]string
}

func decodeResource(raw json.RawMessage) (Resource, error) {
	return decodeObject(raw, func(f *fields) Resource {
		return Resource{
			ID:             req(f, "id", decodeInt),
			Name:           req(f, "name", decodeString),
			State:          ResourceState(opt(f, "state", decodeString)),
			Properties:     opt(f, "properties", mapOf[string](decodeString)),
			ZoneProperties: opt(f, "zone_properties", mapOf[string](decodeString)),
		}
	})
}

func (r Resource) encode(w *writer) {
	w.open('{')
	w.intField("id", r.ID)
	w.stringField("name", r.Name)
	w.stringField("state", string(r.State))
	w.key("properties")
	w.stringMap(r.Properties)
	w.key("zone_properties")
	w.stringMap(r.ZoneProperties)
	w.close('}')
}

// Config is the "config" object of SIMULATION_BEGINS: Batsim's options.
type Config struct {
	RedisEnabled                  bool   // redis-enabled
	RedisHostname                 string // redis-hostname
	RedisPort                     int    // redis-port
	RedisPrefix                   string // redis-prefix
	ProfilesForwardedOnSubmission bool   // profiles-forwarded-on-submission
	DynamicJobsEnabled            bool   // dynamic-jobs-enabled
	DynamicJobsAcknowledged       bool   // dynamic-jobs-acknowledged
	ProfileReuseEnabled           bool   // profile-reuse-enabled
	SchedConfig                   string // sched-config: the --sched-cfg string
	ForwardUnknownEvents          bool   // forward-unknown-events
	// Extra holds any other member, as compact JSON.
	Extra map[string]json.RawMessage
}

var configFields = []string{
	"redis-enabled", "redis-hostname", "redis-port", "redis-prefix",
	"profiles-forwarded-on-submission", "dynamic-jobs-enabled", "dynamic-jobs-acknowledged",
	"profile-reuse-enabled", "sched-config", "forward-unknown-events",
}

func decodeConfig(raw json.RawMessage) (Config, error) {
	return decodeObject(raw, func(f *fields) Config {
		return Config{
			RedisEnabled:                  opt(f, "redis-enabled", decodeBool),
			RedisHostname:                 opt(f, "redis-hostname", decodeString),
			RedisPort:                     opt(f, "redis-port", decodeInt),
			RedisPrefix:                   opt(f, "redis-prefix", decodeString),
			ProfilesForwardedOnSubmission: opt(f, "profiles-forwarded-on-submission", decodeBool),
			DynamicJobsEnabled:            opt(f, "dynamic-jobs-enabled", decodeBool),
			DynamicJobsAcknowledged:       opt(f, "dynamic-jobs-acknowledged", decodeBool),
			ProfileReuseEnabled:           opt(f, "profile-reuse-enabled", decodeBool),
			SchedConfig:                   opt(f, "sched-config", decodeString),
			ForwardUnknownEvents:          opt(f, "forward-unknown-events", decodeBool),
			Extra:                         f.rest(), // read last: the members not read above
		}
	})
}

func (c Config) encode(w *writer) {
	w.open('{')
	w.boolField("redis-enabled", c.RedisEnabled)
	w.stringField("redis-hostname", c.RedisHostname)
	w.intField("redis-port", c.RedisPort)
	w.stringField("redis-prefix", c.RedisPrefix)
	w.boolField("profiles-forwarded-on-submission", c.ProfilesForwardedOnSubmission)
	w.boolField("dynamic-jobs-enabled", c.DynamicJobsEnabled)
	w.boolField("dynamic-jobs-acknowledged", c.DynamicJobsAcknowledged)
	w.boolField("profile-reuse-enabled", c.ProfileReuseEnabled)
	w.stringField("sched-config", c.SchedConfig)
	w.boolField("forward-unknown-events", c.ForwardUnknownEvents)
	w.rawFields(c.Extra)
	w.close('}')
}

// SimulationBegins opens the simulation: the platform, Batsim's options and
// the workloads.
type SimulationBegins struct {
	NbResources         int // compute and storage resources
	NbComputeResources  int
	NbStorageResources  int
	AllowComputeSharing bool // --enable-compute-sharing: several jobs may share a host
	AllowStorageSharing bool
	Config              Config
	ComputeResources    []Resource
	StorageResources    []Resource
	Workloads           map[string]string             // workload name → file path
	Profiles            map[string]map[string]Profile // workload name → profile name → profile
}

func (SimulationBegins) EventType() EventType { return TypeSimulationBegins }

func decodeSimulationBegins(f *fields) EventData {
	return SimulationBegins{
		NbResources:         req(f, "nb_resources", decodeInt),
		NbComputeResources:  opt(f, "nb_compute_resources", decodeInt),
		NbStorageResources:  opt(f, "nb_storage_resources", decodeInt),
		AllowComputeSharing: opt(f, "allow_compute_sharing", decodeBool),
		AllowStorageSharing: opt(f, "allow_storage_sharing", decodeBool),
		Config:              req(f, "config", decodeConfig),
		ComputeResources:    req(f, "compute_resources", listOf(decodeResource)),
		StorageResources:    opt(f, "storage_resources", listOf(decodeResource)),
		Workloads:           opt(f, "workloads", mapOf[string](decodeString)),
		Profiles:            opt(f, "profiles", mapOf[string](mapOf[string](decodeProfile))),
	}
}

func (d SimulationBegins) validate(Direction) error {
	if d.NbComputeResources != len(d.ComputeResources) {
		return inField("nb_compute_resources", fmt.Errorf("%d but compute_resources has %d entries", d.NbComputeResources, len(d.ComputeResources)))
	}
	if d.NbStorageResources != len(d.StorageResources) {
		return inField("nb_storage_resources", fmt.Errorf("%d but storage_resources has %d entries", d.NbStorageResources, len(d.StorageResources)))
	}
	seen := make(map[int]bool, len(d.ComputeResources)+len(d.StorageResources))
	for _, list := range []struct {
		name      string
		resources []Resource
	}{{"compute_resources", d.ComputeResources}, {"storage_resources", d.StorageResources}} {
		for i, r := range list.resources {
			switch {
			case r.ID < 0 || r.ID > MaxResourceID:
				return inField(list.name, atIndex(i, inField("id", fmt.Errorf("%d out of range [0, %d]", r.ID, MaxResourceID))))
			case seen[r.ID]:
				return inField(list.name, atIndex(i, inField("id", fmt.Errorf("duplicate resource id %d", r.ID))))
			}
			seen[r.ID] = true
		}
	}
	for _, w := range slices.Sorted(maps.Keys(d.Profiles)) {
		for _, name := range slices.Sorted(maps.Keys(d.Profiles[w])) {
			if err := d.Profiles[w][name].validate(); err != nil {
				return inField("profiles", inField(w, inField(name, err)))
			}
		}
	}
	return nil
}

func (d SimulationBegins) encodeMembers(w *writer) {
	w.intField("nb_resources", d.NbResources)
	w.intField("nb_compute_resources", d.NbComputeResources)
	w.intField("nb_storage_resources", d.NbStorageResources)
	w.boolField("allow_compute_sharing", d.AllowComputeSharing)
	w.boolField("allow_storage_sharing", d.AllowStorageSharing)
	w.key("config")
	d.Config.encode(w)
	for _, list := range []struct {
		name      string
		resources []Resource
	}{{"compute_resources", d.ComputeResources}, {"storage_resources", d.StorageResources}} {
		w.key(list.name)
		w.open('[')
		for _, r := range list.resources {
			r.encode(w)
		}
		w.close(']')
	}
	w.key("workloads")
	w.stringMap(d.Workloads)
	w.key("profiles")
	w.open('{')
	for _, wl := range slices.Sorted(maps.Keys(d.Profiles)) {
		w.key(wl)
		w.open('{')
		for _, name := range slices.Sorted(maps.Keys(d.Profiles[wl])) {
			w.key(name)
			d.Profiles[wl][name].encode(w)
		}
		w.close('}')
	}
	w.close('}')
}

// SimulationEnds closes the simulation: answer it with a message without
// events, then close the socket.
type SimulationEnds struct{}

func (SimulationEnds) EventType() EventType     { return TypeSimulationEnds }
func (SimulationEnds) validate(Direction) error { return nil }
func (SimulationEnds) encodeMembers(*writer)    {}

// RequestedCall is the wake-up a CALL_ME_LATER asked for.
type RequestedCall struct{}

func (RequestedCall) EventType() EventType     { return TypeRequestedCall }
func (RequestedCall) validate(Direction) error { return nil }
func (RequestedCall) encodeMembers(*writer)    {}

// JobSubmitted tells that a job was submitted.
type JobSubmitted struct {
	JobID JobID
	Job   Job
	// Profile is the job's profile, sent only when Batsim runs with
	// --forward-profiles-on-submission (otherwise look it up in
	// SimulationBegins.Profiles).
	Profile *Profile
}

func (JobSubmitted) EventType() EventType { return TypeJobSubmitted }

func decodeJobSubmitted(f *fields) EventData {
	d := JobSubmitted{
		JobID: req(f, "job_id", decodeJobID),
		Job:   req(f, "job", decodeCompleteJob),
	}
	if p, ok := read(f, "profile", decodeProfile, false); ok {
		d.Profile = &p
	}
	return d
}

func (d JobSubmitted) validate(Direction) error {
	if err := validateJobID(d.JobID); err != nil {
		return err
	}
	if err := d.Job.validate(true); err != nil {
		return inField("job", err)
	}
	if d.Profile != nil {
		return inField("profile", d.Profile.validate())
	}
	return nil
}

func (d JobSubmitted) encodeMembers(w *writer) {
	w.stringField("job_id", string(d.JobID))
	w.key("job")
	d.Job.encode(w)
	if d.Profile != nil {
		w.key("profile")
		d.Profile.encode(w)
	}
}

// JobCompleted tells that a job finished (acknowledging its EXECUTE_JOB).
type JobCompleted struct {
	JobID      JobID
	JobState   JobState // COMPLETED_* or REJECTED
	ReturnCode int
	Alloc      IntervalSet // the resources the job ran on
}

func (JobCompleted) EventType() EventType { return TypeJobCompleted }

func decodeJobCompleted(f *fields) EventData {
	return JobCompleted{
		JobID:      req(f, "job_id", decodeJobID),
		JobState:   JobState(req(f, "job_state", decodeString)),
		ReturnCode: opt(f, "return_code", decodeInt),
		Alloc:      opt(f, "alloc", decodeIntervalSet),
	}
}

func (d JobCompleted) validate(Direction) error {
	if err := validateJobID(d.JobID); err != nil {
		return err
	}
	switch d.JobState {
	case JobStateCompletedSuccessfully, JobStateCompletedFailed, JobStateCompletedWalltimeReached, JobStateCompletedKilled, JobStateRejected:
		return nil
	}
	return inField("job_state", fmt.Errorf("%q is not a final job state", d.JobState))
}

func (d JobCompleted) encodeMembers(w *writer) {
	w.stringField("job_id", string(d.JobID))
	w.stringField("job_state", string(d.JobState))
	w.intField("return_code", d.ReturnCode)
	w.setField("alloc", d.Alloc)
}

// JobKilled acknowledges a KILL_JOB: all the jobs it names have stopped
// (killed, or finished on their own before).
type JobKilled struct {
	JobIDs []JobID
	// Progress tells, for each job that was really killed, how far it had
	// gone.
	Progress map[JobID]JobProgress
}

// JobProgress is how far a killed job had gone.
type JobProgress struct {
	// Profile is the name of the profile of the task ("profile_name" in
	// Batsim 4.2.1, "profile" in its documentation; both are read).
	Profile string
	// Progress is the fraction of a simple task done, in [0, 1].
	Progress float64
	// CurrentTaskIndex is set for composed profiles: the index of the
	// running task (-1 if none had started), detailed in CurrentTask.
	CurrentTaskIndex *int
	CurrentTask      *JobProgress
}

func decodeJobProgress(raw json.RawMessage) (JobProgress, error) {
	return decodeObject(raw, func(f *fields) JobProgress {
		var p JobProgress
		if f.has("profile_name") || !f.has("profile") {
			p.Profile = req(f, "profile_name", decodeString)
		} else {
			p.Profile = req(f, "profile", decodeString)
		}
		if idx, ok := read(f, "current_task_index", decodeInt, false); ok {
			p.CurrentTaskIndex = &idx
			if t, ok := read(f, "current_task", decodeJobProgress, false); ok {
				p.CurrentTask = &t
			}
		} else {
			p.Progress = opt(f, "progress", decodeFloat)
		}
		return p
	})
}

func (p JobProgress) encode(w *writer) {
	w.open('{')
	w.stringField("profile_name", p.Profile)
	if p.CurrentTaskIndex == nil {
		w.floatField("progress", p.Progress)
	} else {
		w.intField("current_task_index", *p.CurrentTaskIndex)
		if p.CurrentTask != nil {
			w.key("current_task")
			p.CurrentTask.encode(w)
		}
	}
	w.close('}')
}

func (JobKilled) EventType() EventType { return TypeJobKilled }

func decodeJobKilled(f *fields) EventData {
	return JobKilled{
		JobIDs:   req(f, "job_ids", listOf(decodeJobID)),
		Progress: opt(f, "job_progress", mapOf[JobID](decodeJobProgress)),
	}
}

func (d JobKilled) validate(Direction) error { return validateJobIDs(d.JobIDs) }

func (d JobKilled) encodeMembers(w *writer) {
	w.key("job_ids")
	w.jobIDs(d.JobIDs)
	w.key("job_progress")
	w.open('{')
	for _, id := range slices.Sorted(maps.Keys(d.Progress)) {
		w.key(string(id))
		d.Progress[id].encode(w)
	}
	w.close('}')
}

// validateJobID fails on an empty "job_id".
func validateJobID(id JobID) error {
	if id == "" {
		return inField("job_id", errEmpty)
	}
	return nil
}

func validateJobIDs(ids []JobID) error {
	if len(ids) == 0 {
		return inField("job_ids", errEmpty)
	}
	for i, id := range ids {
		if id == "" {
			return inField("job_ids", atIndex(i, errEmpty))
		}
	}
	return nil
}

// ResourceStateChanged acknowledges a SET_RESOURCE_STATE, with its members:
// the resources and their new power state.
type ResourceStateChanged SetResourceState

func (ResourceStateChanged) EventType() EventType { return TypeResourceStateChanged }

func decodeResourceStateChanged(f *fields) EventData {
	return ResourceStateChanged(decodeSetResourceState(f))
}

func (d ResourceStateChanged) validate(Direction) error {
	if d.Resources.IsEmpty() {
		return inField("resources", errEmpty)
	}
	return nil
}

func (d ResourceStateChanged) encodeMembers(w *writer) { SetResourceState(d).encodeMembers(w) }
