package controllers

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/batkube/batkube/pkg/procquiet"
)

// fakeAPI stands for the API server's counters.
type fakeAPI struct {
	inFlight             int64
	finished, read, rv   uint64
	delivered            bool
	onRequests, onReadRV func(*fakeAPI) // called after each reading, to change things mid-check
}

func (f *fakeAPI) options(t testing.TB, unread func() (int, error), pidFiles ...string) Options {
	var procs []Process
	for i, f := range pidFiles {
		procs = append(procs, Process{Name: "process " + strconv.Itoa(i), PIDFile: f})
	}
	return Options{Processes: procs, Unread: unread,
		Undelivered: func() string {
			if f.delivered {
				return ""
			}
			return "a watch"
		},
		Requests: func() (int64, uint64) {
			in, done := f.inFlight, f.finished
			if f.onRequests != nil {
				f.onRequests(f)
			}
			return in, done
		},
		BytesRead: func() uint64 { return f.read },
		StoreRV:   func() uint64 { return f.rv }}
}

// startWithPIDFile starts cmd, to be killed at the end of the test, and
// writes its pid to a file, whose path it returns; the error is Start's.
func startWithPIDFile(t testing.TB, cmd *exec.Cmd) (string, error) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		return "", err
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pidFile := filepath.Join(t.TempDir(), "pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return pidFile, nil
}

