package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Workload is a Batsim workload: jobs and the profiles they run.
type Workload struct {
	// Name prefixes the job ids: "name!id".
	Name string
	// Path is the file the workload was read from (SIMULATION_BEGINS lists
	// it), or empty.
	Path string
	// NbRes is the workload's nb_res.
	NbRes int
	// Jobs are in the order of the file.
	Jobs []*Job
	// Profiles by name.
	Profiles map[string]*Profile
}

// Job is a job of a workload.
type Job struct {
	// ID is "workload!name", the id Batsim uses in the protocol.
	ID string
	// Name is the job's id within its workload (the jobs output's job_id).
	Name     string
	Workload string
	// Subtime is the submission date, in seconds.
	Subtime float64
	// Res is the number of resources the job asks for.
	Res     int
	Profile string
	// Walltime in seconds; -1 means none.
	Walltime float64
	// Raw is the job's JSON object as written, user fields included (nil
	// for jobs built in Go).
	Raw json.RawMessage
}

// Description returns the job's JSON object as Batsim forwards it in
// JOB_SUBMITTED: the job as written, user fields included, with its id
// replaced by "workload!id".
func (j *Job) Description() (json.RawMessage, error) {
	fields := map[string]json.RawMessage{}
	if len(j.Raw) > 0 {
		if err := json.Unmarshal(j.Raw, &fields); err != nil {
			return nil, fmt.Errorf("engine: job %s: %w", j.ID, err)
		}
	} else {
		fields["subtime"] = jsonNumber(j.Subtime)
		fields["res"] = json.RawMessage(strconv.Itoa(j.Res))
		fields["profile"], _ = json.Marshal(j.Profile)
		if j.Walltime != -1 {
			fields["walltime"] = jsonNumber(j.Walltime)
		}
	}
	fields["id"], _ = json.Marshal(j.ID)
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("engine: job %s: %w", j.ID, err)
	}
	return out, nil
}

func jsonNumber(f float64) json.RawMessage {
	return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64))
}

