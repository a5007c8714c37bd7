package batsim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/batkube/batkube/pkg/zmqmon"
)

// DefaultEndpoint is where a decision process listens and Batsim connects by
// default (Batsim's -s/--socket-endpoint is tcp://localhost:28000).
const DefaultEndpoint = "tcp://127.0.0.1:28000"

// DefaultPollInterval bounds how long a blocked Recv or Request takes to
// notice that its context is done or that Close was called.
const DefaultPollInterval = 50 * time.Millisecond

// Option configures a Conn or a Client.
type Option func(*options)

type options struct {
	pollInterval time.Duration
}

// WithPollInterval sets how often a blocked Recv or Request checks its
// context and Close (default DefaultPollInterval).
func WithPollInterval(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.pollInterval = d
		}
	}
}

// Conn is the decision process's side of the protocol: a ZeroMQ REP socket
// bound to an endpoint, to which Batsim connects. Batsim sends a message and
// waits for exactly one reply, so calls alternate: Recv, Send, Recv, ...
//
// Recv, Send and Endpoint must be called from one goroutine at a time; Close
// may be called from any goroutine and interrupts a blocked Recv.
//
// Detecting that Batsim died: Recv returns an error wrapping
// ErrPeerDisconnected as soon as the peers that had connected have all
// disconnected (a socket monitor watches the connections; a crashed Batsim's
// TCP or IPC connection is closed by its operating system). A Batsim that
// hangs without closing its socket is detected by giving Recv a context with
// a deadline: Recv then returns an error wrapping
// context.DeadlineExceeded.
type Conn struct {
	s *socket
}

// Listen binds a REP socket to endpoint ("tcp://127.0.0.1:28000",
// "ipc:///tmp/batsim.sock"; "tcp://127.0.0.1:*" picks a free port, see
// Endpoint).
func Listen(endpoint string, opts ...Option) (*Conn, error) {
	s, err := newSocket(zmq.REP, endpoint, true, opts)
	if err != nil {
		return nil, fmt.Errorf("batsim: listen on %s: %w", endpoint, err)
	}
	return &Conn{s: s}, nil
}

// Endpoint returns the endpoint the socket is bound to, with the port chosen
// by the system if a wildcard was asked for.
func (c *Conn) Endpoint() string { return c.s.z.Endpoint }

// Recv waits for the next message from Batsim and decodes it. It returns
// when a message arrives, when ctx is done (the error wraps ctx.Err()), when
// Batsim disconnected (ErrPeerDisconnected) or when the Conn is closed
// (ErrClosed). A decoding error is a *MessageError; Batsim then still waits
// for a reply, but there is little to answer to a message one cannot read.
func (c *Conn) Recv(ctx context.Context) (Message, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	b, err := c.s.recvLocked(ctx)
	if err != nil {
		return Message{}, fmt.Errorf("batsim: receive from Batsim: %w", err)
	}
	return Decode(b, FromBatsim)
}

