package kubescheduler

import (
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestProcessIsLookedForOnceTheSchedulerAnswers: looking for the
// scheduler's process scans /proc, so it is looked for only once the
// scheduler has answered on its address, looks that find nothing back off,
// and a process found is not looked for again.
func TestProcessIsLookedForOnceTheSchedulerAnswers(t *testing.T) {
	p := newProcess("127.0.0.1:10259", slog.Default())
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }
	looks, found := 0, false
	p.lookup = func(netip.AddrPort) (int, error) {
		looks++
		if !found {
			return 0, errors.New("no listener")
		}
		return 42, nil
	}
	for range 10 {
		p.watched(false) // not answering yet
	}
	if looks != 0 {
		t.Fatalf("%d looks before the scheduler answered, want none", looks)
	}
	for range 10 {
		p.watched(true) // answered, but not found (elsewhere?): back off
	}
	if looks != 1 {
		t.Fatalf("%d looks within the back-off, want 1", looks)
	}
	now = now.Add(maxLookBackoff)
	found = true
	if !p.watched(true) || looks != 2 || p.pid != 42 {
		t.Fatalf("after the back-off: %d looks, pid %d; want found (2 looks, pid 42)", looks, p.pid)
	}
	p.watched(true)
	if looks != 2 {
		t.Errorf("%d looks once found, want no more", looks)
	}
}

// TestPIDFileIsReadInsteadOfScanning: with a PID file (batkube-run writes
// the one of the kube-scheduler it starts), the process is the one it
// names, if it exists.
func TestPIDFileIsReadInsteadOfScanning(t *testing.T) {
	dir := t.TempDir()
	write := func(content string) string {
		path := filepath.Join(dir, "pid")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	self := os.Getpid()
	if pid, err := readPIDFile(write(strconv.Itoa(self) + "\n"))(netip.AddrPort{}); err != nil || pid != self {
		t.Errorf("a file naming this process: %d, %v; want %d", pid, err, self)
	}
	for _, bad := range []string{"", "x", "-3", "999999999"} {
		if pid, err := readPIDFile(write(bad))(netip.AddrPort{}); err == nil {
			t.Errorf("a file holding %q: pid %d, want an error", bad, pid)
		}
	}
	if _, err := readPIDFile(filepath.Join(dir, "missing"))(netip.AddrPort{}); err == nil {
		t.Error("a missing file: want an error")
	}
}
