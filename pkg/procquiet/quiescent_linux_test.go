//go:build linux

package procquiet

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSnapshotSelf(t *testing.T) {
	th, err := Snapshot(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if th.PID != os.Getpid() || len(th.List) == 0 {
		t.Fatalf("snapshot of self: %+v", th)
	}
	leader, running := false, false
	for i, x := range th.List {
		if i > 0 && th.List[i-1].TID >= x.TID {
			t.Errorf("threads not in TID order: %+v", th.List)
		}
		leader = leader || x.TID == os.Getpid()
		running = running || x.State == 'R'
		if x.Switches == 0 {
			t.Errorf("thread %d: no switch counted (schedstat %d %d)", x.TID, x.RunTime, x.Switches)
		}
	}
	if !leader {
		t.Errorf("no thread-group leader in %+v", th.List)
	}
	if !running {
		t.Errorf("the thread taking the snapshot is not running: %+v", th.List)
	}
	if q, err := Quiescent(os.Getpid()); err != nil || q {
		t.Errorf("Quiescent(self) = %v, %v; want false, nil", q, err)
	}
}

func TestNotExist(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
	max, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	pid := max + 1 // never a PID
	if _, err := Snapshot(pid); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Snapshot(%d) error %v; want os.ErrNotExist", pid, err)
	}
	q, err := Quiescent(pid)
	if q || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Quiescent(%d) = %v, %v; want os.ErrNotExist", pid, q, err)
	}
	t.Log(err)
}

func TestZombie(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	var s Sampler
	var last error
	eventually(t, 10*time.Second, "a zombie", func() bool {
		q, err := s.Quiescent(cmd.Process.Pid)
		if q {
			t.Fatal("exited process reported quiescent")
		}
		last = err
		return err != nil
	})
	if !errors.Is(last, ErrExited) || !errors.Is(last, os.ErrNotExist) {
		t.Fatalf("error %v; want ErrExited and os.ErrNotExist", last)
	}
	t.Log(last)
	cmd.Wait()
	if _, err := s.Quiescent(cmd.Process.Pid); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after reaping: %v; want os.ErrNotExist", err)
	}
}

// neverQuiescent checks that pid is never found quiescent for a while.
func neverQuiescent(t *testing.T, pid int) {
	var s Sampler
	n := 0
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); n++ {
		q, err := s.Quiescent(pid)
		if err != nil {
			t.Fatal(err)
		}
		if q {
			t.Fatalf("busy process %d reported quiescent (after %d checks)", pid, n)
		}
	}
	t.Logf("%d checks, none quiescent", n)
}

func TestBusyGo(t *testing.T) {
	neverQuiescent(t, startChild(t, "spin").pid())
}

func TestBusyShell(t *testing.T) {
	neverQuiescent(t, start(t, "sh", "-c", "while :; do :; done").pid())
}

func TestSleepQuiescent(t *testing.T) {
	c := start(t, "sleep", "60")
	var s Sampler
	settle(t, &s, c.pid())
	// Once settled, it stays so: sleep(1) wakes for nothing.
	for range 100 {
		if q, err := s.Quiescent(c.pid()); err != nil || !q {
			t.Fatalf("sleep 60 no longer quiescent: %v, %v", q, err)
		}
	}
}

func TestStoppedNotQuiescent(t *testing.T) {
	c := start(t, "sleep", "60")
	var s Sampler
	settle(t, &s, c.pid())
	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "stopped", func() bool {
		var th Threads
		if err := s.Snapshot(c.pid(), &th); err != nil {
			t.Fatal(err)
		}
		return th.List[0].State == 'T'
	})
	if q, err := s.Quiescent(c.pid()); err != nil || q {
		t.Errorf("stopped process: Quiescent = %v, %v; want false, nil", q, err)
	}
}

