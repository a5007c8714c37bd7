package campaign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Campaign is a campaign file: the axes of the matrix and what every run
// shares. Paths are relative to the directory the campaign runs in.
type Campaign struct {
	// Platforms are SimGrid platform files, one per entry.
	Platforms []Input `json:"platforms"`
	// Workloads are Batsim workloads; an entry may name several files,
	// simulated together in one run (Batsim's several -w).
	Workloads []Input `json:"workloads"`
	// Repetitions is how many times each setting runs (default 1); a
	// scheduler may say otherwise.
	Repetitions int `json:"repetitions,omitempty"`
	// Objects are manifests of the objects the cluster starts with in
	// every run (batkube-run --objects).
	Objects []string `json:"objects,omitempty"`
	// Schedulers are the schedulers compared.
	Schedulers []Scheduler `json:"schedulers"`
}

// Scheduler is one scheduler of the matrix and how batkube-run starts it.
// In SchedulerCmd, Sidecars, KubeSchedulerArgs and ServerArgs,
// {repetition} is replaced by the run's repetition (1, 2...), e.g. to seed
// a random scheduler differently in each.
type Scheduler struct {
	Name string `json:"name"`
	// SchedulerCmd replaces the bundled kube-scheduler (--scheduler-cmd).
	SchedulerCmd string `json:"schedulerCmd,omitempty"`
	// SchedulerConfig is a KubeSchedulerConfiguration (--scheduler-config).
	SchedulerConfig string `json:"schedulerConfig,omitempty"`
	// KubeScheduler is another kube-scheduler binary (--kube-scheduler).
	KubeScheduler     string   `json:"kubeScheduler,omitempty"`
	KubeSchedulerArgs []string `json:"kubeSchedulerArgs,omitempty"`
	ServerArgs        []string `json:"serverArgs,omitempty"`
	// Sidecars are started beside the scheduler (--sidecar-cmd).
	Sidecars    []string `json:"sidecars,omitempty"`
	DynamicJobs bool     `json:"dynamicJobs,omitempty"`
	// ControllerManager starts kube-controller-manager beside the
	// scheduler (--controller-manager), with ControllerManagerArgs.
	ControllerManager     bool     `json:"controllerManager,omitempty"`
	ControllerManagerArgs []string `json:"controllerManagerArgs,omitempty"`
	// ControllerManagerWallClock runs it on the wall clock
	// (--controller-manager-wall-clock).
	ControllerManagerWallClock bool `json:"controllerManagerWallClock,omitempty"`
	// Kueue starts Kueue's manager (--kueue), with KueueArgs: a
	// scheduler's entry can then compare Kueue's configurations (its
	// queueing strategies are in the ClusterQueues of its objects).
	Kueue     bool     `json:"kueue,omitempty"`
	KueueArgs []string `json:"kueueArgs,omitempty"`
	// KueueConfig is merged over the run's Kueue configuration
	// (--kueue-config).
	KueueConfig string `json:"kueueConfig,omitempty"`
	// Karpenter starts Karpenter's KWOK provider (--karpenter), with
	// KarpenterEnv in its environment (--karpenter-env) and a provisioning
	// delay (--provisioning-delay, a Go duration such as "30s"): a
	// scheduler's entry can then compare NodePools (in its Objects).
	Karpenter         bool     `json:"karpenter,omitempty"`
	KarpenterEnv      []string `json:"karpenterEnv,omitempty"`
	ProvisioningDelay string   `json:"provisioningDelay,omitempty"`
	// SwitchOffPool keeps the pool hosts asleep while no node is on them
	// (--switch-off-pool: real Batsim, run with --energy; the table then
	// has the energy it says the runs consumed).
	SwitchOffPool bool `json:"switchOffPool,omitempty"`
	// Objects are manifests of this scheduler's runs only, created after
	// the campaign's (a Kueue setting's queues).
	Objects []string `json:"objects,omitempty"`
	// Gangs maps multi-host jobs onto pod groups (--gangs; the default
	// with kube-scheduler 1.37+); NoGangs keeps independent pods
	// (--no-gangs).
	Gangs   bool `json:"gangs,omitempty"`
	NoGangs bool `json:"noGangs,omitempty"`
	// Repetitions, if set, replaces the campaign's for this scheduler.
	Repetitions int `json:"repetitions,omitempty"`
}

// Input is an entry of an axis: its name in the runs' names and its files.
// In the file it is a path, a list of paths, or {name: NAME, files: [...]};
// without a name, it is named after its files (base names without
// extension, joined by "+").
type Input struct {
	Name  string   `json:"name"`
	Files []string `json:"files"`
}

