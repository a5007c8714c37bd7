// Command batkube-report writes one self-contained HTML report of one or
// more runs of batkube-run (their output folders): per run its figures and
// summary, a Gantt chart of the pods on the nodes, cpu and memory
// utilisation, queue length over time and the waiting-time distribution;
// with several runs, a comparison table and the charts side by side. Each
// chart is also written as SVG and PNG files beside the report, for papers.
// The page loads nothing from the network.
//
// The report names each run by a short label: LABEL=RUN_DIR gives it; a run
// of a campaign is otherwise named by the campaign's names of its scheduler
// (its platform and workload when the runs differ in them, its repetition
// when that tells it apart), another run by its folder's name without the
// "--"-separated parts all the runs' names share.
//
// Exit codes: 0 when the report is written, 1 when it could not be, 2 on a
// usage error.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/batkube/batkube/pkg/cli"
	"github.com/batkube/batkube/pkg/report"
	"github.com/batkube/batkube/pkg/screenshot"
)

type options struct {
	Out           string   `short:"o" long:"out" value-name:"FILE" default:"report.html" description:"the HTML report to write"`
	Charts        string   `long:"charts" value-name:"DIR" description:"folder of the charts' SVG and PNG files (default: the report's name without .html, plus -charts)"`
	DPI           int      `long:"png-dpi" default:"150" description:"resolution of the PNG files of the charts (0: SVG only)"`
	Title         string   `long:"title" default:"Batkube simulation report" description:"title of the report"`
	Platform      string   `short:"p" long:"platform" value-name:"FILE" description:"SimGrid platform of the runs (default: the one summary.json names): nodes' names and allocatable resources, for utilisation"`
	MasterHost    string   `short:"m" long:"master-host" value-name:"NAME" description:"the platform's master host, if neither master_host nor a host whose role is master (the run's -m; default: the one summary.json names)"`
	Workloads     []string `short:"w" long:"workload" value-name:"FILE" description:"Batsim workload of the runs, in the runs' order (default: those summary.json names): the jobs' requests, for utilisation"`
	DefaultCPU    string   `long:"node-default-cpu" default:"1" description:"cores of a host that has no cpu/core property (as kubernetes-server's flag of the same name)"`
	Screenshot    string   `long:"screenshot" value-name:"FILE.png" description:"also write a PNG of the report's first screen as a headless Chromium shows it (the documentation's pictures: make pictures)"`
	Browser       string   `long:"browser" value-name:"PATH" description:"the Chromium for --screenshot (default: chromium, chromium-browser or google-chrome on PATH)"`
	DefaultMemory string   `long:"node-default-memory" default:"16Gi" description:"memory of a host that has no memory property (as kubernetes-server's flag of the same name)"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	var opts options
	cmd := command()
	dirs, code, ok := cli.Parse(cmd, &opts, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(dirs) == 0 {
		return cmd.UsageError(stderr, "no run folder given")
	}
	dirs, labels, err := labelledDirs(dirs)
	if err != nil {
		return cmd.UsageError(stderr, "%v", err)
	}
	in := report.Inputs{Platform: opts.Platform, MasterHost: opts.MasterHost, Workloads: opts.Workloads}
	if in.Nodes.DefaultCPU, err = resource.ParseQuantity(opts.DefaultCPU); err != nil {
		fmt.Fprintf(stderr, "batkube-report: --node-default-cpu %q: %v\n", opts.DefaultCPU, err)
		return 2
	}
	if in.Nodes.DefaultMemory, err = resource.ParseQuantity(opts.DefaultMemory); err != nil {
		fmt.Fprintf(stderr, "batkube-report: --node-default-memory %q: %v\n", opts.DefaultMemory, err)
		return 2
	}
	if err := write(opts, in, dirs, labels, stdout); err != nil {
		fmt.Fprintf(stderr, "batkube-report: %v\n", err)
		return 1
	}
	return 0
}

// labelledDirs splits the arguments LABEL=RUN_DIR into the folders and
// their labels ("" where none is given). An argument that is a folder is
// a folder, '=' in its name or not.
func labelledDirs(args []string) (dirs, labels []string, err error) {
	for _, arg := range args {
		label, dir, found := strings.Cut(arg, "=")
		if st, err := os.Stat(arg); !found || (err == nil && st.IsDir()) {
			label, dir = "", arg
		} else if strings.TrimSpace(label) == "" {
			return nil, nil, fmt.Errorf("%q: an empty label (LABEL=RUN_DIR)", arg)
		}
		dirs, labels = append(dirs, dir), append(labels, label)
	}
	return dirs, labels, nil
}

func write(opts options, in report.Inputs, dirs, labels []string, stdout io.Writer) error {
	runs, err := report.LoadAll(dirs, in)
	if err != nil {
		return err
	}
	for i, r := range runs {
		r.Label = labels[i]
	}
	rep, err := report.New(opts.Title, runs)
	if err != nil {
		return err
	}
	charts := opts.Charts
	if charts == "" {
		charts = strings.TrimSuffix(opts.Out, filepath.Ext(opts.Out)) + "-charts"
	}
	if err := rep.Write(opts.Out, charts, opts.DPI); err != nil {
		return err
	}
	for _, r := range rep.Runs {
		for _, n := range r.Run.Notes {
			fmt.Fprintf(stdout, "%s: %s\n", r.Run.Name, n)
		}
	}
	fmt.Fprintf(stdout, "report: %s (charts in %s)\n", opts.Out, charts)
	if opts.Screenshot != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := screenshot.ToFile(ctx, opts.Out, opts.Screenshot, screenshot.Options{Browser: opts.Browser}); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "screenshot: %s\n", opts.Screenshot)
	}
	return nil
}

// command names the command and says what it does, for --help.
func command() cli.Command {
	return cli.Command{Name: "batkube-report", Usage: "[-o report.html] [OPTIONS] [LABEL=]RUN_DIR [[LABEL=]RUN_DIR...]",
		Description: "Writes one self-contained HTML report of the runs whose output folders (batkube-run -o) are given: " +
			"figures, Gantt chart, utilisation, queue length and waiting-time distribution per run, and a comparison of the runs; " +
			"each chart also as SVG and PNG files beside the report. " +
			"The report names each run by a short label: LABEL=RUN_DIR gives it; " +
			"a run of a campaign is otherwise named by the campaign's name of its scheduler " +
			"(with its platform and workload when the runs differ in them, and its repetition when that tells it apart), " +
			"another run by its folder's name without the \"--\"-separated parts all the runs' names share."}
}
