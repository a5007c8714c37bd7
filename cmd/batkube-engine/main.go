// Command batkube-engine runs Batkube's embedded simulation engine in place
// of Batsim: it takes Batsim's main flags, connects to a decision process
// over the Batsim 4.x protocol, and writes Batsim's _jobs.csv,
// _schedule.csv and _machine_states.csv.
//
// The engine computes job durations as flops / host speed (or a delay's
// seconds) on SimGrid's clock, shares a host's cores between the jobs that
// run on it with --enable-compute-sharing, lets jobs communicate over the
// platform's links and routes and Batsim's own messages cross them (as
// SimGrid's ptask_L07 model; --no-network makes Batsim's messages
// instants), simulates machines becoming unavailable and available again
// (--events), and has no I/O or energy model: see package
// github.com/batkube/batkube/pkg/engine, and use real Batsim when those
// matter.
//
// Exit codes: 0 on success; 1 when the run fails, including a reply that
// breaks the protocol or asks what real Batsim would abort on (the error,
// on stderr, names the event and its field; the outputs hold the jobs
// finished so far); 2 on a usage error.
package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/batkube/batkube/pkg/cli"
	"github.com/batkube/batkube/pkg/enginerun"
)

// options are the command's flags, named after Batsim's.
type options struct {
	Platform        string        `short:"p" long:"platform" value-name:"FILE" required:"true" description:"The SimGrid platform to simulate"`
	Workloads       []string      `short:"w" long:"workload" value-name:"FILE" description:"A workload JSON file to simulate (repeatable)"`
	Events          []string      `long:"events" value-name:"FILE" description:"An external events file to simulate (repeatable): machines becoming unavailable and available again"`
	ForwardUnknown  bool          `long:"forward-unknown-events" description:"Forward the events of unknown types of the events files to the decision process"`
	MasterHost      string        `short:"m" long:"master-host" value-name:"NAME" default:"master_host" description:"The host of the platform that manages the simulation, and is no resource (a host with the property role=master may be it instead)"`
	Export          string        `short:"e" long:"export" value-name:"PREFIX" default:"out/" description:"The prefix of the output files: PREFIX_jobs.csv, PREFIX_schedule.csv and PREFIX_machine_states.csv (its directory is created if missing)"`
	NoMachineStates bool          `long:"disable-machine-state-tracing" description:"Do not write PREFIX_machine_states.csv"`
	Endpoint        string        `short:"s" long:"socket-endpoint" value-name:"ENDPOINT" default:"tcp://localhost:28000" description:"The decision process's socket endpoint (localhost means 127.0.0.1)"`
	ComputeSharing  bool          `long:"enable-compute-sharing" description:"Let several jobs share a compute resource"`
	NoNetwork       bool          `long:"no-network" description:"Hear of each job's end at its date, ignoring the latency of the route from its first host to the master host (which Batsim's end message pays)"`
	DynamicJobs     bool          `long:"enable-dynamic-jobs" description:"Accept jobs and profiles registered by the decision process"`
	AckDynamicJobs  bool          `long:"acknowledge-dynamic-jobs" description:"Send a JOB_SUBMITTED for each REGISTER_JOB"`
	ForwardProfiles bool          `long:"forward-profiles-on-submission" description:"Attach the job's profile to JOB_SUBMITTED"`
	SchedConfig     string        `long:"sched-cfg" value-name:"STRING" description:"The scheduler configuration string, forwarded in SIMULATION_BEGINS"`
	WorkloadNames   string        `long:"workload-names" choice:"batsim" choice:"file" default:"batsim" description:"How to name workloads (job ids are NAME!id): w0, w1... as Batsim, or after the file"`
	Timeout         time.Duration `long:"timeout" value-name:"DURATION" default:"0s" description:"Give up when the decision process does not answer a message within DURATION (0: wait forever, as Batsim)"`
	Quiet           bool          `short:"q" long:"quiet" description:"Do not print progress"`
}

func main() { cli.Main(run) }

// run runs the command and returns its exit code.
var run = cli.FlagsOnly(command(), simulate)

