// Package clitest checks how a run of one of Batkube's commands ended, for
// the commands' table tests: its exit code and a part of each output.
package clitest

import (
	"strings"
	"testing"
)

// Want is how a run should end.
type Want struct {
	Code           int    // the exit code
	Stdout, Stderr string // a part of each output ("" is part of any)
}

// Check fails t unless the run that returned code and printed stdout and
// stderr ended as w says.
func (w Want) Check(t testing.TB, code int, stdout, stderr string) {
	t.Helper()
	if code != w.Code {
		t.Fatalf("exit code %d, want %d (stderr %q)", code, w.Code, stderr)
	}
	if !strings.Contains(stdout, w.Stdout) {
		t.Errorf("stdout %q lacks %q", stdout, w.Stdout)
	}
	if !strings.Contains(stderr, w.Stderr) {
		t.Errorf("stderr %q lacks %q", stderr, w.Stderr)
	}
}
