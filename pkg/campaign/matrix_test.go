package campaign

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// matrixFile is a campaign with every axis above one: 2 schedulers (one
// repeated 3 times, the other twice), 2 platforms, 2 workloads (one of two
// files) — (3 + 2) × 2 × 2 = 20 runs.
const matrixFile = `
platforms:
  - p/platform_4.xml
  - {name: big, files: [p/platform_16.xml]}
workloads:
  - w/delay_10.json
  - [w/delay_10.json, w/parallel.json]
repetitions: 2
objects: [o/priority-classes.yaml]
schedulers:
  - name: Random (seeded)
    schedulerCmd: bin/random --kubeconfig {kubeconfig} --seed {repetition}
    serverArgs: [--settle=signal, '--x={repetition}']
    repetitions: 3
  - name: kube-scheduler
    schedulerConfig: c.yaml
`

func mustParse(t *testing.T, data string) *Campaign {
	t.Helper()
	c, err := Parse([]byte(data))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

// TestRunsCoverTheMatrixOnce: every (scheduler, platform, workload,
// repetition) is one run, at the index it has in the list, with a name of
// its own made of its parts; repetitions come first in the order.
func TestRunsCoverTheMatrixOnce(t *testing.T) {
	c := mustParse(t, matrixFile)
	runs := c.Runs()
	if len(runs) != 20 {
		t.Fatalf("%d runs, want (3 + 2) × 2 × 2 = 20", len(runs))
	}
	type cell struct {
		scheduler, platform, workload string
		rep                           int
	}
	seen := map[cell]int{}
	names := map[string]bool{}
	for i, r := range runs {
		if r.Index != i {
			t.Errorf("run %d has index %d", i, r.Index)
		}
		k := cell{r.Scheduler.Name, r.Platform.label(), r.Workload.label(), r.Repetition}
		if prev, dup := seen[k]; dup {
			t.Errorf("runs %d and %d are both %+v", prev, i, k)
		}
		seen[k] = i
		if names[r.Name] {
			t.Errorf("name %s twice", r.Name)
		}
		names[r.Name] = true
		if want := r.Setting + "--" + fmt.Sprint(r.Repetition); r.Name != want {
			t.Errorf("run %d: name %s, want %s", i, r.Name, want)
		}
		if i > 0 && r.Repetition < runs[i-1].Repetition {
			t.Errorf("run %d: repetition %d after %d: want repetition-major order", i, r.Repetition, runs[i-1].Repetition)
		}
	}
	for _, s := range []struct {
		name string
		reps int
	}{{"Random (seeded)", 3}, {"kube-scheduler", 2}} {
		for _, p := range []string{"platform_4", "big"} {
			for _, w := range []string{"delay_10", "delay_10+parallel"} {
				for rep := 1; rep <= s.reps; rep++ {
					if _, ok := seen[cell{s.name, p, w, rep}]; !ok {
						t.Errorf("no run of %s on %s / %s, repetition %d", s.name, p, w, rep)
					}
				}
			}
		}
	}
	for index, want := range map[int]string{
		0:  "random-seeded--platform_4--delay_10--1",
		1:  "kube-scheduler--platform_4--delay_10--1",
		3:  "kube-scheduler--platform_4--delay_10+parallel--1",
		7:  "kube-scheduler--big--delay_10+parallel--1",
		8:  "random-seeded--platform_4--delay_10--2",
		16: "random-seeded--platform_4--delay_10--3",
		19: "random-seeded--big--delay_10+parallel--3",
	} {
		if runs[index].Name != want {
			t.Errorf("run %d is %s, want %s", index, runs[index].Name, want)
		}
	}
	// A pure function of the file: parsed again, the same runs.
	if again := mustParse(t, matrixFile).Runs(); !reflect.DeepEqual(again, runs) {
		t.Error("the same file gave other runs")
	}
}

// TestRunConfigFillsInTheRepetition: a run's launch configuration has its
// inputs and the scheduler's settings, {repetition} replaced.
func TestRunConfigFillsInTheRepetition(t *testing.T) {
	c := mustParse(t, matrixFile)
	r := c.Runs()[19] // random, big, two workloads, repetition 3
	cfg := r.Config(launchBase(), "out")
	if cfg.Platform != "p/platform_16.xml" || !reflect.DeepEqual(cfg.Workloads, []string{"w/delay_10.json", "w/parallel.json"}) {
		t.Errorf("inputs %s %v", cfg.Platform, cfg.Workloads)
	}
	if cfg.SchedulerCommand != "bin/random --kubeconfig {kubeconfig} --seed 3" || !reflect.DeepEqual(cfg.ServerArgs, []string{"--settle=signal", "--x=3"}) {
		t.Errorf("scheduler %q, server args %q: want {repetition} replaced by 3", cfg.SchedulerCommand, cfg.ServerArgs)
	}
	if cfg.OutDir != filepath.Join("out", r.Name) || cfg.BinDir != "bin-dir" || !reflect.DeepEqual(cfg.Objects, []string{"o/priority-classes.yaml"}) {
		t.Errorf("out %s, bin %s, objects %v", cfg.OutDir, cfg.BinDir, cfg.Objects)
	}
	if kube := c.Runs()[1].Config(launchBase(), "out"); kube.SchedulerConfig != "c.yaml" || kube.SchedulerCommand != "" {
		t.Errorf("kube-scheduler run: config %q, command %q", kube.SchedulerConfig, kube.SchedulerCommand)
	}
}

// TestRunConfigStartsKarpenter: a scheduler entry's Karpenter settings
// reach the run's launch configuration.
func TestRunConfigStartsKarpenter(t *testing.T) {
	c := mustParse(t, "platforms: [p.xml]\nworkloads: [w.json]\nschedulers:\n"+
		"  - {name: k, karpenter: true, karpenterEnv: [BATCH_IDLE_DURATION=2s], provisioningDelay: 45s, objects: [np.yaml]}\n")
	cfg := c.Runs()[0].Config(launchBase(), "out")
	if !cfg.Karpenter || !reflect.DeepEqual(cfg.KarpenterEnv, []string{"BATCH_IDLE_DURATION=2s"}) || cfg.ProvisioningDelay != 45*time.Second ||
		!reflect.DeepEqual(cfg.Objects, []string{"np.yaml"}) {
		t.Errorf("Karpenter %t, env %q, delay %v, objects %q; want it started with the entry's settings", cfg.Karpenter, cfg.KarpenterEnv, cfg.ProvisioningDelay, cfg.Objects)
	}
}

func TestParseRefusesAmbiguousFiles(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"unknown field", "platforms: [a]\nworkloads: [b]\nschedulers: [{name: x, schedulerCmnd: y}]", "schedulerCmnd"},
		{"unknown field in an entry", "platforms: [a]\nworkloads: [{name: b, file: [c]}]\nschedulers: [{name: x}]", "file"},
		{"empty axes", "schedulers: [{name: x}]", "no platforms"},
		{"two files for a platform", "platforms: [[a, b]]\nworkloads: [w]\nschedulers: [{name: x}]", "want one file"},
		{"same folder name", "platforms: [a]\nworkloads: [w]\nschedulers: [{name: My Sched}, {name: my-sched}]", "distinct names"},
		{"same file base names", "platforms: [a/p.xml, b/p.xml]\nworkloads: [w]\nschedulers: [{name: x}]", "distinct names"},
		{"nameless scheduler", "platforms: [a]\nworkloads: [w]\nschedulers: [{schedulerCmd: y}]", "give it a name"},
		{"negative repetitions", "platforms: [a]\nworkloads: [w]\nrepetitions: -1\nschedulers: [{name: x}]", "repetitions"},
		{"provisioning delay", "platforms: [a]\nworkloads: [w]\nschedulers: [{name: x, karpenter: true, provisioningDelay: 30}]", "provisioningDelay"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse([]byte(tc.file)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: %v, want an error about %q", err, tc.want)
			}
		})
	}
}