// WorkloadName is the name a workload file gets by default: its base name
// without extension. (Real Batsim names its workloads w0, w1... in the order
// of its -w options; see BatsimWorkloadName.)
func WorkloadName(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// BatsimWorkloadName is the name real Batsim gives to its i-th workload
// ("w0", "w1", ...); pass it as the name to get the same job ids.
func BatsimWorkloadName(i int) string { return "w" + strconv.Itoa(i) }

// ReadWorkloadFile reads a workload file; an empty name means
// WorkloadName(path).
func ReadWorkloadFile(path, name string) (*Workload, error) {
	if name == "" {
		name = WorkloadName(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("engine: workload %q: %w", name, err)
	}
	defer f.Close()
	w, err := ParseWorkload(f, name)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	w.Path = path
	return w, nil
}

// ParseWorkload reads a Batsim workload (JSON: nb_res, jobs, profiles).
func ParseWorkload(r io.Reader, name string) (*Workload, error) {
	w, err := parseWorkload(r, name)
	if err != nil {
		return nil, fmt.Errorf("engine: workload %q: %w", name, err)
	}
	return w, nil
}

func parseWorkload(r io.Reader, name string) (*Workload, error) {
	if name == "" || strings.Contains(name, "!") {
		return nil, errors.New("a workload name must be non-empty and without '!'")
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	top, err := objectFields(data)
	if err != nil {
		return nil, err
	}
	w := &Workload{Name: name, Profiles: map[string]*Profile{}}
	if w.NbRes, err = intField(top, "nb_res"); err != nil {
		return nil, err
	}
	if w.NbRes <= 0 {
		return nil, fmt.Errorf("nb_res is %d, want > 0", w.NbRes)
	}
	rawProfiles, ok := top["profiles"]
	if !ok {
		return nil, errors.New("no profiles object")
	}
	profiles, err := objectFields(rawProfiles)
	if err != nil {
		return nil, fmt.Errorf("profiles: %w", err)
	}
	for _, pname := range slices.Sorted(maps.Keys(profiles)) {
		p, err := ParseProfile(pname, profiles[pname])
		if err != nil {
			return nil, err
		}
		w.Profiles[pname] = p
	}
	if err := checkComposed(w.Profiles); err != nil {
		return nil, err
	}
	rawJobs, ok := top["jobs"]
	if !ok {
		return nil, errors.New("no jobs array")
	}
	var jobs []json.RawMessage
	if err := json.Unmarshal(rawJobs, &jobs); err != nil {
		return nil, fmt.Errorf("jobs: not an array of objects")
	}
	w.Jobs = make([]*Job, 0, len(jobs))
	seen := make(map[string]bool, len(jobs))
	for i, raw := range jobs {
		j, err := ParseJob(name, raw)
		if err != nil {
			return nil, fmt.Errorf("job #%d: %w", i, err)
		}
		if seen[j.ID] {
			return nil, fmt.Errorf("job %q is declared twice", j.Name)
		}
		seen[j.ID] = true
		if err := checkJobProfile(j, w.Profiles); err != nil {
			return nil, err
		}
		w.Jobs = append(w.Jobs, j)
	}
	return w, nil
}

// ParseJob reads one job object of a workload (or of REGISTER_JOB). Its id
// is a string or an integer; "workload!id" is accepted when the workload is
// the right one.
func ParseJob(workload string, raw json.RawMessage) (*Job, error) {
	fields, err := objectFields(raw)
	if err != nil {
		return nil, err
	}
	j := &Job{Workload: workload, Walltime: -1, Raw: append(json.RawMessage(nil), raw...)}
	if j.Name, err = jobName(fields["id"], workload); err != nil {
		return nil, &fieldError{field: "id", err: err}
	}
	j.ID = workload + "!" + j.Name
	fail := func(err error) (*Job, error) { return nil, fmt.Errorf("job %q: %w", j.Name, err) }
	if j.Subtime, err = numberField(fields, "subtime"); err != nil {
		return fail(err)
	}
	if err := checkDate("subtime", j.Subtime); err != nil {
		return fail(err)
	}
	if j.Res, err = intField(fields, "res"); err != nil {
		return fail(err)
	}
	if j.Res < 0 {
		return fail(inField("res", "res is %d, want >= 0", j.Res))
	}
	if j.Profile, err = stringField(fields, "profile", true); err != nil {
		return fail(err)
	}
	if _, ok := fields["walltime"]; ok {
		if j.Walltime, err = numberField(fields, "walltime"); err != nil {
			return fail(err)
		}
		if err := checkWalltime(j.Walltime); err != nil {
			return fail(err)
		}
	}
	return j, nil
}

// checkJobProfile checks that the job's profile exists and, for a parallel
// profile, that it has one executor per resource the job asks for (Batsim
// checks both when it loads or registers a job).
func checkJobProfile(j *Job, profiles map[string]*Profile) error {
	p := profiles[j.Profile]
	if p == nil {
		return inField("profile", "job %q: profile %q does not exist", j.Name, j.Profile)
	}
	if p.Type == ProfileParallel && len(p.CPUs) != j.Res {
		return inField("res", "job %q asks for %d resources but its parallel profile %q has %d executors", j.Name, j.Res, p.Name, len(p.CPUs))
	}
	return nil
}

// jobName reads a job's id field: a string, or an integer written as such.
func jobName(raw json.RawMessage, workload string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", errors.New("a job has no id")
	}
	var name string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &name); err != nil {
			return "", fmt.Errorf("job id %s: %w", raw, err)
		}
	} else {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return "", fmt.Errorf("job id %s: want a string or an integer", raw)
		}
		name = strconv.FormatInt(n, 10)
	}
	if w, rest, ok := strings.Cut(name, "!"); ok {
		if w != workload || strings.Contains(rest, "!") {
			return "", fmt.Errorf("job id %q: want %q or %q", name, "id", workload+"!id")
		}
		name = rest
	}
	if name == "" {
		return "", errors.New("a job has an empty id")
	}
	return name, nil
}

// objectFields splits a JSON object into its fields (exact, case-sensitive
// keys).
func objectFields(raw []byte) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return nil, errors.New("not a JSON object")
	}
	if fields == nil {
		return nil, errors.New("not a JSON object")
	}
	return fields, nil
}

func numberField(fields map[string]json.RawMessage, key string) (float64, error) {
	raw, ok := fields[key]
	if !ok {
		return 0, inField(key, "no %s field", key)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return 0, inField(key, "%s is %s, want a number", key, raw)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, inField(key, "%s is %s, want a finite number", key, raw)
	}
	return f, nil
}

func intField(fields map[string]json.RawMessage, key string) (int, error) {
	raw, ok := fields[key]
	if !ok {
		return 0, inField(key, "no %s field", key)
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 32)
	if err != nil {
		return 0, inField(key, "%s is %s, want an integer", key, raw)
	}
	return int(n), nil
}

func stringField(fields map[string]json.RawMessage, key string, required bool) (string, error) {
	raw, ok := fields[key]
	if !ok {
		if required {
			return "", inField(key, "no %s field", key)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", inField(key, "%s is %s, want a string", key, raw)
	}
	return s, nil
}
