package campaign

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batkube/batkube/pkg/launch"
)

// Run is one run of the matrix.
type Run struct {
	// Index is the run's place in Campaign.Runs: a Kubernetes Indexed
	// Job's completion index.
	Index int `json:"-"`
	// Name is the name of the run's folder:
	// scheduler--platform--workload--repetition (each part a slug of the
	// entry's name); Setting is the same without the repetition, shared by
	// the repetitions of one setting.
	Name    string `json:"name"`
	Setting string `json:"setting"`
	// Scheduler is the scheduler's entry with {repetition} replaced.
	Scheduler  Scheduler `json:"scheduler"`
	Platform   Input     `json:"platform"`
	Workload   Input     `json:"workload"`
	Repetition int       `json:"repetition"`
	Objects    []string  `json:"objects,omitempty"`
}

// repetitions is how many times the scheduler runs in each setting.
func (c *Campaign) repetitions(s Scheduler) int {
	switch {
	case s.Repetitions > 0:
		return s.Repetitions
	case c.Repetitions > 0:
		return c.Repetitions
	default:
		return 1
	}
}

// Runs lists the matrix's runs in their fixed order: by repetition, then
// platform, workload and scheduler, as the file lists them — so that the
// first runs give one sample of every setting, and a run's index depends
// only on the file.
func (c *Campaign) Runs() []Run {
	most := 0
	for _, s := range c.Schedulers {
		most = max(most, c.repetitions(s))
	}
	var runs []Run
	for rep := 1; rep <= most; rep++ {
		for _, p := range c.Platforms {
			for _, w := range c.Workloads {
				for _, s := range c.Schedulers {
					if rep > c.repetitions(s) {
						continue
					}
					setting := slug(s.Name) + "--" + slug(p.label()) + "--" + slug(w.label())
					runs = append(runs, Run{
						Index:      len(runs),
						Name:       setting + "--" + strconv.Itoa(rep),
						Setting:    setting,
						Scheduler:  s.forRepetition(rep),
						Platform:   p,
						Workload:   w,
						Repetition: rep,
						Objects:    c.Objects,
					})
				}
			}
		}
	}
	return runs
}

// Describe says what the matrix is made of, for a person.
func (c *Campaign) Describe() string {
	lo, hi := c.repetitions(c.Schedulers[0]), c.repetitions(c.Schedulers[0])
	for _, s := range c.Schedulers {
		lo, hi = min(lo, c.repetitions(s)), max(hi, c.repetitions(s))
	}
	reps := strconv.Itoa(lo)
	if hi != lo {
		reps += "–" + strconv.Itoa(hi)
	}
	plural := func(n int, what string) string {
		if n == 1 {
			return "1 " + what
		}
		return strconv.Itoa(n) + " " + what + "s"
	}
	return fmt.Sprintf("%s (%s × %s × %s × %s repetition%s)", plural(len(c.Runs()), "run"),
		plural(len(c.Schedulers), "scheduler"), plural(len(c.Platforms), "platform"), plural(len(c.Workloads), "workload"),
		reps, map[bool]string{true: "", false: "s"}[hi == 1])
}

// forRepetition is the scheduler with {repetition} replaced.
func (s Scheduler) forRepetition(rep int) Scheduler {
	r := strings.NewReplacer("{repetition}", strconv.Itoa(rep))
	each := func(list []string) []string {
		if list == nil {
			return nil
		}
		out := make([]string, len(list))
		for i, v := range list {
			out[i] = r.Replace(v)
		}
		return out
	}
	s.SchedulerCmd = r.Replace(s.SchedulerCmd)
	s.Sidecars = each(s.Sidecars)
	s.KubeSchedulerArgs = each(s.KubeSchedulerArgs)
	s.ServerArgs = each(s.ServerArgs)
	return s
}

// Label is the run's setting for a person: the scheduler's name, with the
// platform and the workload when the campaign has several.
func (c *Campaign) Label(r Run) string {
	label := r.Scheduler.Name
	if len(c.Platforms) > 1 {
		label += " · " + r.Platform.label()
	}
	if len(c.Workloads) > 1 {
		label += " · " + r.Workload.label()
	}
	return label
}

// Dir is the run's folder in out.
func (r Run) Dir(out string) string { return filepath.Join(out, r.Name) }

// Settings are what the run was started with, as its run.json holds them:
// a finished run whose settings differ from the campaign's is run again.
func (r Run) Settings() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("campaign: run %s: %w", r.Name, err)
	}
	return append(b, '\n'), nil
}

// Config is the launch configuration of the run, on top of base (the
// binaries, the simulator, the ports...), with its outputs in out/<name>.
func (r Run) Config(base launch.Config, out string) launch.Config {
	cfg := base
	cfg.Platform = r.Platform.Files[0]
	cfg.Workloads = r.Workload.Files
	cfg.Objects = r.Objects
	cfg.OutDir = r.Dir(out)
	s := r.Scheduler
	cfg.SchedulerCommand, cfg.SchedulerConfig, cfg.KubeScheduler = s.SchedulerCmd, s.SchedulerConfig, s.KubeScheduler
	cfg.KubeSchedulerArgs, cfg.ServerArgs, cfg.Sidecars, cfg.DynamicJobs = s.KubeSchedulerArgs, s.ServerArgs, s.Sidecars, s.DynamicJobs
	cfg.Gangs, cfg.NoGangs = s.Gangs, s.NoGangs
	cfg.ControllerManager, cfg.ControllerManagerArgs = s.ControllerManager, s.ControllerManagerArgs
	cfg.ControllerManagerWallClock = s.ControllerManagerWallClock
	cfg.Kueue, cfg.KueueArgs, cfg.KueueConfig = s.Kueue, s.KueueArgs, s.KueueConfig
	cfg.Karpenter, cfg.KarpenterEnv, cfg.SwitchOffPool = s.Karpenter, s.KarpenterEnv, s.SwitchOffPool
	cfg.ProvisioningDelay, _ = time.ParseDuration(s.ProvisioningDelay) // checked when read ("": 0)
	cfg.Objects = append(slices.Clip(cfg.Objects), s.Objects...)
	return cfg
}
