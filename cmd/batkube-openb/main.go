// Command batkube-openb converts the Alibaba GPU-sharing trace (the
// openb_node_list_*.csv and openb_pod_list_*.csv files of
// alibaba/clusterdata's cluster-trace-gpu-v2023) into a Batkube run's
// inputs: a SimGrid platform of the nodes, a Batsim workload of the pods,
// and the Kubernetes objects the pods name (ResourceClaimTemplates of
// their GPUs, PriorityClasses of their qos). The conventions are those of
// package github.com/batkube/batkube/pkg/openb.
//
// The three files go to --out-dir as platform.xml, workload.json and
// objects.yaml, with target-workload.csv, the pod types and popularity
// the FGD policy of examples/schedulers/gpupolicies measures
// fragmentation against (openb.TargetWorkload); the report of what was
// kept and dropped goes to standard error. Then:
//
//	batkube-run -p DIR/platform.xml -w DIR/workload.json --objects DIR/objects.yaml
//
// Exit codes: 0 when the files were written, 1 on an error (unreadable or
// malformed list, nothing left to convert, unwritable output), 2 on a
// usage error.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/batkube/batkube/pkg/atomicfile"

	"github.com/batkube/batkube/pkg/cli"
	"github.com/batkube/batkube/pkg/openb"
)

// The files written into --out-dir.
const (
	platformFile = "platform.xml"
	workloadFile = "workload.json"
	objectsFile  = "objects.yaml"
)

