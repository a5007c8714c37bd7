package batsim

import (
	"encoding/json"
	"fmt"
	"strings"
)

// JobID identifies a job: "workload!name" in the protocol. Workload files may
// write ids as integers; decoding accepts both.
type JobID string

// Workload returns the part of the id before the '!' ("" if there is none).
func (id JobID) Workload() string {
	w, _, ok := strings.Cut(string(id), "!")
	if !ok {
		return ""
	}
	return w
}

// Name returns the part of the id after the '!' (the whole id if there is
// none).
func (id JobID) Name() string {
	_, n, ok := strings.Cut(string(id), "!")
	if !ok {
		return string(id)
	}
	return n
}

// UnmarshalJSON accepts a string or an integer.
func (id *JobID) UnmarshalJSON(b []byte) error {
	return unmarshalJSON("job id", b, decodeJobID, id)
}

// JobState is the state of a job as JOB_COMPLETED and CHANGE_JOB_STATE write
// it.
type JobState string

// The job states of Batsim.
const (
	JobStateNotSubmitted             JobState = "NOT_SUBMITTED"
	JobStateSubmitted                JobState = "SUBMITTED"
	JobStateRunning                  JobState = "RUNNING"
	JobStateCompletedSuccessfully    JobState = "COMPLETED_SUCCESSFULLY"
	JobStateCompletedFailed          JobState = "COMPLETED_FAILED"
	JobStateCompletedWalltimeReached JobState = "COMPLETED_WALLTIME_REACHED"
	JobStateCompletedKilled          JobState = "COMPLETED_KILLED"
	JobStateRejected                 JobState = "REJECTED"
)

// NoWalltime is the walltime Batsim uses for a job without one.
const NoWalltime = -1

// Job is a job as a workload file describes it and JOB_SUBMITTED forwards it.
type Job struct {
	ID      JobID
	Subtime float64 // submission time, seconds
	Res     int     // number of resources asked for
	Profile string  // name of the job's profile in its workload
	// Walltime is the time limit in seconds: 0 when the job has no
	// "walltime" field, NoWalltime (-1) when it says it has none.
	Walltime float64
	// Extra holds the job's other, user-defined fields as compact JSON.
	Extra map[string]json.RawMessage
}

// HasWalltime reports whether the job has a time limit.
func (j Job) HasWalltime() bool { return j.Walltime > 0 }

var jobFields = []string{"id", "subtime", "res", "profile", "walltime"}

// decodeJob decodes a job; complete jobs (JOB_SUBMITTED, REGISTER_JOB) must
// have an id, a subtime, a res and a profile, while the job of an
// estimate_waiting_time query may have just res and walltime.
func decodeJob(raw json.RawMessage, complete bool) (Job, error) {
	j, err := decodeObject(raw, func(f *fields) Job {
		var j Job
		j.ID, _ = read(f, "id", decodeJobID, complete)
		j.Subtime, _ = read(f, "subtime", decodeFloat, complete)
		j.Res, _ = read(f, "res", decodeInt, complete)
		j.Profile, _ = read(f, "profile", decodeString, complete)
		j.Walltime = opt(f, "walltime", decodeFloat)
		j.Extra = f.rest()
		return j
	})
	if err != nil {
		return Job{}, err
	}
	return j, j.validate(complete)
}

func decodeCompleteJob(raw json.RawMessage) (Job, error) { return decodeJob(raw, true) }
func decodePartialJob(raw json.RawMessage) (Job, error)  { return decodeJob(raw, false) }

func (j Job) validate(complete bool) error {
	switch {
	case complete && j.ID == "":
		return inField("id", errEmpty)
	case complete && j.Profile == "":
		return inField("profile", errEmpty)
	case j.Res < 0:
		return inField("res", fmt.Errorf("negative number of resources %d", j.Res))
	case j.Walltime != 0 && j.Walltime != NoWalltime && j.Walltime < 0:
		return inField("walltime", fmt.Errorf("must be positive or -1, got %v", j.Walltime))
	}
	for k := range j.Extra {
		for _, known := range jobFields {
			if k == known {
				return inField(k, errShadow)
			}
		}
	}
	return nil
}

func (j Job) encode(w *writer) {
	w.open('{')
	if j.ID != "" {
		w.stringField("id", string(j.ID))
	}
	w.floatField("subtime", j.Subtime)
	w.intField("res", j.Res)
	if j.Profile != "" {
		w.stringField("profile", j.Profile)
	}
	if j.Walltime != 0 {
		w.floatField("walltime", j.Walltime)
	}
	w.rawFields(j.Extra)
	w.close('}')
}

// MarshalJSON writes the job as a workload file holds it.
func (j Job) MarshalJSON() ([]byte, error) {
	return marshalJSON("job", j.validate(false), j.encode)
}

// UnmarshalJSON reads a job as a workload file holds it: id, subtime, res and
// profile are required.
func (j *Job) UnmarshalJSON(b []byte) error {
	return unmarshalJSON("job", b, decodeCompleteJob, j)
}

// Profile is a job profile: its type ("delay", "parallel_homogeneous", ...)
// and its other fields, which depend on the type and may include any
// user-defined field.
type Profile struct {
	Type string
	// Fields holds every field but "type", as compact JSON.
	Fields map[string]json.RawMessage
}

// Field decodes the field name into v; it reports false if the profile has no
// such field.
func (p Profile) Field(name string, v any) (bool, error) {
	raw, ok := p.Fields[name]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("batsim: profile field %q: %w", name, err)
	}
	return true, nil
}

func decodeProfile(raw json.RawMessage) (Profile, error) {
	p, err := decodeObject(raw, func(f *fields) Profile {
		return Profile{
			Type:   req(f, "type", decodeString),
			Fields: f.rest(), // read last: every member but "type"
		}
	})
	if err != nil {
		return Profile{}, err
	}
	return p, p.validate()
}

func (p Profile) validate() error {
	if p.Type == "" {
		return inField("type", errEmpty)
	}
	if _, ok := p.Fields["type"]; ok {
		return inField("type", errShadow)
	}
	return nil
}

func (p Profile) encode(w *writer) {
	w.open('{')
	w.stringField("type", p.Type)
	w.rawFields(p.Fields)
	w.close('}')
}

// MarshalJSON writes the profile as a workload file holds it.
func (p Profile) MarshalJSON() ([]byte, error) {
	return marshalJSON("profile", p.validate(), p.encode)
}

// UnmarshalJSON reads a profile; it must have a "type".
func (p *Profile) UnmarshalJSON(b []byte) error {
	return unmarshalJSON("profile", b, decodeProfile, p)
}

// marshalJSON writes, with encode, a value whose validation returned
// invalid; errors are prefixed with what the value is.
func marshalJSON(what string, invalid error, encode func(*writer)) ([]byte, error) {
	if invalid != nil {
		return nil, fmt.Errorf("batsim: %s: %w", what, invalid)
	}
	var w writer
	encode(&w)
	if w.err != nil {
		return nil, fmt.Errorf("batsim: %s: %w", what, w.err)
	}
	return w.buf, nil
}

// unmarshalJSON decodes b with dec into *v, which it leaves alone on error;
// errors are prefixed with what the value is.
func unmarshalJSON[T any](what string, b []byte, dec decoder[T], v *T) error {
	d, err := dec(b)
	if err != nil {
		return fmt.Errorf("batsim: %s: %w", what, err)
	}
	*v = d
	return nil
}
