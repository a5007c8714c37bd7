package kubescheduler

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
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
	prev    procquiet.Threads
	prevAt  time.Time
	hasPrev bool
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
	p.pid, p.hasPrev = pid, false
	return true
}

// watched reports whether the scheduler's process can be watched.
func (p *process) watched() bool { return p.find() }

// busyShare is the share of the time between two looks that the
// scheduler's threads may have run for it to count as resting: the Go
// runtime's own housekeeping and the scheduler's periodic work (leases,
// caches) take a little, a scheduling cycle much more.
const busyShare = 0.25

// resting reports whether the scheduler's process seems done for now: no
// thread runs or waits for a CPU, and its threads ran for less than
// busyShare of the time since the previous look. A pacing hint, not a
// proof (the verdict is the metrics'); true when the process cannot be
// watched.
func (p *process) resting() bool {
	if !p.find() {
		return true
	}
	var cur procquiet.Threads
	if err := p.sampler.Snapshot(p.pid, &cur); err != nil {
		p.lost(err)
		return false
	}
	now := time.Now()
	resting := p.hasPrev
	for _, t := range cur.List {
		if t.State == 'R' || t.State == 'D' {
			resting = false
		}
	}
	if resting {
		var ran uint64
		for _, t := range cur.List {
			ran += t.RunTime
		}
		for _, t := range p.prev.List {
			ran -= min(ran, t.RunTime)
		}
		resting = float64(ran) < busyShare*float64(now.Sub(p.prevAt))
	}
	p.prev, p.prevAt, p.hasPrev = cur, now, true
	return resting
}

// quiescent reports whether the process is quiescent now (two looks back
// to back).
func (p *process) quiescent() (bool, error) {
	if !p.find() {
		return false, nil
	}
	ok, err := p.sampler.Quiescent(p.pid)
	if err != nil {
		if errors.Is(err, procquiet.ErrNoSchedInfo) {
			return false, err
		}
		p.lost(err)
		return false, nil
	}
	return ok, nil
}

// lost forgets a process that exited: the next look finds the new one.
func (p *process) lost(err error) {
	p.log.Debug("the scheduler's process is gone", "pid", p.pid, "err", err)
	p.pid, p.hasPrev = 0, false
}
