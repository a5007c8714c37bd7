// Command batkube-campaign runs a campaign: a matrix of schedulers ×
// platforms × workloads × repetitions read from a campaign file (see
// examples/campaign/README.md), N runs at a time on this machine, each
// into OUT/<run>/, resumable (finished runs are kept), and ends with the
// table that compares the settings and the HTML report of every run.
//
// Beyond one machine, the same file runs as a Kubernetes Indexed Job:
// --emit-job writes the Job (and the ConfigMap of the file), whose pod K
// runs `batkube-campaign --index K` (K read from JOB_COMPLETION_INDEX),
// and --report-only makes the comparison from the collected outputs.
//
//	batkube-campaign -j 2 -o out/campaign examples/campaign/campaign.yaml
//	batkube-campaign --list examples/campaign/campaign.yaml
//	batkube-campaign --emit-job --image registry/batkube:v1 --output-claim outputs examples/campaign/campaign.yaml | kubectl apply -f -
//	batkube-campaign --report-only -o collected/ examples/campaign/campaign.yaml
//
// Exit codes: 0 when every run asked for has finished, 1 when one failed
// or the campaign was interrupted, 2 on a usage error.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/batkube/batkube/pkg/campaign"
	"github.com/batkube/batkube/pkg/cli"
	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/screenshot"
)

type options struct {
	Out      string        `short:"o" long:"out" value-name:"DIR" default:"out/campaign" description:"folder of the outputs: a folder per run, campaign.md (the table), campaign.json, report.html and its charts"`
	Jobs     int           `short:"j" long:"jobs" value-name:"N" default:"1" description:"how many runs run at once (each is three processes: on 2 cores, 1 or 2)"`
	Index    string        `long:"index" value-name:"K" description:"run only run K of the matrix (0-based, as --list numbers them); default: the JOB_COMPLETION_INDEX environment variable, as a Kubernetes Indexed Job sets it"`
	List     bool          `long:"list" description:"print the runs, their index and their state, and exit"`
	Rerun    bool          `long:"rerun" description:"run again the runs whose folder already holds a finished run"`
	Report   bool          `long:"report-only" description:"run nothing: make the table and the report from the runs already in --out (e.g. the outputs of the Kubernetes Job, copied here)"`
	Title    string        `long:"title" value-name:"TEXT" description:"title of the report (default: the campaign file's name)"`
	DPI      int           `long:"png-dpi" default:"150" value-name:"DPI" description:"resolution of the PNG files of the charts (0: SVG only)"`
	Shot     string        `long:"screenshot" value-name:"FILE.png" description:"also write a PNG of the report's first screen as a headless Chromium shows it (the documentation's pictures: make pictures)"`
	BinDir   string        `long:"bin-dir" value-name:"DIR" description:"where Batkube's and the schedulers' binaries are (default: beside this binary)"`
	Batsim   string        `long:"batsim" value-name:"auto|embedded|PATH" default:"auto" description:"the simulator (see batkube-run --batsim)"`
	Interval time.Duration `long:"progress-interval" value-name:"DURATION" default:"10s" description:"how often the running runs' progress is shown"`
	Quiet    bool          `short:"q" long:"quiet" description:"show no progress lines (starts, ends and failures are still shown)"`

	Job jobOptions `group:"Kubernetes Job (--emit-job)"`
}

type jobOptions struct {
	Emit        bool   `long:"emit-job" description:"run nothing: write to standard output the Kubernetes manifest that runs the campaign as an Indexed Job (one pod per run) and the ConfigMap of the campaign file"`
	Name        string `long:"job-name" value-name:"NAME" description:"name of the Job and the ConfigMap (default: batkube-campaign-<file name>)"`
	Namespace   string `long:"namespace" value-name:"NS" description:"namespace of the Job (default: the kubeconfig's)"`
	Image       string `long:"image" value-name:"IMAGE" default:"batkube:latest" description:"container image built from examples/campaign/Dockerfile"`
	Parallelism int    `long:"parallelism" value-name:"N" default:"4" description:"how many runs (pods) run at once"`
	Claim       string `long:"output-claim" value-name:"PVC" default:"batkube-campaign-out" description:"PersistentVolumeClaim the outputs go to (ReadWriteMany when pods may land on several nodes)"`
	Retries     int    `long:"retries-per-run" value-name:"N" default:"1" description:"how many times a failed run is retried (backoffLimitPerIndex)"`
	CPU         string `long:"job-cpu" value-name:"CPU" default:"2" description:"cpu request of each pod"`
	Memory      string `long:"job-memory" value-name:"BYTES" default:"4Gi" description:"memory request of each pod"`
}

