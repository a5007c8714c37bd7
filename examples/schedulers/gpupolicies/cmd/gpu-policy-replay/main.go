// Command gpu-policy-replay plays the FGD paper's arrival-only experiment
// with the six policies alone, without Kubernetes (package replay), to
// measure what DRA's first fit costs each of them, and checks a
// kube-scheduler run of bin/gpu-scheduler against them.
//
//	gpu-policy-replay [--policies LIST] [--gpus first-fit|paper|both] [--ties first|draw] [--workload FILE]
//	    [--paper FILE] [--step PERCENT] NODES.csv PODS.csv ARRIVALS.csv
//
// prints, for each policy and way of taking GPUs, the share of the GPUs
// allocated as arrivals grow (as batkube-openb allocation prints a run's),
// beside the paper's artifact if given;
//
//	gpu-policy-replay check --policy NAME [--workload FILE] [--seed N] NODES.csv PODS.csv ARRIVALS.csv RUN_DIR
//
// checks every placement of a run (its _pods.csv) against the policy and
// first fit (replay.Check), prints the disagreements and exits 1 if any.
// NODES.csv is the node list in the run's order and names (nodes.csv of
// batkube-openb --arrivals, or the trace's list with --keep-node-order),
// PODS.csv the trace's pod list,
// ARRIVALS.csv and the target workload (FILE, for fgd) what batkube-openb
// --arrivals wrote beside it. Exit codes: 0 done (check: no
// disagreement), 1 an error or a disagreement, 2 a usage error.
package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/batkube/batkube/examples/schedulers/gpupolicies/policy"
	"github.com/batkube/batkube/examples/schedulers/gpupolicies/replay"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "check" {
		return check(args[1:], stdout, stderr)
	}
	return simulate(args, stdout, stderr)
}

// inputs are the lists every mode reads.
type inputs struct {
	nodes    []replay.Node
	arrivals []replay.Arrival
	workload policy.Workload
}

func readInputs(nodesPath, podsPath, arrivalsPath, workloadPath string) (inputs, error) {
	var in inputs
	var err error
	if in.nodes, err = replay.ReadNodes(nodesPath); err != nil {
		return in, err
	}
	pods, err := replay.ReadPods(podsPath)
	if err != nil {
		return in, err
	}
	if in.arrivals, _, err = replay.ReadArrivals(arrivalsPath, pods); err != nil {
		return in, err
	}
	if workloadPath != "" {
		if in.workload, err = policy.ReadWorkloadFile(workloadPath); err != nil {
			return in, err
		}
	}
	return in, nil
}

func simulate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gpu-policy-replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policies := fs.String("policies", strings.Join(replay.Policies(), ","), "the policies to play, comma-separated")
	gpus := fs.String("gpus", "both", "which GPUs of a node a pod takes: first-fit (DRA's allocator, bin/gpu-scheduler's), paper (each policy's own), or both")
	workload := fs.String("workload", "", "fgd's target workload (target-workload.csv of batkube-openb)")
	paper := fs.String("paper", "", "the paper's allocation (fgd-paper-allocation-default.csv), printed beside")
	step := fs.Float64("step", 10, "print every STEP percent of arrived GPU requests")
	seed := fs.Uint64("seed", policy.DefaultSeed, "Random's seed, and the draws among equally good nodes")
	ties := fs.String("ties", "first", "among equally good nodes: take the first in the node list's order (the paper's simulator's rule in its ranked order, which batkube-openb --arrivals writes to nodes.csv; kube-scheduler 1.37 without extenders makes a fixed choice by that order too), or draw one at random")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gpu-policy-replay [flags] NODES.csv PODS.csv ARRIVALS.csv\n       gpu-policy-replay check --policy NAME [flags] NODES.csv PODS.csv ARRIVALS.csv RUN_DIR")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 3 {
		fmt.Fprintf(stderr, "gpu-policy-replay: want NODES.csv PODS.csv ARRIVALS.csv, got %d argument(s)\n", fs.NArg())
		return 2
	}
	var modes []replay.Mode
	switch *gpus {
	case "first-fit":
		modes = []replay.Mode{replay.FirstFitGPUs}
	case "paper":
		modes = []replay.Mode{replay.PaperGPUs}
	case "both":
		modes = []replay.Mode{replay.FirstFitGPUs, replay.PaperGPUs}
	default:
		fmt.Fprintf(stderr, "gpu-policy-replay: --gpus %q: want first-fit, paper or both\n", *gpus)
		return 2
	}
	names := strings.Split(*policies, ",")
	for _, n := range names {
		if !slices.Contains(replay.Policies(), n) {
			fmt.Fprintf(stderr, "gpu-policy-replay: --policies: no policy %q (want some of %v)\n", n, replay.Policies())
			return 2
		}
	}
	if slices.Contains(names, replay.FGD) && *workload == "" {
		fmt.Fprintln(stderr, "gpu-policy-replay: fgd needs --workload (target-workload.csv)")
		return 2
	}
	if !(*step > 0) {
		fmt.Fprintf(stderr, "gpu-policy-replay: --step %g: want above 0\n", *step)
		return 2
	}
	if *ties != "draw" && *ties != "first" {
		fmt.Fprintf(stderr, "gpu-policy-replay: --ties %q: want draw or first\n", *ties)
		return 2
	}
	in, err := readInputs(fs.Arg(0), fs.Arg(1), fs.Arg(2), *workload)
	if err != nil {
		fmt.Fprintf(stderr, "gpu-policy-replay: %v\n", err)
		return 1
	}
	var paperCurves map[string]map[float64]float64
	if *paper != "" {
		if paperCurves, err = readPaper(*paper); err != nil {
			fmt.Fprintf(stderr, "gpu-policy-replay: %v\n", err)
			return 1
		}
	}
	header := []string{"arrived_gpu_percent"}
	var columns [][]replay.Point
	var paperColumns []map[float64]float64
	for _, name := range names {
		for _, mode := range modes {
			res, err := replay.Run(in.nodes, in.arrivals, replay.Options{Policy: name, Mode: mode, Workload: in.workload, Seed: *seed, TieSeed: *seed, FirstOfTies: *ties == "first"})
			if err != nil {
				fmt.Fprintf(stderr, "gpu-policy-replay: %v\n", err)
				return 1
			}
			header = append(header, name+" "+mode.String())
			columns = append(columns, replay.Curve(in.arrivals, res, *step))
			paperColumns = append(paperColumns, nil)
		}
		if c, ok := paperCurves[name]; ok {
			header = append(header, name+" (paper)")
			columns = append(columns, nil)
			paperColumns = append(paperColumns, c)
		}
	}
	w := csv.NewWriter(stdout)
	_ = w.Write(header)
	var rows int
	for _, c := range columns {
		rows = max(rows, len(c))
	}
	for r := range rows {
		var arrived float64
		for _, c := range columns {
			if r < len(c) {
				arrived = c[r].Arrived
			}
		}
		row := []string{strconv.FormatFloat(arrived, 'f', -1, 64)}
		for i, c := range columns {
			switch {
			case paperColumns[i] != nil:
				v, ok := paperColumns[i][arrived]
				row = append(row, formatPercent(v, ok))
			case r < len(c):
				row = append(row, formatPercent(c[r].Allocated, true))
			default:
				row = append(row, "")
			}
		}
		_ = w.Write(row)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		fmt.Fprintf(stderr, "gpu-policy-replay: %v\n", err)
		return 1
	}
	return 0
}

