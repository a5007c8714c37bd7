//go:build linux

package procquiet

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// childBin is the test child (testdata/child), built once by TestMain.
var childBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "procquiet")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	childBin = filepath.Join(dir, "child")
	// go test puts its own GOROOT/bin first in PATH.
	gobin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command(gobin, "build", "-o", childBin, "./testdata/child")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the test child: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// child is a running child process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // its stdout, line by line; closed at EOF
}

// start starts name with args, killed and waited for when the test ends.
func start(tb testing.TB, name string, args ...string) *child {
	tb.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	// Its own process group, so that the processes it forks (a shell's)
	// are killed with it and do not hold the test's stderr open.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	tb.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return c
}

// startChild starts the test child in mode args.
func startChild(tb testing.TB, args ...string) *child {
	tb.Helper()
	return start(tb, childBin, args...)
}

// pid returns the child's PID.
func (c *child) pid() int { return c.cmd.Process.Pid }

// line waits for the child's next line of output.
func (c *child) line(tb testing.TB) string {
	tb.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			tb.Fatal("child closed its output")
		}
		return l
	case <-time.After(30 * time.Second):
		tb.Fatal("no output from the child within 30s")
	}
	return ""
}

// eventually polls cond until it returns true, failing the test after
// timeout.
func eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("not %s within %v", what, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// settle waits until pid is quiescent.
func settle(tb testing.TB, s *Sampler, pid int) {
	tb.Helper()
	eventually(tb, 20*time.Second, "quiescent", func() bool {
		q, err := s.Quiescent(pid)
		if err != nil {
			tb.Fatal(err)
		}
		return q
	})
}