// UnmarshalJSON reads the three forms of an entry.
func (in *Input) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*in = Input{Files: []string{one}}
		return nil
	}
	var several []string
	if err := json.Unmarshal(data, &several); err == nil {
		*in = Input{Files: several}
		return nil
	}
	type plain Input // without this method
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("want a path, a list of paths or {name, files}: %w", err)
	}
	*in = Input(p)
	return nil
}

// MarshalJSON writes the entry in its shortest form.
func (in Input) MarshalJSON() ([]byte, error) {
	type plain Input
	switch {
	case in.Name != "":
		return json.Marshal(plain(in))
	case len(in.Files) == 1:
		return json.Marshal(in.Files[0])
	default:
		return json.Marshal(in.Files)
	}
}

// label is the entry's name, or one made of its files' base names.
func (in Input) label() string {
	if in.Name != "" {
		return in.Name
	}
	parts := make([]string, len(in.Files))
	for i, f := range in.Files {
		base := filepath.Base(f)
		parts[i] = strings.TrimSuffix(base, filepath.Ext(base))
	}
	return strings.Join(parts, "+")
}

// Read reads and checks a campaign file.
func Read(path string) (*Campaign, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("campaign: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("campaign: %s: %w", path, err)
	}
	return c, data, nil
}

// Parse reads and checks a campaign file's content (YAML or JSON); a
// field it does not know is an error.
func Parse(data []byte) (*Campaign, error) {
	var c Campaign
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, err
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// check refuses what would make an ambiguous or empty matrix.
func (c *Campaign) check() error {
	var errs []error
	if len(c.Platforms) == 0 {
		errs = append(errs, errors.New("no platforms"))
	}
	if len(c.Workloads) == 0 {
		errs = append(errs, errors.New("no workloads"))
	}
	if len(c.Schedulers) == 0 {
		errs = append(errs, errors.New("no schedulers"))
	}
	if c.Repetitions < 0 {
		errs = append(errs, fmt.Errorf("repetitions: %d, want at least 1", c.Repetitions))
	}
	for i, p := range c.Platforms {
		if len(p.Files) != 1 || p.Files[0] == "" {
			errs = append(errs, fmt.Errorf("platforms[%d]: want one file, got %q", i, p.Files))
		}
	}
	for i, w := range c.Workloads {
		if len(w.Files) == 0 || slices.Contains(w.Files, "") {
			errs = append(errs, fmt.Errorf("workloads[%d]: want at least one file, got %q", i, w.Files))
		}
	}
	for i, s := range c.Schedulers {
		if s.Repetitions < 0 {
			errs = append(errs, fmt.Errorf("schedulers[%d] (%s): repetitions: %d, want at least 1", i, s.Name, s.Repetitions))
		}
		if s.ProvisioningDelay != "" {
			if d, err := time.ParseDuration(s.ProvisioningDelay); err != nil || d < 0 {
				errs = append(errs, fmt.Errorf("schedulers[%d] (%s): provisioningDelay %q: want a duration such as 30s", i, s.Name, s.ProvisioningDelay))
			}
		}
	}
	errs = append(errs, distinct("platforms", c.Platforms, Input.label)...)
	errs = append(errs, distinct("workloads", c.Workloads, Input.label)...)
	errs = append(errs, distinct("schedulers", c.Schedulers, func(s Scheduler) string { return s.Name })...)
	return errors.Join(errs...)
}

// distinct checks that the entries of an axis have names that make
// distinct, non-empty folder names.
func distinct[T any](axis string, entries []T, name func(T) string) []error {
	var errs []error
	seen := map[string]string{}
	for i, e := range entries {
		n := name(e)
		s := slug(n)
		switch prev, dup := seen[s]; {
		case s == "":
			errs = append(errs, fmt.Errorf("%s[%d]: the name %q makes no folder name: give it a name", axis, i, n))
		case dup:
			errs = append(errs, fmt.Errorf("%s[%d]: the name %q is %q's (both are %q in folder names): give them distinct names", axis, i, n, prev, s))
		default:
			seen[s] = n
		}
	}
	return errs
}

// slug makes a name part of a folder name: lower case letters, digits and
// ".", "_", "+"; anything else becomes a single "-", never two in a row,
// so that "--" can separate the parts of a run's name.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '+':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-")
	if strings.Trim(s, ".") == "" {
		return "" // ".", "..": not folder names
	}
	return s
}
