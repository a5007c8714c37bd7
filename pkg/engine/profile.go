package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
)

// ProfileType is the type of a Batsim profile.
type ProfileType string

// The profile types the engine simulates.
const (
	// ProfileDelay lasts Delay seconds, whatever runs beside it.
	ProfileDelay ProfileType = "delay"
	// ProfileParallel computes CPUs[i] flops on executor i.
	ProfileParallel ProfileType = "parallel"
	// ProfileParallelHomogeneous computes CPU flops on each executor.
	ProfileParallelHomogeneous ProfileType = "parallel_homogeneous"
	// ProfileParallelHomogeneousTotal computes CPU flops in all, split evenly
	// over the executors.
	ProfileParallelHomogeneousTotal ProfileType = "parallel_homogeneous_total"
	// ProfileComposed runs the profiles of Seq in order, Repeat times.
	ProfileComposed ProfileType = "composed"
)

// unsupportedProfileTypes are Batsim profile types the engine does not
// simulate (they need SimGrid's network, storage or MPI models).
var unsupportedProfileTypes = map[string]bool{
	"parallel_homogeneous_pfs": true, "data_staging": true, "send": true, "recv": true,
	"smpi": true, "usage_trace": true,
}

// Profile is a Batsim profile: how a job runs.
type Profile struct {
	Name string
	Type ProfileType
	// Ret is the profile's return code ("ret", default 0); non-zero means the
	// job fails.
	Ret int
	// Delay is the duration of a delay profile, in seconds.
	Delay float64
	// CPU is the flops of a parallel_homogeneous profile (per executor) or of
	// a parallel_homogeneous_total one (in all).
	CPU float64
	// CPUs are the flops of each executor of a parallel profile.
	CPUs []float64
	// Com is the bytes a parallel_homogeneous profile sends from each
	// executor to each other one (parallel_homogeneous_total: Com over the
	// number of executors to each other one).
	Com float64
	// Coms are the bytes a parallel profile sends from executor i to
	// executor j, at Coms[i*len(CPUs)+j] (i to itself: through the host's
	// route to itself).
	Coms []float64
	// Seq and Repeat describe a composed profile.
	Seq    []string
	Repeat int
	// Raw is the profile's JSON object as written, user fields included.
	Raw json.RawMessage
}

// ParseProfile reads one profile object (as in a workload's "profiles", or
// in REGISTER_PROFILE). A composed profile's steps are checked when the
// profile is added to a workload.
func ParseProfile(name string, raw json.RawMessage) (*Profile, error) {
	p, err := parseProfile(name, raw)
	if err != nil {
		return nil, fmt.Errorf("profile %q: %w", name, err)
	}
	return p, nil
}

func parseProfile(name string, raw json.RawMessage) (*Profile, error) {
	fields, err := objectFields(raw)
	if err != nil {
		return nil, err
	}
	p := &Profile{Name: name, Raw: append(json.RawMessage(nil), raw...)}
	typ, err := stringField(fields, "type", true)
	if err != nil {
		return nil, err
	}
	p.Type = ProfileType(typ)
	if _, ok := fields["ret"]; ok {
		if p.Ret, err = intField(fields, "ret"); err != nil {
			return nil, err
		}
		if p.Ret < 0 {
			return nil, inField("ret", "ret is %d, want a return code >= 0", p.Ret)
		}
	}
	switch p.Type {
	case ProfileDelay:
		if p.Delay, err = numberField(fields, "delay"); err != nil {
			return nil, err
		}
		if !(p.Delay > 0) || math.IsInf(p.Delay, 0) {
			return nil, inField("delay", "delay is %g, want a positive number of seconds", p.Delay)
		}
	case ProfileParallelHomogeneous, ProfileParallelHomogeneousTotal:
		if p.CPU, err = numberField(fields, "cpu"); err != nil {
			return nil, err
		}
		if p.CPU < 0 {
			return nil, inField("cpu", "cpu is %g, want flops >= 0", p.CPU)
		}
		if p.Com, err = numberField(fields, "com"); err != nil {
			return nil, fmt.Errorf("%w (bytes per pair of hosts, as Batsim requires)", err)
		}
		if p.Com < 0 || math.IsInf(p.Com, 0) {
			return nil, inField("com", "com is %g, want bytes >= 0", p.Com)
		}
	case ProfileParallel:
		v, ok := fields["cpu"]
		if !ok {
			return nil, inField("cpu", "no cpu field")
		}
		if err := json.Unmarshal(v, &p.CPUs); err != nil || len(p.CPUs) == 0 {
			return nil, inField("cpu", "cpu is not a non-empty array of numbers")
		}
		for _, c := range p.CPUs {
			if c < 0 || math.IsInf(c, 0) {
				return nil, inField("cpu", "cpu holds %g, want flops >= 0", c)
			}
		}
		if p.Coms, err = comMatrix(fields, len(p.CPUs)); err != nil {
			return nil, err
		}
	case ProfileComposed:
		p.Repeat = 1
		if _, ok := fields["repeat"]; ok {
			if p.Repeat, err = intField(fields, "repeat"); err != nil {
				return nil, err
			}
			if p.Repeat < 1 {
				return nil, inField("repeat", "repeat is %d, want > 0", p.Repeat)
			}
		}
		v, ok := fields["seq"]
		if !ok {
			return nil, inField("seq", "no seq field")
		}
		if err := json.Unmarshal(v, &p.Seq); err != nil || len(p.Seq) == 0 {
			return nil, inField("seq", "seq is not a non-empty array of profile names")
		}
	default:
		if unsupportedProfileTypes[typ] {
			return nil, inField("type", "type %q is not simulated by the embedded engine (it needs SimGrid's network, storage or MPI models: use real Batsim)", typ)
		}
		return nil, inField("type", "unknown type %q (want delay, parallel, parallel_homogeneous, parallel_homogeneous_total or composed)", typ)
	}
	return p, nil
}