func TestSlugSeparatesParts(t *testing.T) {
	for in, want := range map[string]string{
		"kube-scheduler 1.37 (bin-packing)": "kube-scheduler-1.37-bin-packing",
		"a -- b":                            "a-b",
		"delay_10+parallel":                 "delay_10+parallel",
		"..":                                "",
		"(x)":                               "x",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(slug(in), "--") {
			t.Errorf("slug(%q) contains --", in)
		}
	}
}

// TestExampleCampaignsParse: the campaign files of the repository are
// valid, and the files and binaries they name exist (binaries as make
// build names them).
func TestExampleCampaignsParse(t *testing.T) {
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..", "..")
	for _, file := range []string{"examples/schedulers/compare.yaml", "examples/campaign/campaign.yaml", "examples/karpenter/compare.yaml"} {
		c, _, err := Read(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.Runs() {
			paths := append([]string{r.Platform.Files[0], r.Scheduler.SchedulerConfig}, r.Workload.Files...)
			paths = append(paths, r.Objects...)
			for _, p := range paths {
				if _, err := os.Stat(filepath.Join(root, p)); p != "" && err != nil {
					t.Errorf("%s: %s: %v", file, r.Name, err)
				}
			}
			if cmd := strings.Fields(r.Scheduler.SchedulerCmd); len(cmd) > 0 && strings.HasPrefix(cmd[0], "bin/") {
				name := strings.TrimPrefix(cmd[0], "bin/")
				if _, err := os.Stat(filepath.Join(root, "examples", "schedulers", name, "main.go")); err != nil {
					t.Errorf("%s: %s: %s is not an example scheduler make build builds", file, r.Name, cmd[0])
				}
			}
		}
	}
}
