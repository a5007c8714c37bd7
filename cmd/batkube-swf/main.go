// Command batkube-swf converts a trace of the Parallel Workloads Archive, in
// the Standard Workload Format (SWF, plain or gzip-compressed), into a
// Batsim workload of delay jobs that Batsim and Batkube can run. The
// conventions and the cleaning rules are those of package
// github.com/batkube/batkube/pkg/swf.
//
// The workload goes to --out (default: standard output), the report of what
// was kept and dropped to standard error.
//
// Exit codes: 0 when the workload was written, 1 on an error (unreadable or
// malformed trace, nothing left to convert, unwritable output), 2 on a
// usage error.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/batkube/batkube/pkg/atomicfile"

	"github.com/batkube/batkube/pkg/cli"
	"github.com/batkube/batkube/pkg/swf"
)

type options struct {
	Out               string  `short:"o" long:"out" value-name:"FILE" description:"write the workload JSON to FILE (default: standard output)"`
	CoresPerHost      int     `short:"c" long:"cores-per-host" value-name:"N" default:"0" description:"cores of a host: a job of P processors asks for ceil(P/N) hosts whose pods request ceil(P/hosts) cores and their memory; 0 is Batsim's convention, one processor per host and no cpu/memory requests"`
	MemoryFromUsed    bool    `long:"memory-from-used" description:"with --cores-per-host, take the used memory (field 7) when the requested memory (field 10) is unknown"`
	Processors        string  `long:"processors" choice:"requested" choice:"allocated" default:"requested" description:"which processor count comes first, the other being the fallback when it is unknown (Batsim's converter uses allocated)"`
	Walltime          string  `long:"walltime" choice:"max" choice:"requested" choice:"none" default:"max" description:"walltime: max(requested time, factor x run time) as Batsim's converter; the requested time alone (none when unknown); or none"`
	WalltimeFactor    float64 `long:"walltime-factor" value-name:"F" default:"2" description:"the factor of the run time with --walltime=max"`
	From              float64 `long:"from" value-name:"SECONDS" default:"0" description:"keep jobs submitted at or after this time, in the trace's own submit times"`
	To                float64 `long:"to" value-name:"SECONDS" default:"0" description:"keep jobs submitted before this time, in the trace's own submit times (0: no bound)"`
	MaxJobs           int     `long:"max-jobs" value-name:"N" default:"0" description:"keep at most the first N jobs (after cleaning and the window) in submit order (0: all)"`
	NbRes             int     `long:"nb-res" value-name:"N" default:"0" description:"the platform size in hosts, nb_res (0: the header's MaxProcs or MaxNodes through --cores-per-host, else the biggest job); bigger jobs are dropped"`
	KeepAbsoluteTimes bool    `long:"keep-absolute-times" description:"keep the trace's submit times instead of shifting the first kept job to 0"`
	DropFailed        bool    `long:"drop-failed" description:"drop failed jobs (status 0), kept by default since they ran"`
	DropCancelled     bool    `long:"drop-cancelled" description:"drop cancelled jobs that did run (status 5, run time > 0), kept by default; cancelled jobs that never ran are always dropped"`
	Quiet             bool    `short:"q" long:"quiet" description:"print no report"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var opts options
	cmd := command()
	rest, code, ok := cli.Parse(cmd, &opts, args, stdout, stderr)
	if !ok {
		return code
	}
	switch {
	case len(rest) == 0:
		return cmd.UsageError(stderr, "no trace given")
	case len(rest) > 1:
		return cmd.UsageError(stderr, "unexpected argument %q", rest[1])
	}
	if msg := checkFlags(opts); msg != "" {
		return cmd.UsageError(stderr, "%s", msg)
	}
	trace := rest[0]

	var t *swf.Trace
	var err error
	if trace == "-" {
		t, err = swf.ReadFrom(stdin)
		if err != nil {
			err = fmt.Errorf("standard input: %w", err)
		}
	} else {
		t, err = swf.ReadFile(trace)
	}
	if err != nil {
		fmt.Fprintf(stderr, "batkube-swf: cannot read the trace: %v\n", err)
		return 1
	}
	w, rep, err := swf.Convert(t, swf.Options{
		CoresPerHost:      opts.CoresPerHost,
		MemoryFromUsed:    opts.MemoryFromUsed,
		Processors:        swf.ProcessorSource(opts.Processors),
		Walltime:          swf.WalltimePolicy(opts.Walltime),
		WalltimeFactor:    opts.WalltimeFactor,
		From:              opts.From,
		To:                opts.To,
		MaxJobs:           opts.MaxJobs,
		NbRes:             opts.NbRes,
		KeepAbsoluteTimes: opts.KeepAbsoluteTimes,
		DropFailed:        opts.DropFailed,
		DropCancelled:     opts.DropCancelled,
	})
	if err != nil {
		if !opts.Quiet && rep.Read > 0 {
			rep.Write(stderr)
		}
		fmt.Fprintf(stderr, "batkube-swf: %s: %v\n", trace, err)
		return 1
	}
	w.Description = description(trace, args)
	if err := writeWorkload(opts.Out, w, stdout); err != nil {
		fmt.Fprintf(stderr, "batkube-swf: %v\n", err)
		return 1
	}
	if !opts.Quiet {
		rep.Write(stderr)
		if opts.Out != "" {
			fmt.Fprintf(stderr, "workload written to %s\n", opts.Out)
		}
	}
	return 0
}

// checkFlags checks the values go-flags cannot, naming the flag at fault.
func checkFlags(o options) string {
	switch {
	case o.CoresPerHost < 0:
		return fmt.Sprintf("--cores-per-host %d: want 0 or more", o.CoresPerHost)
	case !(o.WalltimeFactor > 0):
		return fmt.Sprintf("--walltime-factor %g: want a positive number", o.WalltimeFactor)
	case o.MaxJobs < 0:
		return fmt.Sprintf("--max-jobs %d: want 0 (all) or more", o.MaxJobs)
	case o.NbRes < 0:
		return fmt.Sprintf("--nb-res %d: want 0 (automatic) or more", o.NbRes)
	case o.To > 0 && o.To <= o.From:
		return fmt.Sprintf("--from %g --to %g: the window is empty", o.From, o.To)
	case o.MemoryFromUsed && o.CoresPerHost == 0:
		return "--memory-from-used needs --cores-per-host: without it profiles carry no memory"
	}
	return ""
}

// description says where the workload comes from (without the output path,
// so that it does not depend on where the output goes).
func description(trace string, args []string) string {
	var kept []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o" || a == "--out":
			i++
			continue
		case strings.HasPrefix(a, "--out=") || strings.HasPrefix(a, "-o") || a == trace:
			continue
		case a == "-q" || a == "--quiet" || a == "--":
			continue
		}
		kept = append(kept, a)
	}
	d := "converted from " + filepath.Base(trace) + " by batkube-swf"
	if len(kept) > 0 {
		d += " " + strings.Join(kept, " ")
	}
	return d
}

// writeWorkload writes the workload to path, or to stdout when path is
// empty; a file is written whole or not at all.
func writeWorkload(path string, w swf.Workload, stdout io.Writer) error {
	if path == "" {
		return w.WriteJSON(stdout)
	}
	if err := atomicfile.WriteWith(path, w.WriteJSON); err != nil {
		return fmt.Errorf("cannot write the workload: %w", err)
	}
	return nil
}

// command names the command and says what it does, for --help.
func command() cli.Command {
	return cli.Command{Name: "batkube-swf", Usage: "[OPTIONS] TRACE.swf",
		Description: "Converts a Standard Workload Format trace (Parallel Workloads Archive; plain or gzip-compressed; " +
			"'-' reads standard input) into a Batsim workload of delay jobs. The workload goes to --out or standard output, " +
			"the report of kept and dropped jobs to standard error."}
}
