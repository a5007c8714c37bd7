package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/batkube/batkube/pkg/cli"
	"github.com/batkube/batkube/pkg/openb"
)

type allocationOptions struct {
	Step  float64 `long:"step" value-name:"PERCENT" default:"5" description:"one row every PERCENT of arrived GPU requests"`
	Paper string  `long:"paper" value-name:"FILE" description:"the FGD paper's table (fgd-paper-allocation-*.csv): its policies' mean allocation beside the run's, at each row"`
}

// runAllocation prints an arrival-only run's allocated GPU share as the
// arrivals grow (the paper's curve), beside the paper's policies.
func runAllocation(args []string, stdout, stderr io.Writer) int {
	var opts allocationOptions
	cmd := allocationCommand()
	rest, code, ok := cli.Parse(cmd, &opts, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(rest) != 2 {
		return cmd.UsageError(stderr, "want arrivals.csv and a run's output folder, got %d argument(s)", len(rest))
	}
	curve, err := openb.AllocationCurve(rest[0], rest[1], opts.Step)
	if err != nil {
		fmt.Fprintf(stderr, "batkube-openb allocation: %v\n", err)
		return 1
	}
	var paper []openb.PaperAllocation
	var policies []string
	if opts.Paper != "" {
		if paper, err = openb.ReadPaperAllocation(opts.Paper); err != nil {
			fmt.Fprintf(stderr, "batkube-openb allocation: %v\n", err)
			return 1
		}
		for _, p := range paper {
			if !slices.Contains(policies, p.Policy) {
				policies = append(policies, p.Policy)
			}
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "arrived %\tpods\tthis run %\t")
	for _, p := range policies {
		fmt.Fprintf(tw, "%s %%\t", p)
	}
	fmt.Fprintln(tw)
	for _, pt := range curve {
		fmt.Fprintf(tw, "%.0f\t%d\t%.2f\t", pt.ArrivedPercent, pt.Arrivals, pt.AllocatedPercent)
		for _, p := range policies {
			fmt.Fprintf(tw, "%s\t", paperCell(paper, p, pt.ArrivedPercent))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "batkube-openb allocation: %v\n", err)
		return 1
	}
	return 0
}

// paperCell is the paper's mean for a policy at an arrived percent ("-"
// if it has no row there).
func paperCell(paper []openb.PaperAllocation, policy string, arrived float64) string {
	for _, p := range paper {
		if p.Policy == policy && math.Abs(p.ArrivedPercent-arrived) < 1e-9 {
			return fmt.Sprintf("%.2f", p.Mean)
		}
	}
	return "-"
}

func allocationCommand() cli.Command {
	return cli.Command{Name: "batkube-openb allocation", Usage: "[OPTIONS] DIR/arrivals.csv RUN_DIR",
		Description: "Reads an arrival-only run (the arrivals.csv batkube-openb --arrivals wrote, and the run's _pods.csv, whose devices " +
			"column says which GPUs, and how much of each, every pod held) and prints the share of the cluster's GPU thousandths " +
			"allocated as the pods' GPU requests arrive, every --step percent, as the FGD paper's figure has it; with --paper, " +
			"the paper's policies beside it."}
}
