// Command batkube-run runs a whole simulation with one command: Batkube's
// API server and broker, a scheduler (the bundled kube-scheduler by
// default), and Batsim — or, when no batsim is installed, Batkube's
// embedded engine. It shows progress, prints a summary and leaves every
// output in one folder.
//
// Exit codes: 0 when the simulation ran to its end, 1 when it failed, 2 on
// a usage error.
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

	"github.com/batkube/batkube/pkg/cli"
	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/report"
	"github.com/batkube/batkube/pkg/swf"
)

type options struct {
	Platform          string        `short:"p" long:"platform" value-name:"FILE" required:"true" description:"SimGrid platform file (hosts become nodes)"`
	Workloads         []string      `short:"w" long:"workload" value-name:"FILE" required:"true" description:"Batsim workload file (jobs become pods); repeat for several workloads"`
	Out               string        `short:"o" long:"out" value-name:"DIR" default:"out/run" description:"folder of the outputs: _jobs.csv, _schedule.csv, summary.json, every process's log, the kubeconfig"`
	Batsim            string        `long:"batsim" value-name:"auto|embedded|PATH" default:"auto" description:"the simulator: a batsim 4.x binary (auto: the one on PATH, if any) or Batkube's embedded engine"`
	SchedulerCommand  string        `long:"scheduler-cmd" value-name:"COMMAND" description:"run this shell command as the scheduler instead of the bundled kube-scheduler; {kubeconfig} is replaced by the run's kubeconfig (KUBECONFIG is set too)"`
	SchedulerConfig   string        `long:"scheduler-config" value-name:"FILE" description:"KubeSchedulerConfiguration for the bundled kube-scheduler (its kubeconfig is replaced by the run's)"`
	KubeScheduler     string        `long:"kube-scheduler" value-name:"PATH" description:"run this kube-scheduler binary instead of the bundled one (e.g. bin/kube-scheduler-1.18), configured as the bundled one: its metrics tell the server when it is done"`
	KubeSchedulerArg  []string      `long:"kube-scheduler-arg" value-name:"ARG" description:"pass ARG to kube-scheduler, e.g. --kube-scheduler-arg=--feature-gates=GenericWorkload=true (repeatable)"`
	SidecarCmd        []string      `long:"sidecar-cmd" value-name:"COMMAND" description:"start this shell command beside the scheduler, e.g. a scheduler extender (repeatable); {kubeconfig} is the run's kubeconfig and {port:NAME} a free loopback port, the same here and in --scheduler-config; the scheduler starts once the ports it names accept connections"`
	NoScheduler       bool          `long:"no-scheduler" description:"start no scheduler: bring your own, pointed at the kubeconfig printed at start"`
	DynamicJobs       bool          `long:"dynamic-jobs" description:"let clients create pods during the run (Batsim's dynamic jobs)"`
	ControllerMgr     bool          `long:"controller-manager" description:"start kube-controller-manager 1.37 (bin/kube-controller-manager, built by make upstream: the controllers' code is upstream's, their clock the run's simulated clock) with the job, replicaset, deployment, garbage-collector, ttl-after-finished, resourceclaim, taint-eviction and daemonset controllers: the pods of Jobs, Deployments and DaemonSets created during the run (kubectl, --objects) become Batsim jobs (implies --dynamic-jobs); each step waits until its process is idle"`
	ControllerMgrWall bool          `long:"controller-manager-wall-clock" description:"run kube-controller-manager on the wall clock: its delays (a Job's batched sync, 1 s; its back-off after a failed pod, 10 s doubling) are waited out in wall time at the instant they start, rather than passing in simulated time as on a real cluster (the default, read from the run's clock page by the kube-controller-manager of make upstream)"`
	ControllerMgrArg  []string      `long:"controller-manager-arg" value-name:"ARG" description:"pass ARG to kube-controller-manager, e.g. --controller-manager-arg=--concurrent-job-syncs=10 (repeatable)"`
	Kueue             bool          `long:"kueue" description:"start Kueue's manager (bin/kueue, built by make upstream from sigs.k8s.io/kueue; on the run's simulated clock) after installing its CRDs and webhooks: --objects then give its ResourceFlavors, ClusterQueues and LocalQueues, and Jobs labelled kueue.x-k8s.io/queue-name wait in its queues until it admits them (implies --controller-manager); each step waits until it is idle"`
	KueueConfig       string        `long:"kueue-config" value-name:"FILE" description:"Kueue Configuration fields (YAML) merged over the run's: fairSharing, waitForPodsReady, featureGates..."`
	KueueArg          []string      `long:"kueue-arg" value-name:"ARG" description:"pass ARG to Kueue's manager, e.g. --kueue-arg=--zap-log-level=2 (repeatable)"`
	Karpenter         bool          `long:"karpenter" description:"start Karpenter v1.15.0's KWOK provider (bin/karpenter, built by make upstream; unmodified, on the run's simulated clock) after installing its CRDs (bin/karpenter-manifests.yaml): --objects then give its NodePools and KWOKNodeClasses; the platform's hosts with the properties pool and instance_type (and price, per hour) are no nodes but the capacity it launches nodes onto (their instance types are written to OUT/karpenter-instance-types.json for it): each node it launches is mapped onto a free pool host of its instance type and is Ready after --provisioning-delay, its pods run on that host, and its host goes back to the pool when the node is deleted; _nodes.csv logs the nodes (implies --controller-manager); each step waits until it is idle"`
	KarpenterEnv      []string      `long:"karpenter-env" value-name:"NAME=VALUE" description:"set NAME=VALUE in Karpenter's environment, e.g. --karpenter-env=BATCH_IDLE_DURATION=2s (repeatable)"`
	ProvisioningDelay time.Duration `long:"provisioning-delay" default:"0s" value-name:"DURATION" description:"with --karpenter: simulated time from a launched node's creation to its Ready condition (a cloud's boot time, e.g. 45s); 0: Ready at the instant it is created"`
	SwitchOffPool     bool          `long:"switch-off-pool" description:"with --karpenter and real Batsim (--batsim PATH; the embedded engine has no power states): run Batsim with --energy and keep the pool hosts that have Batsim's sleep_pstates property asleep while no launched node is on them, so that _schedule.csv's consumed_joules and time_sleeping count them; a launched node is Ready once --provisioning-delay has passed and its host has switched on"`
	Gangs             bool          `long:"gangs" description:"map each job asking for several hosts onto a pod group (scheduling.k8s.io/v1beta1 PodGroup, gang of minCount its hosts) so that its pods are bound all at once or not at all, as Batsim places a job; on by default with the bundled kube-scheduler (1.37+, run with --feature-gates=GenericWorkload=true; Batkube creates each gang's PodGroup held at the job's submission and releases it, by lowering its minCount to the gang's size, once kube-scheduler holds all its pods and is otherwise idle; a waiting one is renewed and released again when room is freed, since kube-scheduler retries a group only on a real-time back-off); another scheduler must understand pod groups itself"`
	NoGangs           bool          `long:"no-gangs" description:"independent pods for multi-host jobs, bound one by one, even with kube-scheduler 1.37+ (partly bound jobs may then hold each other's nodes until the pending timeout)"`
	MasterHost        string        `short:"m" long:"master-host" value-name:"NAME" description:"the platform's host Batsim makes its master (Batsim's -m; default master_host, or the host whose role property is master): needed by platforms with neither, such as Batsim's cluster_locality_*.xml"`
	Events            []string      `long:"events" value-name:"FILE" description:"a Batsim external-events file (machines becoming unavailable and available again), for Batsim or the embedded engine (repeatable): an unavailable machine's node goes NotReady with the unreachable taints and the jobs on it are killed"`
	EndAt             float64       `long:"end-at" value-name:"SECONDS" description:"end the simulation at this simulated time: the first step at or after it rejects the jobs still pending and kills the running ones instead of waiting for the scheduler, and later jobs are rejected (batkube-openb --arrivals says when its experiment's last arrival is); 0: run to the end"`
	SWFCoresPerHost   int           `long:"swf-cores-per-host" value-name:"C" description:"a workload FILE.swf (or .swf.gz) is a Parallel Workloads Archive trace, converted into OUT/FILE.json: 0 (the default) is Batsim's convention, one processor is one host held alone; with C > 0 a job of P processors asks for ceil(P/C) hosts whose pods request the cores (and memory) of their share"`
	SWFFrom           float64       `long:"swf-from" value-name:"SECONDS" description:"of a trace, keep the jobs submitted from this time on (the trace's own submit times)"`
	SWFTo             float64       `long:"swf-to" value-name:"SECONDS" description:"of a trace, keep the jobs submitted before this time (0: to the end)"`
	SWFMaxJobs        int           `long:"swf-max-jobs" value-name:"N" description:"of a trace, keep at most the first N jobs (after --swf-from; 0: all)"`
	SWFWalltime       string        `long:"swf-walltime" choice:"max" choice:"requested" choice:"none" default:"max" description:"a trace job's walltime: max (Batsim's converter: the larger of the requested time and twice the run time), requested, or none"`
	Objects           []string      `long:"objects" value-name:"FILE" description:"Kubernetes objects (YAML or JSON manifest) the cluster starts with, e.g. the PriorityClasses a workload's pods name (repeatable)"`
	APIPort           int           `long:"port" default:"0" description:"port of the API server on 127.0.0.1 (0: a free one)"`
	BatsimPort        int           `long:"batsim-port" default:"0" description:"port of the Batsim socket on 127.0.0.1 (0: a free one)"`
	BinDir            string        `long:"bin-dir" value-name:"DIR" description:"where kubernetes-server, batkube-engine and kube-scheduler are (default: beside this binary)"`
	ServerArgs        []string      `long:"server-arg" value-name:"ARG" description:"pass ARG to kubernetes-server, e.g. --server-arg=--settle-quiet=100ms (repeatable; see kubernetes-server --help); {port:NAME} is a free port, as in --sidecar-cmd"`
	BatsimArgs        []string      `long:"batsim-arg" value-name:"ARG" description:"pass ARG to batsim or batkube-engine (repeatable)"`
	Repeat            int           `long:"repeat" default:"1" value-name:"N" description:"run the simulation N times (outputs in --out/1, --out/2...) and print the mean and spread of makespan and waiting time: kube-scheduler's choice among equally scored nodes varies from run to run, so one run of it is one sample"`
	Report            bool          `long:"report" description:"at the end, write the run's report.html (figures, Gantt chart, utilisation, queue, waiting times; see batkube-report) and its charts (report-charts/) into --out; with --repeat, each run's in its folder and one of all the runs, with their mean ± spread, in --out"`
	ProgressInterval  time.Duration `long:"progress-interval" default:"1s" description:"how often progress is shown"`
	Quiet             bool          `short:"q" long:"quiet" description:"show no progress"`
}