func main() {
	cli.Main(func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		return run(ctx, args, os.Getenv, stdout, stderr)
	})
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var opts options
	cmd := command()
	rest, code, ok := cli.Parse(cmd, &opts, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(rest) != 1 {
		return cmd.UsageError(stderr, "want one campaign file, got %d arguments", len(rest))
	}
	file := rest[0]
	c, data, err := campaign.Read(file)
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	runs := c.Runs()
	if opts.Title == "" {
		opts.Title = "Batkube campaign " + filepath.Base(file)
	}

	switch {
	case opts.Job.Emit:
		return emitJob(c, data, file, opts, stdout, stderr)
	case opts.List:
		for _, r := range runs {
			state, _, err := campaign.Inspect(r, opts.Out)
			if err != nil {
				fmt.Fprintf(stderr, "batkube-campaign: %v\n", err)
				return 1
			}
			fmt.Fprintf(stdout, "%d\t%s\t%s\n", r.Index, r.Name, state)
		}
		return 0
	case opts.Report:
		return writeResults(c, opts, stdout, stderr, true)
	}

	index := opts.Index
	if index == "" {
		index = getenv("JOB_COMPLETION_INDEX")
	}
	if index != "" {
		k, err := strconv.Atoi(index)
		if err != nil || k < 0 || k >= len(runs) {
			return cmd.UsageError(stderr, "index %q: want a run's index, 0 to %d", index, len(runs)-1)
		}
		runs = runs[k : k+1]
	}
	if opts.Jobs < 1 {
		return cmd.UsageError(stderr, "--jobs %d: want at least 1", opts.Jobs)
	}

	show := &printer{w: stderr, logs: map[string][]string{}}
	if index != "" {
		fmt.Fprintf(stderr, "batkube-campaign: run %s of %s; outputs in %s\n", index, c.Describe(), opts.Out)
	} else {
		fmt.Fprintf(stderr, "batkube-campaign: %s, %d at a time; outputs in %s\n", c.Describe(), opts.Jobs, opts.Out)
	}
	runner := &campaign.Runner{
		Out:      opts.Out,
		Parallel: opts.Jobs,
		Rerun:    opts.Rerun,
		Base:     launch.Config{BinDir: opts.BinDir, Batsim: opts.Batsim, ProgressInterval: time.Second},
		Events:   show.event,
	}
	if !opts.Quiet {
		runner.ProgressEvery = opts.Interval
	}
	results, err := runner.Run(ctx, runs)
	if err != nil {
		fmt.Fprintf(stderr, "batkube-campaign: %v: run it again to go on (finished runs are kept)\n", err)
		return 1
	}
	var failed []string
	for _, res := range results {
		if res.Err != nil {
			failed = append(failed, res.Run.Name)
		}
	}
	code = 0
	if index == "" { // one run of a Job: the comparison is made once all are in
		code = writeResults(c, opts, stdout, stderr, false)
	}
	if len(failed) > 0 {
		fmt.Fprintf(stderr, "batkube-campaign: %d of %d runs failed: %s (their logs are in their folders; run again to retry them)\n",
			len(failed), len(results), strings.Join(failed, ", "))
		return 1
	}
	return code
}

