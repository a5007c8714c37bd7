package kubescheduler

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"

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
}

func newProcess(hostport string, log *slog.Logger) *process {
	p := &process{log: log}
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

// find resolves the scheduler's PID, once (again after it exits).
func (p *process) find() bool {
	if p.pid != 0 {
		return true
	}
	if !p.addr.IsValid() {
		return false
	}
	pid, err := procquiet.ListenerPID(p.addr)
	if err != nil {
		if !p.warned {
			p.warned = true
			p.log.Info("cannot watch the scheduler's process (yet)", "metrics", p.addr.String(), "err", err)
		}
		return false
	}
	p.pid = pid
	return true
}

// watched reports whether the scheduler's process can be watched.
func (p *process) watched() bool { return p.find() }

// quiescent reports whether the process is quiescent now (two looks back
// to back).
func (p *process) quiescent() (bool, error) {
	if !p.find() {
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