// Send encodes and sends the reply to the last message received. If m does
// not validate, nothing is sent and the reply is still due.
func (c *Conn) Send(m Message) error {
	b, err := Encode(m, FromScheduler)
	if err != nil {
		return err
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if err := c.s.sendLocked(b); err != nil {
		return fmt.Errorf("batsim: send to Batsim: %w", err)
	}
	return nil
}

// Close closes the socket. A blocked Recv returns ErrClosed within the poll
// interval. Close is idempotent.
func (c *Conn) Close() error { return c.s.close() }

// Client plays Batsim's side of the protocol: a ZeroMQ REQ socket connected
// to a decision process. It is what an embedded simulation engine uses, and
// what tests use to drive a Conn.
//
// Request must be called from one goroutine at a time; Close may be called
// from any goroutine.
type Client struct {
	s *socket
}

// Dial connects a REQ socket to endpoint. The decision process need not be
// listening yet: ZeroMQ connects (and reconnects) in the background.
func Dial(endpoint string, opts ...Option) (*Client, error) {
	s, err := newSocket(zmq.REQ, endpoint, false, opts)
	if err != nil {
		return nil, fmt.Errorf("batsim: dial %s: %w", endpoint, err)
	}
	return &Client{s: s}, nil
}

// Request sends m (as Batsim) and waits for the decision process's reply.
// If ctx ends first, Request returns an error wrapping ctx.Err(); the Client
// stays usable and a late reply to the abandoned request is discarded. An
// error wrapping ErrPeerDisconnected means the decision process went away.
func (c *Client) Request(ctx context.Context, m Message) (Message, error) {
	b, err := Encode(m, FromBatsim)
	if err != nil {
		return Message{}, err
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if err := c.s.sendLocked(b); err != nil {
		return Message{}, fmt.Errorf("batsim: send to the decision process: %w", err)
	}
	reply, err := c.s.recvLocked(ctx)
	if err != nil {
		return Message{}, fmt.Errorf("batsim: receive from the decision process: %w", err)
	}
	return Decode(reply, FromScheduler)
}

// Close closes the socket; it is idempotent.
func (c *Client) Close() error { return c.s.close() }

// socket is a monitored ZeroMQ socket (zmqmon) with a receive that looks at
// its context, at Close and at the monitor between two waits.
type socket struct {
	pollInterval time.Duration
	closed       atomic.Bool

	mu sync.Mutex // guards everything below: ZeroMQ sockets are not thread safe
	z  *zmqmon.Socket
	// ready is a copy of the socket's ZMQ_FD in Go's network poller, and
	// readyConn its raw connection: a receive waits on it rather than in
	// ZeroMQ's blocking receive.
	ready     *os.File
	readyConn syscall.RawConn
}

func newSocket(typ zmq.Type, endpoint string, bind bool, opts []Option) (*socket, error) {
	o := options{pollInterval: DefaultPollInterval}
	for _, opt := range opts {
		opt(&o)
	}
	z, err := zmqmon.Open(typ, endpoint, zmqmon.Options{Name: "batsim", Bind: bind, Configure: func(sock *zmq.Socket) error {
		if typ != zmq.REQ {
			return nil
		}
		// Allow a new request after an abandoned one, and drop the late
		// reply to the abandoned one.
		if err := sock.SetReqRelaxed(1); err != nil {
			return fmt.Errorf("set REQ_RELAXED: %w", err)
		}
		if err := sock.SetReqCorrelate(1); err != nil {
			return fmt.Errorf("set REQ_CORRELATE: %w", err)
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	ready, err := pollable(z.Sock)
	if err != nil {
		return nil, errors.Join(err, z.Close())
	}
	readyConn, err := ready.SyscallConn()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("ZMQ_FD: %w", err), ready.Close(), z.Close())
	}
	return &socket{pollInterval: o.pollInterval, z: z, ready: ready, readyConn: readyConn}, nil
}

// pollable returns a copy of sock's ZMQ_FD that Go's network poller
// watches. ZeroMQ signals that descriptor when the socket's state may have
// changed (edge-triggered, as Go's poller is); ZMQ_EVENTS then says whether
// a message waits.
//
// Why not ZeroMQ's blocking receive: a goroutine blocked in a call into C
// holds an OS thread in a system call, and Go's sysmon thread takes its
// processor away after 20 µs, then polls every 20 µs for at least a
// millisecond after the call returns, step after step. On a sparse trace
// that was a tenth of the server's CPU, and on a virtual machine where every
// wake-up enters the kernel, more.
func pollable(sock *zmq.Socket) (*os.File, error) {
	fd, err := sock.GetFd()
	if err != nil {
		return nil, fmt.Errorf("get ZMQ_FD: %w", err)
	}
	dup, err := syscall.Dup(fd)
	if err != nil {
		return nil, fmt.Errorf("duplicate ZMQ_FD: %w", err)
	}
	syscall.CloseOnExec(dup)
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		return nil, fmt.Errorf("ZMQ_FD non-blocking: %w", err)
	}
	// A non-blocking descriptor makes os.NewFile register it with the
	// poller, so that deadlines apply to it.
	f := os.NewFile(uintptr(dup), "zmq-fd")
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		f.Close()
		return nil, fmt.Errorf("ZMQ_FD is not pollable: %w", err)
	}
	return f, nil
}

// recvLocked waits for one message: it receives without blocking and,
// when nothing is there, waits in Go's network poller for the socket's
// ZMQ_FD for at most the poll interval at a time; between two waits, it
// looks at ctx, at Close and at the monitor, which tells whether the peer is
// gone.
func (s *socket) recvLocked(ctx context.Context) ([]byte, error) {
	for {
		if s.closed.Load() {
			return nil, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("no message: %w", err)
		}
		b, err := s.z.Sock.RecvBytes(zmq.DONTWAIT)
		switch {
		case err == nil:
			return b, nil
		case zmq.AsErrno(err) != zmq.Errno(syscall.EAGAIN) && zmq.AsErrno(err) != zmq.Errno(syscall.EINTR):
			return nil, fmt.Errorf("receive: %w", err)
		}
		wait := s.pollInterval
		if deadline, ok := ctx.Deadline(); ok {
			wait = max(time.Millisecond, min(wait, time.Until(deadline)))
		}
		if err := s.ready.SetReadDeadline(time.Now().Add(wait)); err != nil {
			return nil, fmt.Errorf("ZMQ_FD deadline: %w", err)
		}
		var eventsErr error
		err = s.readyConn.Read(func(uintptr) bool {
			// ZMQ_EVENTS also consumes the signal, so it is asked after
			// every wake-up and before every wait.
			events, err := s.z.Sock.GetEvents()
			if err != nil {
				eventsErr = err
				return true
			}
			return events&zmq.POLLIN != 0
		})
		switch {
		case eventsErr != nil:
			return nil, fmt.Errorf("ZMQ_EVENTS: %w", eventsErr)
		case err == nil:
			continue // a message waits (or a REQ socket's late reply, dropped)
		case !errors.Is(err, os.ErrDeadlineExceeded):
			return nil, fmt.Errorf("wait on ZMQ_FD: %w", err)
		}
		// Nothing within the wait: is the peer still there?
		disconnected, err := s.z.DrainMonitor()
		if err != nil {
			return nil, err
		}
		if disconnected && s.z.Peers() == 0 {
			return nil, ErrPeerDisconnected
		}
	}
}

func (s *socket) sendLocked(b []byte) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if _, err := s.z.Sock.SendBytes(b, zmq.DONTWAIT); err != nil {
		return err
	}
	return nil
}

func (s *socket) close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.mu.Lock() // a blocked recvLocked sees closed and returns within a poll interval
	defer s.mu.Unlock()
	if err := errors.Join(s.z.Close(), s.ready.Close()); err != nil {
		return fmt.Errorf("batsim: close: %w", err)
	}
	return nil
}