func main() { cli.Main(run) }

// run runs the command and returns its exit code.
var run = cli.FlagsOnly(command(), simulate)

// simulate runs the simulations opts ask for and returns the exit code.
func simulate(ctx context.Context, opts options, stdout, stderr io.Writer) int {
	show := newProgressPrinter(stderr)
	cfg := launch.Config{
		Platform:                   opts.Platform,
		Workloads:                  opts.Workloads,
		OutDir:                     opts.Out,
		BinDir:                     opts.BinDir,
		Batsim:                     opts.Batsim,
		SchedulerCommand:           opts.SchedulerCommand,
		SchedulerConfig:            opts.SchedulerConfig,
		KubeScheduler:              opts.KubeScheduler,
		KubeSchedulerArgs:          opts.KubeSchedulerArg,
		Sidecars:                   opts.SidecarCmd,
		ControllerManager:          opts.ControllerMgr,
		ControllerManagerArgs:      opts.ControllerMgrArg,
		ControllerManagerWallClock: opts.ControllerMgrWall,
		Kueue:                      opts.Kueue,
		KueueArgs:                  opts.KueueArg,
		KueueConfig:                opts.KueueConfig,
		Karpenter:                  opts.Karpenter,
		KarpenterEnv:               opts.KarpenterEnv,
		ProvisioningDelay:          opts.ProvisioningDelay,
		SwitchOffPool:              opts.SwitchOffPool,
		NoScheduler:                opts.NoScheduler,
		DynamicJobs:                opts.DynamicJobs,
		Gangs:                      opts.Gangs,
		NoGangs:                    opts.NoGangs,
		MasterHost:                 opts.MasterHost,
		Events:                     opts.Events,
		EndAt:                      time.Duration(opts.EndAt * float64(time.Second)),
		SWF: swf.Options{CoresPerHost: opts.SWFCoresPerHost, From: opts.SWFFrom, To: opts.SWFTo, MaxJobs: opts.SWFMaxJobs,
			Walltime: swf.WalltimePolicy(opts.SWFWalltime)},
		Objects:          opts.Objects,
		APIPort:          opts.APIPort,
		BatsimPort:       opts.BatsimPort,
		ServerArgs:       opts.ServerArgs,
		BatsimArgs:       opts.BatsimArgs,
		ProgressInterval: opts.ProgressInterval,
		Logf: func(format string, args ...any) {
			show.clear()
			fmt.Fprintf(stderr, "batkube-run: "+format+"\n", args...)
		},
		Ready: func(c launch.Cluster) {
			fmt.Fprintf(stderr, "batkube-run: API server at %s (kubectl --kubeconfig %s ...)\n", c.URL, c.Kubeconfig)
		},
	}
	if !opts.Quiet {
		cfg.Progress = show.print
	}
	if opts.EndAt < 0 {
		fmt.Fprintf(stderr, "batkube-run: --end-at %g: want a simulated time of 0 (run to the end) or more\n", opts.EndAt)
		return 2
	}
	if opts.Repeat < 1 {
		fmt.Fprintf(stderr, "batkube-run: --repeat %d: want at least 1\n", opts.Repeat)
		return 2
	}
	var sums []launch.Summary
	for i := 1; i <= opts.Repeat; i++ {
		if opts.Repeat > 1 {
			cfg.OutDir = filepath.Join(opts.Out, strconv.Itoa(i))
			fmt.Fprintf(stderr, "batkube-run: run %d of %d (outputs in %s)\n", i, opts.Repeat, cfg.OutDir)
		}
		sum, err := launch.Run(ctx, cfg)
		show.clear()
		if err != nil {
			fmt.Fprintf(stderr, "batkube-run: %v\n", err)
			if sum.OutDir != "" {
				fmt.Fprintf(stderr, "batkube-run: outputs so far in %s\n", sum.OutDir)
			}
			return 1
		}
		engine := "Batkube's embedded engine"
		if sum.Engine != launch.BatsimEmbedded {
			engine = sum.Engine
		}
		fmt.Fprintf(stdout, "simulated by:  %s\n", engine)
		sum.Write(stdout)
		sums = append(sums, sum)
		if opts.Report {
			if err := writeReport(stdout, cfg.OutDir, []string{cfg.OutDir}, opts); err != nil {
				fmt.Fprintf(stderr, "batkube-run: the report: %v\n", err)
				return 1
			}
		}
	}
	if opts.Repeat > 1 {
		rep := launch.Repeat(sums)
		rep.Write(stdout)
		if err := launch.WriteJSON(filepath.Join(opts.Out, "repeat.json"), rep); err != nil {
			fmt.Fprintf(stderr, "batkube-run: %v\n", err)
			return 1
		}
		if opts.Report {
			var dirs []string
			for _, s := range sums {
				dirs = append(dirs, s.OutDir)
			}
			if err := writeReport(stdout, opts.Out, dirs, opts); err != nil {
				fmt.Fprintf(stderr, "batkube-run: the report: %v\n", err)
				return 1
			}
		}
	}
	return 0
}