// simulate runs the engine as opts say and returns the exit code.
func simulate(ctx context.Context, opts options, stdout, stderr io.Writer) int {
	naming, err := enginerun.ParseWorkloadNaming(opts.WorkloadNames)
	if err != nil {
		return command().UsageError(stderr, "%v", err)
	}
	if opts.Timeout < 0 {
		return command().UsageError(stderr, "--timeout must not be negative")
	}

	cfg := enginerun.Config{
		Platform:               opts.Platform,
		MasterHost:             opts.MasterHost,
		Workloads:              opts.Workloads,
		Events:                 opts.Events,
		ForwardUnknownEvents:   opts.ForwardUnknown,
		WorkloadNaming:         naming,
		Endpoint:               opts.Endpoint,
		ExportPrefix:           opts.Export,
		DisableMachineStates:   opts.NoMachineStates,
		ComputeSharing:         opts.ComputeSharing,
		NoNetwork:              opts.NoNetwork,
		DynamicJobs:            opts.DynamicJobs,
		AcknowledgeDynamicJobs: opts.AckDynamicJobs,
		ForwardProfiles:        opts.ForwardProfiles,
		SchedConfig:            opts.SchedConfig,
		Timeout:                opts.Timeout,
	}
	if !opts.Quiet {
		fmt.Fprintf(stderr, "batkube-engine: waiting for the decision process at %s\n", enginerun.NormalizeEndpoint(opts.Endpoint))
		cfg.Progress = func(p enginerun.Progress) { printProgress(stderr, p) }
	}
	sum, err := enginerun.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "batkube-engine: %v\n", err)
		return 1
	}
	prefix := opts.Export
	if prefix == "" {
		prefix = enginerun.DefaultExportPrefix
	}
	printSummary(stdout, sum, prefix, !opts.NoMachineStates)
	return 0
}

func printProgress(w io.Writer, p enginerun.Progress) {
	fmt.Fprintf(w, "batkube-engine: t=%.1fs simulated, %d/%d jobs finished, %s elapsed\n",
		p.Now, p.Finished, p.Total, p.Wall.Round(time.Millisecond))
}

func printSummary(w io.Writer, s enginerun.Summary, prefix string, machineStates bool) {
	fmt.Fprintf(w, "jobs: %d (%d succeeded, %d failed, %d reached their walltime, %d killed, %d rejected)\n",
		s.Jobs, s.Succeeded, s.Failed, s.WalltimeReached, s.Killed, s.Rejected)
	fmt.Fprintf(w, "makespan: %.6fs, mean waiting time: %.6fs\n", s.Makespan, s.MeanWaitingTime)
	waiting := 0.0
	if s.WallTime > 0 {
		waiting = 100 * s.SchedulingTime.Seconds() / s.WallTime.Seconds()
	}
	fmt.Fprintf(w, "simulated %.3fs in %s (%.0fx real time), %d messages, %.0f%% of the time waiting for the decision process\n",
		s.SimulatedTime, s.WallTime.Round(time.Millisecond), s.SpeedUp(), s.Messages, waiting)
	for _, note := range s.NetworkNotes {
		fmt.Fprintf(w, "network: %s\n", note)
	}
	fmt.Fprintf(w, "outputs: %s_jobs.csv, %s_schedule.csv", prefix, prefix)
	if machineStates {
		fmt.Fprintf(w, ", %s_machine_states.csv", prefix)
	}
	fmt.Fprintln(w)
}

// command names the command and says what it does, for --help.
func command() cli.Command {
	return cli.Command{Name: "batkube-engine", Usage: "-p PLATFORM [-w WORKLOAD]... [OPTIONS]",
		Description: "Runs Batkube's embedded simulation engine as Batsim 4.x would run: it connects to the " +
			"decision process at the socket endpoint, simulates the workloads on the platform, and writes Batsim's " +
			"PREFIX_jobs.csv, PREFIX_schedule.csv and PREFIX_machine_states.csv. Jobs take flops / host speed (or their delay), " +
			"their communications cross the platform's links and routes, and Batsim's own messages too, as SimGrid's ptask_L07 " +
			"model has them; there is no I/O or energy model: use real Batsim when those matter."}
}
