// Package controllers proves, from outside, that the controller processes
// beside the scheduler — kube-controller-manager and Kueue's manager,
// unmodified — have done everything they can at the current simulated
// instant, so that a step may end: the Job controller has created the pods
// of a Job created (or of a pod that ended) at this instant, the ReplicaSet
// controller those of a Deployment, Kueue has admitted the Jobs its quotas
// let in.
//
// kube-controller-manager counts no handled events (unlike kube-scheduler
// 1.37, see package settle/kubescheduler): its work queues' metrics say
// what is queued, not what its informers have still to hand over. The
// proof is a barrier on the process and on the API:
//
//  1. no request of any client is in progress in the API server, and the
//     counts of finished requests and of bytes read from clients are
//     noted, as is the store's resourceVersion;
//  2. every watch event stored so far has been written to its client's
//     connection (Options.Undelivered), and every byte the API server
//     wrote has reached its peer's socket (Options.Unsent: the peer's
//     socket has received as many bytes as were written, acknowledged or
//     not; loopback delivers in a softirq, which a loaded machine may
//     defer, and a delivery wakes the peer's waiting thread);
//  3. each process is quiescent (package procquiet): none of its threads
//     ran or could run between two looks at /proc, so every goroutine was
//     blocked — waiting for events, for its queues, for a response, or
//     for a timer — and no client's socket holds bytes the server sent it
//     that it has not read (Options.PeersUnread, asked last);
//  4. no byte sent by a client waits unread in the API server's sockets
//     (server.Unread: procquiet.Unread on each connection, and
//     procquiet.AcceptQueue on the listener);
//  5. then nothing changed since 1: no request in progress, none
//     finished, no byte read, no write stored.
//
// A check fails as soon as one of these does not hold. In 3 the process
// last seen running is looked at first: while it works, a check fails at
// its first snapshot rather than after two snapshots of each of the
// others (BenchmarkBarrierCheckWhileOneRuns).
//
// By 2 and 3, each process had handled every event written to it, and had
// sent every request that handling led to before its first look (a
// goroutine that has a request to send is not blocked). Such a request is,
// after the second look, unread in a socket (4), being read or served
// (5: bytes read, in progress), or answered: before 1, its answer would
// have woken the process before its first look (3 says it did not), after
// 1 the finished count would have moved (5). So at 5 each process has
// nothing to do but what its timers will bring. The processes talk to
// each other only through the API server (the server's calls to Kueue's
// admission webhooks are part of a request in progress), so looking at
// them one after the other within 1–5 proves them all idle at once.
//
// Timers are what the barrier cannot see. A kube-controller-manager on the
// run's simulated clock (package kubeclock) keeps its timers there: its
// waits on the server's clock are parked, not requests in progress, and
// its work timers are the run's wake-ups, so at 5 it has nothing to do
// before simulated time reaches them. On the wall clock, a controller
// that waits (the Job controller's batched sync, 1 s; its back-off before
// it replaces a failed pod, 10 s doubling) acts when its timer fires; the
// broker then waits for what it owes (package broker).
//
// Two gaps are left: a request whose bytes the API server read before 1
// and that it had still not begun to serve at 5 (a goroutine stalled for
// the whole check between reading a request and handling it), and a
// connection taken from the listener's queue before 4 but registered by
// the server only after 5 (its accepting goroutine stalled likewise).
package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/batkube/batkube/pkg/procquiet"
	"github.com/batkube/batkube/pkg/settle"
)

// Process is one controller process.
type Process struct {
	// Name names the process in messages (kube-controller-manager).
	Name string
	// PIDFile holds the process's PID, written by whoever started it.
	PIDFile string
}

// Options describe the processes and the API server.
type Options struct {
	Processes []Process
	// Unread returns the bytes clients sent that the API server has not
	// read yet, connections not accepted yet included (server.Unread).
	Unread func() (int, error)
	// Unsent, if set, returns the bytes the API server wrote that its
	// clients' sockets have not received yet (server.Unsent), and
	// PeersUnread those they received and have not read
	// (server.PeersUnread).
	Unsent      func() (int, error)
	PeersUnread func() (int, error)
	// Undelivered says which watch has not written every stored event to
	// its client's connection yet ("" when all have).
	Undelivered func() string
	// Requests returns the API's requests (watches aside) in progress and
	// finished; BytesRead the bytes read from clients so far; StoreRV the
	// store's latest resourceVersion.
	Requests  func() (inFlight int64, finished uint64)
	BytesRead func() uint64
	StoreRV   func() uint64
	Logger    *slog.Logger
}

// Barrier tells when the processes are idle (see the package
// documentation); it implements settle.Barrier.
type Barrier struct {
	opts  Options
	procs []*watched
	// unsupported: this system cannot show the processes' threads.
	unsupported error
	checks      int
	// lastRunning is the index of the process the last check found
	// running, looked at first.
	lastRunning int
}

// watched is a process the barrier looks at.
type watched struct {
	Process
	sampler procquiet.Sampler
	pid     int
}

