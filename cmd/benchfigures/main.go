// Command benchfigures writes the table of benchmark figures into
// docs/figures.md from the output of `make bench` (which runs it): the
// section between the page's markers is replaced, the rest is left as
// written.
//
//	go test -bench=. ./... | tee out/bench.txt
//	benchfigures -in out/bench.txt -doc docs/figures.md
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/batkube/batkube/pkg/benchfig"
	"github.com/batkube/batkube/pkg/cli"
)

type options struct {
	In     string `long:"in" value-name:"FILE" required:"true" description:"the output of go test -bench (make bench writes out/bench.txt)"`
	Doc    string `long:"doc" value-name:"FILE" default:"docs/figures.md" description:"the page whose generated section is rewritten"`
	Module string `long:"module" default:"github.com/batkube/batkube" description:"module path cut from the packages' names"`
	Date   string `long:"date" value-name:"YYYY-MM-DD" description:"the date the table names (default: today)"`
}

func main() {
	cli.Main(cli.FlagsOnly(cli.Command{Name: "benchfigures", Usage: "[OPTIONS]",
		Description: "Rewrites the generated section of the figures page (between its make bench markers) with a table of the benchmarks' results read from --in."}, run))
}

func run(_ context.Context, opts options, _, stderr io.Writer) int {
	if opts.Date == "" {
		opts.Date = time.Now().Format(time.DateOnly)
	}
	if err := write(opts); err != nil {
		fmt.Fprintf(stderr, "benchfigures: %v\n", err)
		return 1
	}
	return 0
}

func write(opts options) error {
	in, err := os.Open(opts.In)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := benchfig.Parse(in, opts.Module)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.In, err)
	}
	if len(out.Results) == 0 {
		return fmt.Errorf("%s: no benchmark results", opts.In)
	}
	doc, err := os.ReadFile(opts.Doc)
	if err != nil {
		return err
	}
	spliced, err := benchfig.Splice(string(doc), benchfig.Table(out, opts.Date))
	if err != nil {
		return fmt.Errorf("%s: %w", opts.Doc, err)
	}
	return os.WriteFile(opts.Doc, []byte(spliced), 0o644)
}