func formatPercent(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// paperPolicies maps the artifact's policy names (01-Random...) onto ours.
var paperPolicies = map[string]string{"random": replay.Random, "dotprod": replay.DotProd, "gpuclustering": replay.Clustering,
	"gpupacking": replay.Packing, "bestfit": replay.BestFit, "fgd": replay.FGD}

// readPaper reads the paper's artifact: by policy, allocated_gpu_percent_mean
// by arrived_gpu_percent.
func readPaper(path string) (map[string]map[float64]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(records) == 0 {
		return nil, errors.New(path + ": empty")
	}
	col := map[string]int{}
	for i, c := range records[0] {
		col[c] = i
	}
	for _, c := range []string{"policy", "arrived_gpu_percent", "allocated_gpu_percent_mean"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s: no column %s", path, c)
		}
	}
	out := map[string]map[float64]float64{}
	for i, r := range records[1:] {
		_, p, _ := strings.Cut(r[col["policy"]], "-")
		name, ok := paperPolicies[strings.ToLower(p)]
		if !ok {
			continue
		}
		arrived, err1 := strconv.ParseFloat(r[col["arrived_gpu_percent"]], 64)
		allocated, err2 := strconv.ParseFloat(r[col["allocated_gpu_percent_mean"]], 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, i+2, err)
		}
		if out[name] == nil {
			out[name] = map[float64]float64{}
		}
		out[name][arrived] = allocated
	}
	return out, nil
}

func check(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gpu-policy-replay check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("policy", "", "the policy the run's scheduler configuration enabled: one of "+strings.Join(replay.Policies(), ", "))
	workload := fs.String("workload", "", "fgd's target workload (the file its configuration names)")
	seed := fs.Uint64("seed", policy.DefaultSeed, "random's seed (its configuration's)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 4 {
		fmt.Fprintf(stderr, "gpu-policy-replay check: want NODES.csv PODS.csv ARRIVALS.csv RUN_DIR, got %d argument(s)\n", fs.NArg())
		return 2
	}
	if !slices.Contains(replay.Policies(), *name) {
		fmt.Fprintf(stderr, "gpu-policy-replay check: --policy %q: want one of %v\n", *name, replay.Policies())
		return 2
	}
	in, err := readInputs(fs.Arg(0), fs.Arg(1), fs.Arg(2), *workload)
	if err == nil {
		var observed map[string]replay.Observed
		if observed, err = replay.ReadRun(fs.Arg(3), in.arrivals); err == nil {
			var r replay.Report
			if r, err = replay.Check(in.nodes, in.arrivals, observed, replay.Options{Policy: *name, Workload: in.workload, Seed: *seed}); err == nil {
				for _, p := range r.Problems {
					fmt.Fprintln(stdout, p)
				}
				fmt.Fprintf(stdout, "%s: %d arrivals: %d placed at their arrival (%d where the policy preferred some nodes with room to others), %d waited; %d disagreement(s) with the policy and first fit\n",
					*name, len(in.arrivals), r.Placed, r.Decisive, r.Waited, len(r.Problems))
				if len(r.Problems) > 0 {
					return 1
				}
				return 0
			}
		}
	}
	fmt.Fprintf(stderr, "gpu-policy-replay check: %v\n", err)
	return 1
}
