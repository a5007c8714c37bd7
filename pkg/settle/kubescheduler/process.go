package kubescheduler

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/batkube/batkube/pkg/procquiet"
)

// process watches the scheduler's process from outside (package
// procquiet), when it runs on this machine: found as the process that
// listens on the metrics address.
type process struct {
	addr    netip.AddrPort // the metrics endpoint; invalid when not local
	log     *slog.Logger
	pid     int
	sampler procquiet.Sampler
	warned  bool
	// Looks that found nothing are spaced by a back-off (see find).
	nextLook time.Time
	backoff  time.Duration
	now      func() time.Time
	lookup   func(netip.AddrPort) (int, error) // procquiet.ListenerPID
}

// Bounds of the back-off between looks that found no process.
const (
	minLookBackoff = time.Millisecond
	maxLookBackoff = 100 * time.Millisecond
)

func newProcess(hostport string, log *slog.Logger) *process {
	p := &process{log: log, now: time.Now, lookup: procquiet.ListenerPID}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return p
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if ap, err := netip.ParseAddrPort(net.JoinHostPort(host, port)); err == nil && ap.Addr().IsLoopback() {
		p.addr = ap
	}
	return p
}

// readPIDFile returns a lookup that reads the scheduler's PID from a file
// (written by whoever started it) instead of scanning /proc, and checks
// that the process is there.
func readPIDFile(path string) func(netip.AddrPort) (int, error) {
	return func(netip.AddrPort) (int, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			return 0, fmt.Errorf("%s: not a PID: %q", path, b)
		}
		if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
			return 0, fmt.Errorf("%s: process %d: %w", path, pid, err)
		}
		return pid, nil
	}
}

// find resolves the scheduler's PID, once (again after it exits). A look
// scans /proc/net/tcp and every process's fds (milliseconds on a busy
// machine), so it is made only once the scheduler has answered on its
// address (listening), then spaced by a back-off if it finds nothing (the
// scheduler runs elsewhere, or is restarting).
func (p *process) find(listening bool) bool {
	if p.pid != 0 {
		return true
	}
	if !p.addr.IsValid() || !listening {
		return false
	}
	now := p.now()
	if now.Before(p.nextLook) {
		return false
	}
	pid, err := p.lookup(p.addr)
	if err != nil {
		p.backoff = min(max(2*p.backoff, minLookBackoff), maxLookBackoff)
		p.nextLook = now.Add(p.backoff)
		if !p.warned {
			p.warned = true
			p.log.Info("cannot watch the scheduler's process (yet)", "metrics", p.addr.String(), "err", err)
		}
		return false
	}
	p.pid, p.backoff, p.nextLook = pid, 0, time.Time{}
	return true
}

// watched reports whether the scheduler's process can be watched;
// listening says the scheduler has answered on its address.
func (p *process) watched(listening bool) bool { return p.find(listening) }

// quiescent reports whether the process is quiescent now (two looks back
// to back).
func (p *process) quiescent() (bool, error) {
	if !p.find(true) {
		return false, nil
	}
	ok, err := p.sampler.Quiescent(p.pid)
	if err != nil {
		if errors.Is(err, procquiet.ErrNoSchedInfo) || errors.Is(err, errors.ErrUnsupported) {
			// This kernel cannot tell: stop watching, fall back.
			p.log.Warn("cannot watch the scheduler's process on this system", "err", err)
			p.addr, p.pid = netip.AddrPort{}, 0
			return false, nil
		}
		p.lost(err)
		return false, nil
	}
	return ok, nil
}

// lost forgets a process that exited: the next look finds the new one.
func (p *process) lost(err error) {
	p.log.Debug("the scheduler's process is gone", "pid", p.pid, "err", err)
	p.pid = 0
}
