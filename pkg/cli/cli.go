// Package cli is the opening Batkube's commands share: their flags parsed
// with go-flags, --help printed on standard output (exit code 0), and a
// usage error on standard error, with the hint to run --help (exit code
// 2). It knows nothing of any command's flags.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/jessevdk/go-flags"
)

// Main runs a command's run with the process's arguments and standard
// streams, and a context cancelled at the first SIGINT or SIGTERM (a
// second one kills the process), then exits with the code run returned.
func Main(run func(ctx context.Context, args []string, stdout, stderr io.Writer) int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Command names a command and says what it does, for its --help.
type Command struct {
	Name        string // as typed: "batkube-run"
	Usage       string // what follows the name: "[OPTIONS] FILE"
	Description string // a paragraph
}

// Parse parses args into opts (a go-flags options struct). It returns the
// arguments left over and ok; when not ok, the command ends with code:
// 0 after --help, 2 after a usage error, each already printed.
func Parse(c Command, opts any, args []string, stdout, stderr io.Writer) (rest []string, code int, ok bool) {
	parser := flags.NewParser(opts, flags.HelpFlag|flags.PassDoubleDash)
	parser.Name = c.Name
	parser.Usage = c.Usage
	parser.LongDescription = c.Description
	rest, err := parser.ParseArgs(args)
	if err != nil {
		var ferr *flags.Error
		if errors.As(err, &ferr) && ferr.Type == flags.ErrHelp {
			fmt.Fprintln(stdout, ferr.Message)
			return nil, 0, false
		}
		return nil, c.UsageError(stderr, "%v", err), false
	}
	return rest, 0, true
}

// ParseNoArgs is Parse for a command that takes flags only: an argument
// left over is a usage error.
func ParseNoArgs(c Command, opts any, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	rest, code, ok := Parse(c, opts, args, stdout, stderr)
	if ok && len(rest) > 0 {
		return c.UsageError(stderr, "unexpected argument %q", rest[0]), false
	}
	return code, ok
}

// FlagsOnly returns the run, for Main, of a command that takes flags only:
// it parses the arguments into a new options struct of type O (a go-flags
// options struct) and hands it to run, or returns the code of --help or of
// a usage error (ParseNoArgs), without calling run.
func FlagsOnly[O any](c Command, run func(ctx context.Context, opts O, stdout, stderr io.Writer) int) func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		var opts O
		if code, ok := ParseNoArgs(c, &opts, args, stdout, stderr); !ok {
			return code
		}
		return run(ctx, opts, stdout, stderr)
	}
}

// UsageError prints "NAME: message" and the hint to run --help on stderr,
// and returns the exit code of a usage error, 2.
func (c Command) UsageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", c.Name, fmt.Sprintf(format, args...), c.Name)
	return 2
}