// checkProfile checks the values of a profile built in Go as ParseProfile
// would have.
func checkProfile(p *Profile) error {
	bad := func(field, format string, v any) error {
		return fmt.Errorf("profile %q: %w", p.Name, inField(field, format, v))
	}
	switch p.Type {
	case ProfileDelay:
		if !(p.Delay > 0) || math.IsInf(p.Delay, 0) {
			return bad("delay", "delay is %g, want a positive number of seconds", p.Delay)
		}
	case ProfileParallelHomogeneous, ProfileParallelHomogeneousTotal:
		if !(p.CPU >= 0) || math.IsInf(p.CPU, 0) {
			return bad("cpu", "cpu is %g, want flops >= 0", p.CPU)
		}
	case ProfileParallel:
		if len(p.CPUs) == 0 {
			return bad("cpu", "cpu is %v, want a non-empty array of flops", p.CPUs)
		}
		for _, c := range p.CPUs {
			if !(c >= 0) || math.IsInf(c, 0) {
				return bad("cpu", "cpu holds %g, want flops >= 0", c)
			}
		}
	case ProfileComposed:
		if len(p.Seq) == 0 {
			return bad("seq", "seq is %v, want a non-empty array of profile names", p.Seq)
		}
		if p.Repeat < 1 {
			return bad("repeat", "repeat is %d, want > 0", p.Repeat)
		}
	default:
		return bad("type", "type %q is not simulated by the embedded engine", string(p.Type))
	}
	return nil
}

// comMatrix reads the com field of a parallel profile with n executors:
// n×n byte amounts >= 0, as Batsim requires them; nil if all are 0.
func comMatrix(fields map[string]json.RawMessage, n int) ([]float64, error) {
	v, ok := fields["com"]
	if !ok {
		return nil, inField("com", "no com field (an n×n matrix of bytes, as Batsim requires)")
	}
	var com []float64
	if err := json.Unmarshal(v, &com); err != nil {
		return nil, inField("com", "com is not an array of numbers")
	}
	if len(com) != n*n {
		return nil, inField("com", "com has %d numbers, want %d×%d = %d (one per pair of the %d executors of cpu)", len(com), n, n, n*n, n)
	}
	any := false
	for _, c := range com {
		if c < 0 || math.IsInf(c, 0) {
			return nil, inField("com", "com holds %g, want bytes >= 0", c)
		}
		any = any || c > 0
	}
	if !any {
		return nil, nil
	}
	return com, nil
}

// checkComposed checks that the steps of every composed profile exist and
// that no composed profile contains itself.
func checkComposed(profiles map[string]*Profile) error {
	const (
		unseen = iota
		visiting
		done
	)
	state := map[string]int{}
	var visit func(p *Profile) error
	visit = func(p *Profile) error {
		switch state[p.Name] {
		case visiting:
			return fmt.Errorf("profile %q: composed profiles form a cycle", p.Name)
		case done:
			return nil
		}
		state[p.Name] = visiting
		for _, step := range p.Seq {
			sub, ok := profiles[step]
			if !ok {
				return fmt.Errorf("profile %q: step %q does not exist", p.Name, step)
			}
			if err := visit(sub); err != nil {
				return err
			}
		}
		state[p.Name] = done
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(profiles)) {
		if err := visit(profiles[name]); err != nil {
			return err
		}
	}
	return nil
}

// anySize reports whether a job with this profile may run on any number of
// resources (Batsim: parallel_homogeneous_total, or a composed profile whose
// steps all are).
func anySize(p *Profile, profiles map[string]*Profile) bool {
	switch p.Type {
	case ProfileParallelHomogeneousTotal:
		return true
	case ProfileComposed:
		for _, step := range p.Seq {
			if sub := profiles[step]; sub == nil || sub.Type != ProfileParallelHomogeneousTotal {
				return false
			}
		}
		return true
	}
	return false
}

// checkExecutors checks that every parallel profile reachable from p has one
// flops amount per executor.
func checkExecutors(p *Profile, profiles map[string]*Profile, executors int) error {
	if p.Type != ProfileComposed && p.Type != ProfileParallel {
		return nil
	}
	seen := map[string]bool{}
	var check func(p *Profile) error
	check = func(p *Profile) error {
		if seen[p.Name] {
			return nil
		}
		seen[p.Name] = true
		switch p.Type {
		case ProfileParallel:
			if len(p.CPUs) != executors {
				return fmt.Errorf("profile %q computes on %d executors but the allocation has %d", p.Name, len(p.CPUs), executors)
			}
		case ProfileComposed:
			for _, step := range p.Seq {
				if err := check(profiles[step]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return check(p)
}