// writeResults makes the table and the report of the finished runs.
// Missing runs make it fail when strict.
func writeResults(c *campaign.Campaign, opts options, stdout, stderr io.Writer, strict bool) int {
	res, err := campaign.Collect(c, opts.Out, opts.Title)
	if err != nil {
		fmt.Fprintf(stderr, "batkube-campaign: %v\n", err)
		return 1
	}
	if err := res.Table(stdout); err != nil {
		fmt.Fprintf(stderr, "batkube-campaign: %v\n", err)
		return 1
	}
	if err := res.Write(opts.Out, opts.DPI); err != nil {
		fmt.Fprintf(stderr, "batkube-campaign: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "batkube-campaign: report %s, table %s\n", filepath.Join(opts.Out, "report.html"), filepath.Join(opts.Out, "campaign.md"))
	if opts.Shot != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := screenshot.ToFile(ctx, filepath.Join(opts.Out, "report.html"), opts.Shot, screenshot.Options{}); err != nil {
			fmt.Fprintf(stderr, "batkube-campaign: %v\n", err)
			return 1
		}
	}
	if strict && len(res.Missing) > 0 {
		fmt.Fprintf(stderr, "batkube-campaign: %d of %d runs have not finished\n", len(res.Missing), len(c.Runs()))
		return 1
	}
	return 0
}

func emitJob(c *campaign.Campaign, data []byte, file string, opts options, stdout, stderr io.Writer) int {
	j := opts.Job
	o := campaign.JobOptions{Name: j.Name, Namespace: j.Namespace, Image: j.Image, Parallelism: j.Parallelism,
		OutputClaim: j.Claim, RetriesPerRun: j.Retries, CPU: j.CPU, Memory: j.Memory}
	if o.Name == "" {
		o.Name = campaign.JobName(file)
	}
	if opts.Batsim != "auto" {
		o.Args = append(o.Args, "--batsim", opts.Batsim)
	}
	if opts.Quiet {
		o.Args = append(o.Args, "--quiet")
	}
	if err := campaign.EmitJob(stdout, c, data, o); err != nil {
		return command().UsageError(stderr, "%v", err)
	}
	return 0
}

// printer shows a campaign's events as lines. What a run logs (a
// scheduler that exited before the end...) is shown only if the run then
// fails: in a run that succeeds it is noise.
type printer struct {
	w    io.Writer
	logs map[string][]string // by run, since it started
}

func (p *printer) event(e campaign.Event) {
	counts := fmt.Sprintf("[%d done, %d failed, %d running, %d left]", e.Counts.Done, e.Counts.Failed, e.Counts.Running, e.Counts.Left)
	switch e.Kind {
	case campaign.EventSkipped:
		fmt.Fprintf(p.w, "batkube-campaign: kept    %s (finished before) %s\n", e.Run.Name, counts)
	case campaign.EventStarted:
		why := map[campaign.State]string{
			campaign.Unfinished: ", from scratch: its folder held an unfinished run",
			campaign.Failed:     ", from scratch: its folder held a failed run",
			campaign.Changed:    ", from scratch: its folder held a run with other settings",
			campaign.Finished:   ", again (--rerun)",
		}[e.State]
		fmt.Fprintf(p.w, "batkube-campaign: started %s (run %d%s) %s\n", e.Run.Name, e.Run.Index, why, counts)
	case campaign.EventDone:
		delete(p.logs, e.Run.Name)
		s := e.Summary
		fmt.Fprintf(p.w, "batkube-campaign: done    %s (makespan %.3f s, mean waiting %.3f s, %d jobs; wall %s) %s\n",
			e.Run.Name, s.Makespan, s.MeanWaitingTime, s.Jobs, s.Wall.Round(100*time.Millisecond), counts)
	case campaign.EventFailed:
		fmt.Fprintf(p.w, "batkube-campaign: FAILED  %s %s: %v\n", e.Run.Name, counts, e.Err)
		for _, m := range p.logs[e.Run.Name] {
			fmt.Fprintf(p.w, "batkube-campaign: %s, before: %s\n", e.Run.Name, m)
		}
		delete(p.logs, e.Run.Name)
	case campaign.EventLog:
		p.logs[e.Run.Name] = append(p.logs[e.Run.Name], e.Message)
	case campaign.EventProgress:
		parts := []string{counts}
		for _, r := range e.Running {
			if !r.HasProgress {
				parts = append(parts, r.Run.Name+" starting")
				continue
			}
			jobs := fmt.Sprintf("%d jobs done", r.Progress.Done)
			if r.Progress.Total >= 0 {
				jobs = fmt.Sprintf("%d/%d jobs done", r.Progress.Done, r.Progress.Total)
			}
			parts = append(parts, fmt.Sprintf("%s t=%s %s", r.Run.Name,
				time.Duration(r.Progress.Now*float64(time.Second)).Round(time.Second), jobs))
		}
		fmt.Fprintf(p.w, "batkube-campaign: %s\n", strings.Join(parts, "  "))
	}
}

// command names the command and says what it does, for --help.
func command() cli.Command {
	return cli.Command{Name: "batkube-campaign", Usage: "[OPTIONS] CAMPAIGN.yaml",
		Description: "Runs the matrix of a campaign file — schedulers × platforms × workloads × repetitions — " +
			"--jobs at a time, each run into --out/<run>; finished runs are kept when it runs again. Ends with the table " +
			"that compares the settings (mean ± standard deviation over repetitions) and report.html. With --emit-job, " +
			"writes the Kubernetes Indexed Job that runs the same file on a cluster, one pod per run."}
}
