package engine

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// What the engine checks of its inputs as Batsim does when it loads them.

func checkPlatform(p *Platform) error {
	for i, r := range p.Resources {
		if r.ID != i {
			return fmt.Errorf("engine: platform: resource %q has id %d, want %d", r.Name, r.ID, i)
		}
		if !(r.Speed > 0) || math.IsInf(r.Speed, 0) || r.Cores < 1 {
			return fmt.Errorf("engine: platform: resource %q: want a positive speed and core count", r.Name)
		}
	}
	return nil
}

func (e *Engine) addWorkload(w *Workload) error {
	if w == nil || w.Name == "" || strings.Contains(w.Name, "!") {
		return errors.New("engine: a workload needs a name without '!'")
	}
	if e.wstate[w.Name] != nil {
		return fmt.Errorf("engine: two workloads are named %q", w.Name)
	}
	profiles := make(map[string]*Profile, len(w.Profiles))
	for name, p := range w.Profiles {
		if p == nil || p.Name != name {
			return fmt.Errorf("engine: workload %q: profile %q is nil or misnamed", w.Name, name)
		}
		if err := checkProfile(p); err != nil {
			return fmt.Errorf("engine: workload %q: %w", w.Name, err)
		}
		profiles[name] = p
	}
	if err := checkComposed(profiles); err != nil {
		return fmt.Errorf("engine: workload %q: %w", w.Name, err)
	}
	e.wstate[w.Name] = &workloadState{w: w, profiles: profiles}
	return nil
}

// checkJob checks a job built in Go as ParseJob would have.
func checkJob(j *Job, workload string, profiles map[string]*Profile) error {
	if j == nil {
		return errors.New("a job is nil")
	}
	if j.Workload != workload || j.Name == "" || strings.Contains(j.Name, "!") ||
		len(j.ID) != len(workload)+1+len(j.Name) || j.ID[:len(workload)] != workload || j.ID[len(workload)+1:] != j.Name {
		return fmt.Errorf("job %q: want Workload %q and ID %q", j.ID, workload, workload+"!"+j.Name)
	}
	if err := checkDate("subtime", j.Subtime); err != nil {
		return fmt.Errorf("job %q: %w", j.Name, err)
	}
	if j.Res < 0 {
		return fmt.Errorf("job %q: res is %d, want >= 0", j.Name, j.Res)
	}
	if err := checkWalltime(j.Walltime); err != nil {
		return fmt.Errorf("job %q: %w", j.Name, err)
	}
	return checkJobProfile(j, profiles)
}

// checkDate checks a date given in seconds: finite and >= 0.
func checkDate(field string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return inField(field, "%s is %g, want a date >= 0 seconds", field, v)
	}
	return nil
}

// checkWalltime checks a walltime: -1 (none) or a finite positive number
// of seconds.
func checkWalltime(v float64) error {
	if v != -1 && (!(v > 0) || math.IsInf(v, 0)) {
		return inField("walltime", "walltime is %g, want -1 (none) or a positive number of seconds", v)
	}
	return nil
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
