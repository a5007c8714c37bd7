package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

type options struct {
	Out   string `short:"o" long:"out" default:"x" description:"where"`
	Count int    `long:"count" description:"how many"`
}

func TestParseHelpAndUsageErrors(t *testing.T) {
	c := Command{Name: "tool", Usage: "[OPTIONS] FILE", Description: "Does things."}
	var opts options
	var out, errs bytes.Buffer
	rest, code, ok := Parse(c, &opts, []string{"--count", "3", "a", "--", "-b"}, &out, &errs)
	if !ok || code != 0 || opts.Count != 3 || opts.Out != "x" || strings.Join(rest, " ") != "a -b" {
		t.Errorf("parse: rest %q code %d ok %t opts %+v", rest, code, ok, opts)
	}
	out.Reset()
	if _, code, ok := Parse(c, &opts, []string{"--help"}, &out, &errs); ok || code != 0 ||
		!strings.Contains(out.String(), "tool [OPTIONS] FILE") || !strings.Contains(out.String(), "Does things.") {
		t.Errorf("--help: code %d ok %t, stdout %q", code, ok, out.String())
	}
	errs.Reset()
	if _, code, ok := Parse(c, &opts, []string{"--nope"}, &out, &errs); ok || code != 2 ||
		errs.String() != "tool: unknown flag `nope'\nRun 'tool --help' for usage.\n" {
		t.Errorf("usage error: code %d ok %t, stderr %q", code, ok, errs.String())
	}
}

func TestParseNoArgsRefusesArguments(t *testing.T) {
	c := Command{Name: "tool"}
	var opts options
	var out, errs bytes.Buffer
	if code, ok := ParseNoArgs(c, &opts, []string{"--count", "2"}, &out, &errs); !ok || code != 0 || opts.Count != 2 {
		t.Errorf("flags only: code %d ok %t opts %+v", code, ok, opts)
	}
	if code, ok := ParseNoArgs(c, &opts, []string{"--count", "2", "extra"}, &out, &errs); ok || code != 2 ||
		errs.String() != "tool: unexpected argument \"extra\"\nRun 'tool --help' for usage.\n" {
		t.Errorf("an argument: code %d ok %t, stderr %q", code, ok, errs.String())
	}
}

func TestFlagsOnlyHandsTheOptionsToRun(t *testing.T) {
	var got *options
	run := FlagsOnly(Command{Name: "tool"}, func(_ context.Context, opts options, stdout, _ io.Writer) int {
		got = &opts
		fmt.Fprint(stdout, "ran")
		return 3
	})
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"--count", "2"}, &out, &errs); code != 3 || got == nil || got.Count != 2 || got.Out != "x" || out.String() != "ran" {
		t.Errorf("flags: code %d, options %+v, stdout %q", code, got, out.String())
	}
	got = nil
	for _, tc := range []struct {
		args []string
		code int
	}{{[]string{"--help"}, 0}, {[]string{"--nope"}, 2}, {[]string{"extra"}, 2}} {
		if code := run(context.Background(), tc.args, &out, &errs); code != tc.code || got != nil {
			t.Errorf("%q: code %d (want %d), run called: %t", tc.args, code, tc.code, got != nil)
		}
	}
}