func TestWorkOnInput(t *testing.T) {
	c := startChild(t, "stdin")
	if l := c.line(t); l != "ready" {
		t.Fatalf("child said %q", l)
	}
	var s Sampler
	settle(t, &s, c.pid())

	if _, err := c.stdin.Write([]byte("work 300\n")); err != nil {
		t.Fatal(err)
	}
	busy, checks := 0, 0
	var done string
	for done == "" {
		q, err := s.Quiescent(c.pid())
		if err != nil {
			t.Fatal(err)
		}
		checks++
		select {
		case l := <-c.lines:
			done = l // printed before or during this check: not counted
			continue
		default:
		}
		if !q {
			busy++
		}
	}
	if !strings.HasPrefix(done, "done") {
		t.Fatalf("child said %q", done)
	}
	if busy == 0 {
		t.Fatalf("never busy before %q (%d checks)", done, checks)
	}
	t.Logf("busy in %d of %d checks before %q", busy, checks, done)
	settle(t, &s, c.pid())
}

func TestQuiescentDoesNotAllocate(t *testing.T) {
	c := startChild(t, "threads", "30")
	t.Logf("child has %s threads", c.line(t))
	var s Sampler
	settle(t, &s, c.pid())
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.Quiescent(c.pid()); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Sampler.Quiescent: %v allocations per call; want 0", allocs)
	}
}

func benchThreads(b *testing.B) int {
	c := startChild(b, "threads", "30")
	n := c.line(b)
	b.Logf("child has %s threads", n)
	return c.pid()
}

func BenchmarkSnapshot(b *testing.B) {
	pid := benchThreads(b)
	var s Sampler
	var th Threads
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Snapshot(pid, &th); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(th.List)), "threads")
}

func BenchmarkSnapshotNoReuse(b *testing.B) {
	pid := benchThreads(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Snapshot(pid); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQuiescent(b *testing.B) {
	pid := benchThreads(b)
	var s Sampler
	settle(b, &s, pid)
	b.ReportAllocs()
	quiet := 0
	for b.Loop() {
		q, err := s.Quiescent(pid)
		if err != nil {
			b.Fatal(err)
		}
		if q {
			quiet++
		}
	}
	b.ReportMetric(float64(quiet)/float64(b.N), "quiet/op")
}

// TestSamplerFollowsThreads: a Sampler that keeps the files of a process
// open sees the threads it starts and ends, and closes the files of those
// that exit.
func TestSamplerFollowsThreads(t *testing.T) {
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	before := fds()
	c := startChild(t, "threads", "5")
	c.line(t)
	var s Sampler
	tids := func(th Threads) []int {
		var ids []int
		for _, x := range th.List {
			ids = append(ids, x.TID)
		}
		return ids
	}
	var cached Threads
	for _, cmd := range []string{"+8", "-3", "+2", "-6", "-1", "+1"} {
		if _, err := c.stdin.Write([]byte(cmd + "\n")); err != nil {
			t.Fatal(err)
		}
		if l := c.line(t); l != "ok" {
			t.Fatalf("child said %q", l)
		}
		eventually(t, 10*time.Second, "matching a fresh snapshot after "+cmd, func() bool {
			if err := s.Snapshot(c.pid(), &cached); err != nil {
				t.Fatal(err)
			}
			fresh, err := Snapshot(c.pid())
			if err != nil {
				t.Fatal(err)
			}
			return slices.Equal(tids(cached), tids(fresh)) && cached.Vanished == 0
		})
		if len(s.files) != len(cached.List) {
			t.Fatalf("after %s: %d threads, files of %d open", cmd, len(cached.List), len(s.files))
		}
		t.Logf("after %s: %d threads", cmd, len(cached.List))
	}
	if q, err := s.Quiescent(c.pid()); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("quiescent: %v", q)
	}
	s.Close()
	if after := fds(); after > before+3 { // the child's pipes
		t.Errorf("%d fds open before, %d after Close", before, after)
	}
}

// TestSamplerNewProcess: a Sampler moves from one process to another,
// and from a reaped process to an error.
func TestSamplerNewProcess(t *testing.T) {
	var s Sampler
	defer s.Close()
	a := start(t, "sleep", "60")
	b := start(t, "sleep", "60")
	settle(t, &s, a.pid())
	settle(t, &s, b.pid())
	settle(t, &s, a.pid())
	syscall.Kill(a.pid(), syscall.SIGKILL)
	a.cmd.Wait()
	if _, err := s.Quiescent(a.pid()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reaped process: %v; want os.ErrNotExist", err)
	}
	if s.pid != 0 || len(s.files) != 0 {
		t.Errorf("files of a reaped process still open: pid %d, %d threads", s.pid, len(s.files))
	}
}