// rawConn returns the raw connection of a socket, to read its queues.
func rawConn(t *testing.T, c syscall.Conn) syscall.RawConn {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestBarrier: on a real sleeping process and a real listening socket,
// the barrier is idle only when the API is quiet from its first reading to
// its last, every watch event is delivered and no byte waits unread.
func TestBarrier(t *testing.T) {
	pidFile, err := startWithPIDFile(t, exec.Command("sleep", "600"))
	if err != nil {
		t.Skipf("no sleep command: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// The server's sockets as server.Unread reads them: the listener's
	// accept queue and the accepted connections' unread bytes.
	lraw := rawConn(t, l.(syscall.Conn))
	var accepted []syscall.RawConn
	unread := func() (int, error) {
		total, err := procquiet.AcceptQueue(lraw)
		for _, c := range accepted {
			n, uerr := procquiet.Unread(c)
			total, err = total+n, errors.Join(err, uerr)
		}
		return total, err
	}
	ctx := context.Background()
	check := func(f *fakeAPI, pidFiles ...string) (bool, string) {
		t.Helper()
		if len(pidFiles) == 0 {
			pidFiles = []string{pidFile}
		}
		v, err := New(f.options(t, unread, pidFiles...)).Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v.Unproven != "" {
			t.Skipf("this system cannot show the process: %s", v.Unproven)
		}
		return v.Idle, v.Waiting
	}
	// waitUnreadBytes checks until the barrier waits for bytes not yet
	// read, and fails if it is idle meanwhile (what names what is unread).
	waitUnreadBytes := func(what string) {
		t.Helper()
		for {
			idle, waiting := check(&fakeAPI{delivered: true})
			if idle {
				t.Fatalf("%s: idle", what)
			}
			if strings.Contains(waiting, "not yet read") {
				return
			}
		}
	}
	// A sleeping process whose threads may still be settling after its
	// start: the quiescence look is repeated until it holds (it must).
	for {
		if idle, waiting := check(&fakeAPI{delivered: true}); idle {
			break
		} else if !strings.Contains(waiting, "is running") {
			t.Fatalf("quiet API, sleeping process: not idle: %s", waiting)
		}
	}
	// A second process that never stops running: never idle, named.
	busy := exec.Command("sh", "-c", "while :; do :; done")
	busyFile, err := startWithPIDFile(t, busy)
	if err != nil {
		t.Fatal(err)
	}
	if idle, waiting := check(&fakeAPI{delivered: true}, pidFile, busyFile); idle || waiting != "process 1 is running" {
		t.Errorf("a sleeping and a running process: idle %v (%s)", idle, waiting)
	}
	_ = busy.Process.Kill() // its core back to the checks below
	for name, f := range map[string]*fakeAPI{
		"a request in flight":          {delivered: true, inFlight: 1},
		"watch events not written":     {delivered: false},
		"a request finished meanwhile": {delivered: true, onRequests: func(f *fakeAPI) { f.finished++ }},
		"bytes read meanwhile":         {delivered: true, onRequests: func(f *fakeAPI) { f.read += 10 }},
		"a write stored meanwhile":     {delivered: true, onRequests: func(f *fakeAPI) { f.rv++ }},
	} {
		if idle, _ := check(f); idle {
			t.Errorf("%s: idle", name)
		}
	}
	// A connection the server has not accepted.
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitUnreadBytes("a connection not accepted")
	// Bytes a client sent that the server has not read.
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	accepted = append(accepted, rawConn(t, s.(syscall.Conn)))
	for {
		if idle, _ := check(&fakeAPI{delivered: true}); idle {
			break // accepted, nothing sent: idle again (once the process looks quiet)
		}
	}
	if _, err := c.Write([]byte("POST /api/v1/namespaces/default/pods HTTP/1.1\r\n")); err != nil {
		t.Fatal(err)
	}
	waitUnreadBytes("a request unread in the server's socket")
}

// TestBarrierWaitsForThePeerToRead: bytes the API server wrote to a
// controller that the controller has not read — still in the server's
// send queue (on loopback the kernel delivers them in a softirq, which a
// loaded machine may defer) or in the controller's receive queue — keep
// the barrier from being idle, however quiescent the process looks; once
// they are read, it is idle. Run on a quiet machine and with a CPU hog on
// every core.
func TestBarrierWaitsForThePeerToRead(t *testing.T) {
	for _, hog := range []bool{false, true} {
		t.Run(map[bool]string{false: "quiet", true: "cpu-hog"}[hog], func(t *testing.T) {
			if hog {
				for range runtime.NumCPU() {
					if _, err := startWithPIDFile(t, exec.Command("sh", "-c", "while :; do :; done")); err != nil {
						t.Skipf("no sh: %v", err)
					}
				}
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			client, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			server, err := l.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer server.Close()
			// The controller: a sleeping process holding the client end.
			f, err := client.(*net.TCPConn).File()
			if err != nil {
				t.Fatal(err)
			}
			controller := exec.Command("sleep", "600")
			controller.ExtraFiles = []*os.File{f}
			pidFile, err := startWithPIDFile(t, controller)
			f.Close()
			if err != nil {
				t.Skipf("no sleep command: %v", err)
			}
			sraw := rawConn(t, server.(syscall.Conn))
			opts := (&fakeAPI{delivered: true}).options(t, func() (int, error) { return 0, nil }, pidFile)
			opts.Unsent = func() (int, error) { return procquiet.Unsent(sraw) }
			conn := []procquiet.Connection{{Local: server.LocalAddr().(*net.TCPAddr).AddrPort(), Remote: server.RemoteAddr().(*net.TCPAddr).AddrPort()}}
			opts.PeersUnread = func() (int, error) { return procquiet.PeersUnread(conn) }
			b := New(opts)
			check := func() (bool, string) {
				v, err := b.Check(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if v.Unproven != "" {
					t.Skipf("this system cannot show the process: %s", v.Unproven)
				}
				return v.Idle, v.Waiting
			}
			for { // the process's start settling
				if idle, _ := check(); idle {
					break
				}
			}
			const n = 1 << 20
			if _, err := server.Write(make([]byte, n)); err != nil {
				t.Fatal(err)
			}
			// Never idle while the bytes are unread, whichever queue holds them.
			for range 50 {
				if idle, waiting := check(); idle {
					t.Fatal("idle with 1 MiB written and not read by the controller")
				} else if !strings.Contains(waiting, "not yet received") && !strings.Contains(waiting, "not yet read") && !strings.Contains(waiting, "is running") {
					t.Fatalf("waiting for %q, want the bytes named", waiting)
				}
			}
			if _, err := io.ReadFull(client, make([]byte, n)); err != nil {
				t.Fatal(err)
			}
			for {
				if idle, _ := check(); idle {
					break // read: idle (once the process looks quiet again)
				}
			}
		})
	}
}

// BenchmarkBarrierCheckTwoProcesses: the wall time of a check that proves
// two sleeping processes idle (a quiet API, no socket): the proof a step
// of a run with kube-controller-manager and Kueue or Karpenter waits for.
func BenchmarkBarrierCheckTwoProcesses(b *testing.B) {
	var pidFiles []string
	for range 2 {
		f, err := startWithPIDFile(b, exec.Command("sleep", "600"))
		if err != nil {
			b.Skipf("no sleep command: %v", err)
		}
		pidFiles = append(pidFiles, f)
	}
	barrier := New((&fakeAPI{delivered: true}).options(b, func() (int, error) { return 0, nil }, pidFiles...))
	ctx := context.Background()
	idle := 0
	for b.Loop() {
		v, err := barrier.Check(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if v.Idle {
			idle++
		}
	}
	b.ReportMetric(float64(idle)/float64(b.N), "idle/op")
}

// BenchmarkBarrierCheckWhileOneRuns: the CPU of a check that fails on a
// running process beside a sleeping one (the sleeping one first in the
// list): the checks a step makes while a controller works.
func BenchmarkBarrierCheckWhileOneRuns(b *testing.B) {
	sleeping, err := startWithPIDFile(b, exec.Command("sleep", "600"))
	if err != nil {
		b.Skipf("no sleep command: %v", err)
	}
	running, err := startWithPIDFile(b, exec.Command("sh", "-c", "while :; do :; done"))
	if err != nil {
		b.Fatal(err)
	}
	barrier := New((&fakeAPI{delivered: true}).options(b, func() (int, error) { return 0, nil }, sleeping, running))
	ctx := context.Background()
	for b.Loop() {
		v, err := barrier.Check(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if v.Idle {
			b.Fatal("idle with a process that never stops running")
		}
	}
}
