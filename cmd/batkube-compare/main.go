// Command batkube-compare runs several schedulers on one platform and
// workload, one after the other, and prints the table that compares them:
// makespan, mean and 95th-percentile waiting time, slowdown, cpu
// utilisation. The schedulers ("families") are listed in a YAML file, each
// with the batkube-run settings that start it; see
// examples/schedulers/compare.yaml.
//
//	batkube-compare -f examples/schedulers/compare.yaml -o out/compare
//	batkube-compare --table -f examples/schedulers/compare.yaml -o out/compare   # tabulate the runs already done
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	flags "github.com/jessevdk/go-flags"
	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/compare"
	"github.com/batkube/batkube/pkg/launch"
)

type options struct {
	File   string   `short:"f" long:"families" value-name:"FILE" default:"examples/schedulers/compare.yaml" description:"the families to compare, with the platform and workloads (YAML)"`
	Out    string   `short:"o" long:"out" value-name:"DIR" default:"out/compare" description:"folder of the runs (one sub-folder per family), compare.md and compare.json"`
	Only   []string `long:"only" value-name:"NAME" description:"run only this family (repeatable)"`
	Rerun  bool     `long:"rerun" description:"run again the families whose folder already holds a finished run"`
	Table  bool     `long:"table" description:"run nothing: tabulate the runs already in --out"`
	BinDir string   `long:"bin-dir" value-name:"DIR" description:"where Batkube's and the schedulers' binaries are (default: beside this binary)"`
	Batsim string   `long:"batsim" value-name:"auto|embedded|PATH" default:"embedded" description:"the simulator (see batkube-run --batsim)"`
	Quiet  bool     `short:"q" long:"quiet" description:"show no progress"`
}

// campaign is the families file.
type campaign struct {
	Platform  string   `json:"platform"`
	Workloads []string `json:"workloads"`
	// Objects the cluster starts with in every run (batkube-run --objects).
	Objects  []string `json:"objects"`
	Families []family `json:"families"`
}

// family is one scheduler and how batkube-run starts it. Paths are
// relative to the directory batkube-compare runs in.
type family struct {
	Name              string   `json:"name"`
	SchedulerCmd      string   `json:"schedulerCmd"`
	SchedulerConfig   string   `json:"schedulerConfig"`
	KubeScheduler     string   `json:"kubeScheduler"`
	KubeSchedulerArgs []string `json:"kubeSchedulerArgs"`
	ServerArgs        []string `json:"serverArgs"`
	Sidecars          []string `json:"sidecars"`
	DynamicJobs       bool     `json:"dynamicJobs"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var opts options
	parser := flags.NewParser(&opts, flags.Default&^flags.PrintErrors)
	parser.Name = "batkube-compare"
	parser.LongDescription = "Runs each scheduler family of a families file on its platform and workloads (one " +
		"batkube-run each, into --out/<family>) and prints the table that compares them."
	if _, err := parser.ParseArgs(args); err != nil {
		var ferr *flags.Error
		if errors.As(err, &ferr) && ferr.Type == flags.ErrHelp {
			fmt.Fprintln(stdout, ferr.Message)
			return 0
		}
		fmt.Fprintf(stderr, "batkube-compare: %v\n", err)
		return 2
	}
	c, err := readCampaign(opts.File)
	if err != nil {
		fmt.Fprintf(stderr, "batkube-compare: %v\n", err)
		return 2
	}
	var figures []compare.Figures
	for i, f := range c.Families {
		if len(opts.Only) > 0 && !contains(opts.Only, f.Name) {
			continue
		}
		dir := filepath.Join(opts.Out, slug(f.Name))
		_, statErr := os.Stat(filepath.Join(dir, finishedMark))
		done := statErr == nil
		if !opts.Table && (!done || opts.Rerun) {
			fmt.Fprintf(stderr, "batkube-compare: [%d/%d] %s (outputs in %s)\n", i+1, len(c.Families), f.Name, dir)
			if err := runFamily(ctx, c, f, dir, opts, stderr); err != nil {
				fmt.Fprintf(stderr, "batkube-compare: %s: %v\n", f.Name, err)
				return 1
			}
		} else if !done {
			fmt.Fprintf(stderr, "batkube-compare: %s: no finished run in %s: skipped\n", f.Name, dir)
			continue
		}
		fig, err := compare.Read(f.Name, dir, compare.Setting{Platform: c.Platform, Workloads: c.Workloads})
		if err != nil {
			fmt.Fprintf(stderr, "batkube-compare: %s: %v\n", f.Name, err)
			return 1
		}
		figures = append(figures, fig)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "Platform `%s`, workloads `%s`.\n\n", c.Platform, strings.Join(c.Workloads, "`, `"))
	if err := compare.Table(&table, figures); err != nil {
		fmt.Fprintf(stderr, "batkube-compare: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, table.String())
	if err := os.MkdirAll(opts.Out, 0o755); err == nil {
		err = errors.Join(os.WriteFile(filepath.Join(opts.Out, "compare.md"), []byte(table.String()), 0o644),
			launch.WriteJSON(filepath.Join(opts.Out, "compare.json"), figures))
		if err != nil {
			fmt.Fprintf(stderr, "batkube-compare: %v\n", err)
			return 1
		}
	}
	return 0
}

func runFamily(ctx context.Context, c campaign, f family, dir string, opts options, stderr io.Writer) error {
	cfg := launch.Config{
		Platform: c.Platform, Workloads: c.Workloads, Objects: c.Objects, OutDir: dir, BinDir: opts.BinDir, Batsim: opts.Batsim,
		SchedulerCommand: f.SchedulerCmd, SchedulerConfig: f.SchedulerConfig, KubeScheduler: f.KubeScheduler,
		KubeSchedulerArgs: f.KubeSchedulerArgs, ServerArgs: f.ServerArgs, Sidecars: f.Sidecars, DynamicJobs: f.DynamicJobs,
		Logf: func(format string, args ...any) { fmt.Fprintf(stderr, "batkube-compare: "+format+"\n", args...) },
	}
	if !opts.Quiet {
		cfg.Progress = func(p launch.Progress) {
			fmt.Fprintf(stderr, "\r  t=%.0fs simulated, %d jobs done, %d pending, %d running   ", p.Now, p.Done, p.Pending, p.Running)
		}
	}
	// A failed rerun must not leave the old run passing for finished.
	if err := os.Remove(filepath.Join(dir, finishedMark)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	_, err := launch.Run(ctx, cfg)
	if !opts.Quiet {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, finishedMark), nil, 0o644)
}

// finishedMark marks a family's folder whose run finished: batkube-compare
// skips it unless --rerun.
const finishedMark = ".finished"

func readCampaign(path string) (campaign, error) {
	var c campaign
	data, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case c.Platform == "":
		return c, fmt.Errorf("%s: no platform", path)
	case len(c.Workloads) == 0:
		return c, fmt.Errorf("%s: no workloads", path)
	case len(c.Families) == 0:
		return c, fmt.Errorf("%s: no families", path)
	}
	seen := map[string]bool{}
	for _, f := range c.Families {
		if f.Name == "" || seen[slug(f.Name)] {
			return c, fmt.Errorf("%s: every family needs a distinct name (%q)", path, f.Name)
		}
		seen[slug(f.Name)] = true
	}
	return c, nil
}

// slug turns a family name into a folder name.
func slug(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