// New returns a barrier on the processes of opts.
func New(opts Options) *Barrier {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	b := &Barrier{opts: opts}
	for _, p := range opts.Processes {
		b.procs = append(b.procs, &watched{Process: p})
	}
	return b
}

// Name names the processes ("kube-controller-manager and kueue").
func (b *Barrier) Name() string {
	names := make([]string, len(b.procs))
	for i, p := range b.procs {
		names[i] = p.Name
	}
	return strings.Join(names, " and ")
}

// Checks counts the checks so far.
func (b *Barrier) Checks() int { return b.checks }

// Check runs the barrier once.
func (b *Barrier) Check(context.Context) (settle.BarrierVerdict, error) {
	b.checks++
	if b.unsupported != nil {
		return settle.BarrierVerdict{Idle: true, Unproven: "the processes of " + b.Name() + " cannot be watched on this system: " + b.unsupported.Error()}, nil
	}
	o := &b.opts
	inFlight, finished := o.Requests()
	if inFlight > 0 {
		return settle.BarrierVerdict{Waiting: fmt.Sprintf("%d API requests in progress", inFlight)}, nil
	}
	read, rv := o.BytesRead(), o.StoreRV()
	if why := o.Undelivered(); why != "" {
		return settle.BarrierVerdict{Waiting: "watch events not yet written to their clients: " + why}, nil
	}
	if o.Unsent != nil {
		n, err := o.Unsent()
		if errors.Is(err, errors.ErrUnsupported) {
			return settle.BarrierVerdict{Idle: true, Unproven: "the API server's sockets cannot be read: " + err.Error()}, nil
		}
		if err != nil {
			return settle.BarrierVerdict{}, fmt.Errorf("controllers: reading the API server's sockets: %w", err)
		}
		if n > 0 {
			return settle.BarrierVerdict{Waiting: fmt.Sprintf("%d bytes written to the clients not yet received by them", n)}, nil
		}
	}
	// The process last seen running first: while it works, a check fails
	// at its first snapshot instead of proving the others quiet before.
	for i := range b.procs {
		n := (b.lastRunning + i) % len(b.procs)
		p := b.procs[n]
		quiet, err := b.quiescent(p)
		if b.unsupported != nil {
			return b.Check(context.Background())
		}
		if err != nil {
			return settle.BarrierVerdict{Waiting: fmt.Sprintf("%s's process: %v", p.Name, err)}, nil
		}
		if !quiet {
			b.lastRunning = n
			return settle.BarrierVerdict{Waiting: p.Name + " is running"}, nil
		}
	}
	queued, err := o.Unread()
	if errors.Is(err, errors.ErrUnsupported) {
		return settle.BarrierVerdict{Idle: true, Unproven: "the API server's sockets cannot be read: " + err.Error()}, nil
	}
	if err != nil {
		return settle.BarrierVerdict{}, fmt.Errorf("controllers: reading the API server's sockets: %w", err)
	}
	if queued > 0 {
		return settle.BarrierVerdict{Waiting: fmt.Sprintf("%d bytes of requests not yet read by the API server", queued)}, nil
	}
	inFlight2, finished2 := o.Requests()
	if inFlight2 > 0 || finished2 != finished || o.BytesRead() != read || o.StoreRV() != rv {
		return settle.BarrierVerdict{Waiting: "the API was used during the check"}, nil
	}
	// Last, as it asks the kernel about every connection: a quiescent
	// process with bytes in its sockets has yet to be woken to read them.
	if o.PeersUnread != nil {
		n, err := o.PeersUnread()
		if err != nil && !errors.Is(err, errors.ErrUnsupported) {
			return settle.BarrierVerdict{}, fmt.Errorf("controllers: the clients' sockets: %w", err)
		}
		if n > 0 {
			return settle.BarrierVerdict{Waiting: fmt.Sprintf("%d bytes the API server sent not yet read by its clients", n)}, nil
		}
	}
	return settle.BarrierVerdict{Idle: true, RV: rv}, nil
}

// quiescent looks at p's process twice (procquiet.Sampler.Quiescent). On a
// system that cannot show it, it sets b.unsupported.
func (b *Barrier) quiescent(p *watched) (bool, error) {
	pid, err := p.find()
	if err != nil {
		return false, err
	}
	quiet, err := p.sampler.Quiescent(pid)
	if err != nil {
		if errors.Is(err, procquiet.ErrNoSchedInfo) || errors.Is(err, errors.ErrUnsupported) {
			b.unsupported = err
			b.opts.Logger.Warn("cannot watch the controllers' processes on this system: steps will be reported as not exact", "process", p.Name, "err", err)
			return false, err
		}
		p.pid = 0 // exited: read the PID file again
		return false, err
	}
	return quiet, nil
}

// find reads the process's PID once (again after it exits).
func (p *watched) find() (int, error) {
	if p.pid != 0 {
		return p.pid, nil
	}
	data, err := os.ReadFile(p.PIDFile)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s: not a PID: %q", p.PIDFile, data)
	}
	p.pid = pid
	return pid, nil
}