type options struct {
	OutDir            string  `short:"o" long:"out-dir" value-name:"DIR" required:"true" description:"write platform.xml, workload.json and objects.yaml into DIR (created if need be)"`
	From              float64 `long:"from" value-name:"SECONDS" default:"0" description:"keep pods created at or after this time, in the trace's seconds"`
	To                float64 `long:"to" value-name:"SECONDS" default:"0" description:"keep pods created before this time, in the trace's seconds (0: no bound)"`
	MaxPods           int     `long:"max-pods" value-name:"N" default:"0" description:"keep at most the first N pods (after cleaning and the window) in creation order (0: all)"`
	Pending           string  `long:"pending" choice:"drop" choice:"keep" default:"drop" description:"pods the trace never scheduled (no scheduled_time): drop them, or replay them for the time they existed (deletion - creation)"`
	KeepAbsoluteTimes bool    `long:"keep-absolute-times" description:"keep the trace's creation times instead of shifting the first kept pod to 0"`
	ExclusiveGPUs     bool    `long:"exclusive-gpus" description:"the cluster without GPU sharing: GPUs are exclusive devices and a share of a GPU asks for the whole GPU"`
	NoPriority        bool    `long:"no-priority" description:"give pods no PriorityClass (by default the trace's qos maps onto one)"`
	Arrivals          float64 `long:"arrivals" value-name:"PERCENT" default:"0" description:"the FGD paper's arrival-only experiment instead of the trace's times: pods (drawn again at random while short) arrive one every --interval, shuffled, until their GPU requests reach PERCENT % of the cluster's GPUs (the paper: 130), and none leaves while pods arrive; also writes arrivals.csv, which the allocation subcommand reads (0: replay the trace)"`
	Seed              uint64  `long:"seed" value-name:"N" default:"42" description:"with --arrivals, the seed of the draws, the shuffle and the nodes' order"`
	KeepNodeOrder     bool    `long:"keep-node-order" description:"with --arrivals, keep the node list's order and names; by default, as the paper's simulator, the nodes come in an order the seed draws, each name prefixed with its rank (0000-...), so that the scheduler's choice among equally scored nodes, which that order decides, is a random node fixed for the run rather than one of the list's early nodes; also writes nodes.csv, the node list in that order, for gpu-policy-replay"`
	TargetCoverage    float64 `long:"target-coverage" value-name:"PERCENT" default:"95" description:"target-workload.csv (the FGD policy's pod types and popularity, from the pods that fit a node): the most popular types until they account for PERCENT % of those pods (the FGD paper: 95)"`
	Interval          float64 `long:"interval" value-name:"SECONDS" default:"1" description:"with --arrivals, the simulated time between two arrivals"`
	Quiet             bool    `short:"q" long:"quiet" description:"print no report"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "allocation" {
		return runAllocation(args[1:], stdout, stderr)
	}
	var opts options
	cmd := command()
	rest, code, ok := cli.Parse(cmd, &opts, args, stdout, stderr)
	if !ok {
		return code
	}
	switch {
	case len(rest) < 2:
		return cmd.UsageError(stderr, "want a node list and a pod list, got %d file(s)", len(rest))
	case len(rest) > 2:
		return cmd.UsageError(stderr, "unexpected argument %q", rest[2])
	}
	if msg := checkFlags(opts); msg != "" {
		return cmd.UsageError(stderr, "%s", msg)
	}
	nodesPath, podsPath := rest[0], rest[1]
	nodes, err := openb.ReadNodesFile(nodesPath)
	if err != nil {
		fmt.Fprintf(stderr, "batkube-openb: cannot read the node list: %v\n", err)
		return 1
	}
	pods, err := openb.ReadPodsFile(podsPath)
	if err != nil {
		fmt.Fprintf(stderr, "batkube-openb: cannot read the pod list: %v\n", err)
		return 1
	}
	trace := pods
	var arrivals []openb.Arrival
	if opts.Arrivals > 0 {
		if !opts.KeepNodeOrder {
			nodes = openb.RankNodes(nodes, opts.Seed)
		}
		if arrivals, err = openb.Arrivals(nodes, pods, openb.ArrivalOptions{Percent: opts.Arrivals, Seed: opts.Seed, Interval: opts.Interval, ExclusiveGPUs: opts.ExclusiveGPUs}); err != nil {
			fmt.Fprintf(stderr, "batkube-openb: %v\n", err)
			return 1
		}
		pods = openb.ArrivalPods(arrivals)
	}
	w, rep, err := openb.Convert(nodes, pods, openb.Options{
		From:              opts.From,
		To:                opts.To,
		MaxPods:           opts.MaxPods,
		Pending:           openb.PendingPolicy(opts.Pending),
		KeepAbsoluteTimes: opts.KeepAbsoluteTimes,
		ExclusiveGPUs:     opts.ExclusiveGPUs,
		NoPriority:        opts.NoPriority,
	})
	if err != nil {
		if !opts.Quiet && rep.Read > 0 {
			rep.Write(stderr)
		}
		fmt.Fprintf(stderr, "batkube-openb: %s: %v\n", podsPath, err)
		return 1
	}
	// The target workload is the trace's, whatever part of it is replayed.
	types, err := openb.TargetWorkload(nodes, trace, opts.TargetCoverage, opts.ExclusiveGPUs)
	if err != nil {
		fmt.Fprintf(stderr, "batkube-openb: %v\n", err)
		return 1
	}
	origin := "converted from " + filepath.Base(nodesPath) + " and " + filepath.Base(podsPath) + " by batkube-openb" + flagsSummary(opts)
	w.Description = origin
	if err := writeOutputs(opts.OutDir, nodes, w, origin, opts.ExclusiveGPUs); err != nil {
		fmt.Fprintf(stderr, "batkube-openb: %v\n", err)
		return 1
	}
	files := []sideFile{{openb.TargetWorkloadFile, "target workload", func(w io.Writer) error { return openb.WriteTargetWorkload(w, types) }}}
	if opts.Arrivals > 0 && !opts.KeepNodeOrder {
		files = append(files, sideFile{openb.NodesFile, "node list", func(w io.Writer) error { return openb.WriteNodes(w, nodes) }})
	}
	if arrivals != nil {
		files = append(files, sideFile{openb.ArrivalsFile, "arrivals", func(w io.Writer) error {
			return openb.WriteArrivals(w, arrivals, openb.GPUCapacity(nodes))
		}})
	}
	for _, f := range files {
		var b bytes.Buffer
		if err = f.write(&b); err == nil {
			err = atomicfile.Write(filepath.Join(opts.OutDir, f.name), b.Bytes())
		}
		if err != nil {
			fmt.Fprintf(stderr, "batkube-openb: %s: %v\n", f.what, err)
			return 1
		}
	}
	if !opts.Quiet {
		rep.Write(stderr)
		fmt.Fprintf(stderr, "%d nodes; %s, %s, %s and %s written to %s\n", len(nodes), platformFile, workloadFile, objectsFile, openb.TargetWorkloadFile, opts.OutDir)
		if n := len(arrivals); n > 0 {
			// Every pod holds what it got until one interval after the
			// last arrival: the experiment is over then.
			fmt.Fprintf(stderr, "%d arrivals, the last at %g s: end the run one interval later with batkube-run --end-at %g\n",
				n, arrivals[n-1].ArrivedAt, arrivals[n-1].ArrivedAt+opts.Interval)
		}
	}
	return 0
}

// sideFile is a file written beside the three outputs: its name in the
// output folder, what it holds (for an error) and its writer.
type sideFile struct {
	name, what string
	write      func(io.Writer) error
}

// checkFlags checks the values go-flags cannot, naming the flag at fault.
func checkFlags(o options) string {
	switch {
	case o.From < 0:
		return fmt.Sprintf("--from %g: want 0 or more", o.From)
	case o.To < 0:
		return fmt.Sprintf("--to %g: want 0 (no bound) or more", o.To)
	case o.To > 0 && o.To <= o.From:
		return fmt.Sprintf("--from %g --to %g: the window is empty", o.From, o.To)
	case o.MaxPods < 0:
		return fmt.Sprintf("--max-pods %d: want 0 (all) or more", o.MaxPods)
	case o.Arrivals < 0:
		return fmt.Sprintf("--arrivals %g: want a percent above 0, or 0 to replay the trace", o.Arrivals)
	case !(o.TargetCoverage > 0 && o.TargetCoverage <= 100):
		return fmt.Sprintf("--target-coverage %g: want a percent above 0, at most 100", o.TargetCoverage)
	case !(o.Interval > 0):
		return fmt.Sprintf("--interval %g: want a time above 0", o.Interval)
	case o.KeepNodeOrder && o.Arrivals == 0:
		return "--keep-node-order: the trace's replay keeps the node list's order; only --arrivals ranks the nodes"
	case o.Arrivals > 0 && (o.From > 0 || o.To > 0 || o.MaxPods > 0 || o.Pending != string(openb.PendingDrop) || o.KeepAbsoluteTimes):
		return "--arrivals sets the pods and their times: it takes none of --from, --to, --max-pods, --pending, --keep-absolute-times"
	}
	return ""
}

// flagsSummary lists the options that change the conversion, for the
// outputs' description (not the output folder, so that it does not depend
// on where the files go).
func flagsSummary(o options) string {
	var s string
	if o.From > 0 {
		s += fmt.Sprintf(" --from %g", o.From)
	}
	if o.To > 0 {
		s += fmt.Sprintf(" --to %g", o.To)
	}
	if o.MaxPods > 0 {
		s += fmt.Sprintf(" --max-pods %d", o.MaxPods)
	}
	if o.Arrivals > 0 {
		s += fmt.Sprintf(" --arrivals %g --seed %d --interval %g", o.Arrivals, o.Seed, o.Interval)
		if o.KeepNodeOrder {
			s += " --keep-node-order"
		}
	}
	if o.Pending != string(openb.PendingDrop) {
		s += " --pending " + o.Pending
	}
	for _, f := range []struct {
		set  bool
		name string
	}{{o.KeepAbsoluteTimes, "--keep-absolute-times"}, {o.ExclusiveGPUs, "--exclusive-gpus"}, {o.NoPriority, "--no-priority"}} {
		if f.set {
			s += " " + f.name
		}
	}
	return s
}

// writeOutputs writes the three files into dir, each whole or not at all.
func writeOutputs(dir string, nodes []openb.Node, w openb.Workload, origin string, exclusive bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create the output folder: %w", err)
	}
	var platform, workload, objects bytes.Buffer
	if err := openb.WritePlatform(&platform, nodes, openb.PlatformOptions{ExclusiveGPUs: exclusive, Comment: origin}); err != nil {
		return fmt.Errorf("platform: %w", err)
	}
	if err := w.WriteJSON(&workload); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	if err := w.WriteObjects(&objects, origin+"; load with batkube-run --objects"); err != nil {
		return fmt.Errorf("objects: %w", err)
	}
	for name, data := range map[string][]byte{platformFile: platform.Bytes(), workloadFile: workload.Bytes(), objectsFile: objects.Bytes()} {
		if err := atomicfile.Write(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	return nil
}

// command names the command and says what it does, for --help.
func command() cli.Command {
	return cli.Command{Name: "batkube-openb", Usage: "[OPTIONS] NODES.csv PODS.csv",
		Description: "Converts the Alibaba GPU-sharing trace (openb_node_list_*.csv, openb_pod_list_*.csv) into a SimGrid platform " +
			"(one host a node; GPUs shared through DRA consumable capacity), a Batsim workload (one delay job a pod, run time " +
			"deletion_time - scheduled_time) and the Kubernetes objects its pods name (ResourceClaimTemplates, PriorityClasses), " +
			"written to --out-dir as platform.xml, workload.json and objects.yaml (with target-workload.csv, the pod types and popularity " +
			"the FGD policy's scheduler takes); run them with batkube-run -p DIR/platform.xml " +
			"-w DIR/workload.json --objects DIR/objects.yaml. The report of kept and dropped pods goes to standard error."}
}