// writeReport writes into dir the report of the runs in dirs (report.html
// and report-charts/), the runs grouped when there are several.
func writeReport(stdout io.Writer, dir string, dirs []string, opts options) error {
	in := report.Inputs{Platform: opts.Platform, Workloads: opts.Workloads}
	runs, err := report.LoadAll(dirs, in)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("Batkube run: %s, %s", filepath.Base(opts.Platform), strings.Join(baseNames(opts.Workloads), ", "))
	rep, err := report.New(title, runs)
	if err != nil {
		return err
	}
	if len(runs) > 1 {
		names := make([]string, len(runs))
		for i, r := range runs {
			names[i] = r.Name
		}
		if _, err := rep.AddGroup(fmt.Sprintf("all %d runs", len(runs)), names...); err != nil {
			return err
		}
	}
	html := filepath.Join(dir, "report.html")
	if err := rep.Write(html, filepath.Join(dir, "report-charts"), 150); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report:        %s\n", html)
	return nil
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// progressPrinter shows progress on one line that it rewrites on a
// terminal, or as a line every few seconds otherwise (a log, CI).
type progressPrinter struct {
	w        io.Writer
	terminal bool
	shown    bool
	last     time.Time
}

func newProgressPrinter(w io.Writer) *progressPrinter {
	p := &progressPrinter{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

func (p *progressPrinter) print(pr launch.Progress) {
	total := "?"
	if pr.Total >= 0 {
		total = strconv.Itoa(pr.Total)
	}
	line := fmt.Sprintf("t=%s simulated  jobs: %d/%s done, %d running, %d pending",
		(time.Duration(pr.Now * float64(time.Second))).Round(time.Second), pr.Done, total, pr.Running, pr.Pending)
	if w := pr.Workloads; w != nil {
		line += fmt.Sprintf("  Workloads: %d pending, %d admitted, %d finished", w.Pending, w.QuotaReserved+w.Admitted, w.Finished)
	}
	if pr.TimedObjectsLeft > 0 {
		line += fmt.Sprintf("  %d timed objects to come", pr.TimedObjectsLeft)
	}
	line += "  wall " + pr.Wall.Round(100*time.Millisecond).String()
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.shown = true
		return
	}
	if time.Since(p.last) >= 5*time.Second {
		p.last = time.Now()
		fmt.Fprintln(p.w, line)
	}
}

// clear ends the progress line on a terminal.
func (p *progressPrinter) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// command names the command and says what it does, for --help.
func command() cli.Command {
	return cli.Command{Name: "batkube-run", Usage: "-p PLATFORM -w WORKLOAD [-w WORKLOAD]... [OPTIONS]",
		Description: "Runs a whole simulation: Batkube's API server and broker, a scheduler (the bundled " +
			"kube-scheduler unless told otherwise) and Batsim, or Batkube's embedded engine when no batsim is installed. " +
			"Shows progress, prints a summary and leaves every output in the --out folder."}
}
