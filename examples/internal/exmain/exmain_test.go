package exmain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestExit(t *testing.T) {
	for _, tt := range []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, 0, ""},
		{fmt.Errorf("watching: %w", context.Canceled), 0, ""},
		{&url.Error{Op: "Get", URL: "http://127.0.0.1:1/api/v1/pods", Err: io.EOF}, 0, "sched: the API server is gone: Get \"http://127.0.0.1:1/api/v1/pods\": EOF\n"},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), 0, "sched: the API server is gone: dial: connection refused\n"},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), 0, "sched: the API server is gone: read: connection reset by peer\n"},
		{errors.New("binding w0-1: forbidden"), 1, "sched: binding w0-1: forbidden\n"},
	} {
		var b bytes.Buffer
		if code := Exit(&b, "sched", tt.err); code != tt.code || b.String() != tt.stderr {
			t.Errorf("Exit(%v): code %d, stderr %q; want %d, %q", tt.err, code, b.String(), tt.code, tt.stderr)
		}
	}
}

// TestCommandParsesFlagsThenRuns: the opening every example scheduler
// shares hands the parsed options to run and turns its error into the
// exit; --help, an unknown flag, a missing --kubeconfig and an argument
// left over end the command without running it.
func TestCommandParsesFlagsThenRuns(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	os.Unsetenv("KUBECONFIG") // restored by Setenv's cleanup
	type options struct {
		Options
		Seed int `long:"seed"`
	}
	var ran *options
	cmd := command("sched", func(_ context.Context, opts options) error {
		ran = &opts
		return errors.New("no room")
	})
	var out, errs bytes.Buffer
	code := cmd(context.Background(), []string{"--kubeconfig", "k", "--seed", "3"}, &out, &errs)
	if code != 1 || ran == nil || ran.Kubeconfig != "k" || ran.SchedulerName != "default-scheduler" || ran.Seed != 3 || errs.String() != "sched: no room\n" {
		t.Errorf("a run: code %d, options %+v, stderr %q", code, ran, errs.String())
	}
	for _, tc := range []struct {
		args       []string
		code       int
		wantStdout string
	}{
		{[]string{"--help"}, 0, "--scheduler-name="},
		{[]string{"--kubeconfig", "k", "--nope"}, 2, ""},
		{[]string{"--seed", "3"}, 2, ""},
		{[]string{"--kubeconfig", "k", "extra"}, 2, ""},
	} {
		ran = nil
		out.Reset()
		errs.Reset()
		code := cmd(context.Background(), tc.args, &out, &errs)
		if code != tc.code || ran != nil || !strings.Contains(out.String(), tc.wantStdout) || (code == 2) != strings.Contains(errs.String(), "Run 'sched --help' for usage.") {
			t.Errorf("%q: code %d (want %d), ran %t, stdout %q, stderr %q", tc.args, code, tc.code, ran != nil, out.String(), errs.String())
		}
	}
}
