package batsky

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/batkube/batkube/pkg/simtime/simclock"
	"github.com/batkube/batkube/pkg/zmqmon"
)

// DefaultEndpoint is where batsky-go binds its socket (hard-coded there).
const DefaultEndpoint = "tcp://127.0.0.1:27000"

// DefaultPollInterval bounds how long a blocked exchange takes to notice
// that its context is done.
const DefaultPollInterval = 50 * time.Millisecond

// The fixed messages of an exchange.
var (
	msgReady = []byte("ready")
	msgDone  = []byte("done")
)

// ErrProtocol is wrapped by the errors of a peer that does not speak
// batsky-go's protocol.
var ErrProtocol = errors.New("batsky: protocol violation")

// errPeerGone: the scheduler's connection dropped mid-exchange.
var errPeerGone = errors.New("batsky: the scheduler disconnected")

// Options configure a Server.
type Options struct {
	// Endpoint is the ZeroMQ endpoint of the scheduler's socket
	// (DefaultEndpoint for batsky-go); required.
	Endpoint string
	// Clock is the simulated clock served; required, with an epoch not
	// before 1970.
	Clock *simclock.Clock
	// Bind binds the endpoint instead of connecting to it, for batsky-go
	// builds before commit 33cc99b (2020-05-27), whose socket connected.
	Bind bool
	// Interval is the least wall-clock time between the starts of two
	// exchanges; 0 runs them back to back, as the prototype did (lowest
	// latency for the scheduler's time readings, most CPU).
	Interval time.Duration
	// PollInterval bounds how long a blocked exchange takes to notice that
	// Run's context is done (default DefaultPollInterval).
	PollInterval time.Duration
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
}

// Server answers the time requests of a batsky-go scheduler (see the
// package doc). Run it once.
type Server struct {
	opts      Options
	log       *slog.Logger
	exchanges atomic.Uint64
	timers    atomic.Uint64
}

// New checks opts and returns a Server; Run opens the socket.
func New(opts Options) (*Server, error) {
	if opts.Endpoint == "" {
		return nil, errors.New("batsky: an endpoint is required")
	}
	if opts.Clock == nil {
		return nil, errors.New("batsky: a Clock is required")
	}
	if opts.Clock.Epoch().Before(time.Unix(0, 0)) {
		return nil, fmt.Errorf("batsky: the clock's epoch %s is before 1970: batsky-go reads time as unsigned Unix nanoseconds",
			opts.Clock.Epoch().Format(time.RFC3339))
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, log: log}, nil
}

// Exchanges returns how many exchanges have been completed.
func (s *Server) Exchanges() uint64 { return s.exchanges.Load() }

// Timers returns how many timers the scheduler has requested.
func (s *Server) Timers() uint64 { return s.timers.Load() }

// Run serves exchanges until ctx is done, then closes its socket and
// returns nil. A scheduler that disconnects mid-exchange is waited for again
// on a fresh socket. Run returns an error wrapping ErrProtocol if the peer
// answers something batsky-go never sends, or one from ZeroMQ.
func (s *Server) Run(ctx context.Context) error {
	for {
		c, err := s.open()
		if err != nil {
			return err
		}
		s.log.Debug("batsky: waiting for a scheduler", "endpoint", s.opts.Endpoint, "bind", s.opts.Bind)
		err = s.serve(ctx, c)
		if cerr := c.close(); cerr != nil && err == nil {
			err = cerr
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errPeerGone):
			s.log.Info("batsky: the scheduler disconnected; waiting for it again", "endpoint", s.opts.Endpoint)
		default:
			return err
		}
	}
}

// serve runs exchanges on c until an error or ctx's end.
func (s *Server) serve(ctx context.Context, c *conn) error {
	var pace *time.Timer
	if s.opts.Interval > 0 {
		pace = time.NewTimer(0)
		defer pace.Stop()
	}
	for {
		if pace != nil {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-pace.C:
				pace.Reset(s.opts.Interval)
			}
		}
		if err := s.exchange(ctx, c); err != nil {
			return err
		}
		s.exchanges.Add(1)
	}
}

// exchange runs one exchange: "ready", durations, time, "done".
func (s *Server) exchange(ctx context.Context, c *conn) error {
	// A scheduler that left between exchanges, and maybe came back, broke
	// nothing: forget it before starting.
	if err := c.drainMonitor(); err != nil {
		return err
	}
	c.pending = false
	if err := c.send(ctx, msgReady); err != nil {
		return err
	}
	c.pending = true
	b, err := c.recv(ctx)
	if err != nil {
		return err
	}
	var durations []int64
	if err := json.Unmarshal(b, &durations); err != nil {
		return fmt.Errorf("%w: want a JSON array of timer durations in ns, got %.64q: %w", ErrProtocol, b, err)
	}
	now := s.opts.Clock.Now()
	for _, d := range durations {
		if d <= 0 {
			s.log.Warn("batsky: ignoring a non-positive timer duration", "ns", d)
			continue
		}
		// The scheduler computes the same instant: the time answered below
		// plus d. Nobody waits on the channel: batsky-go polls.
		s.opts.Clock.NewTimer(now.Add(time.Duration(d)))
		s.timers.Add(1)
	}
	if err := c.send(ctx, encodeTime(now)); err != nil {
		return err
	}
	if b, err = c.recv(ctx); err != nil {
		return err
	}
	if string(b) != string(msgDone) {
		return fmt.Errorf("%w: want %q, got %.64q", ErrProtocol, msgDone, b)
	}
	c.pending = false
	return nil
}

// encodeTime encodes t as batsky-go reads it: Unix nanoseconds, unsigned
// 64-bit little endian, saturated to the largest int64 (year 2262).
func encodeTime(t time.Time) []byte {
	n := uint64(math.MaxInt64)
	if t.Before(time.Unix(0, math.MaxInt64)) {
		n = uint64(max(0, t.UnixNano()))
	}
	return binary.LittleEndian.AppendUint64(make([]byte, 0, 8), n)
}

// conn is a monitored REQ socket (zmqmon) polled with its monitor. It is
// used by one goroutine.
type conn struct {
	z       *zmqmon.Socket
	in, out *zmq.Poller
	poll    time.Duration
	// pending: an exchange is under way, which a disconnection breaks.
	pending bool
}

func (s *Server) open() (*conn, error) {
	z, err := zmqmon.Open(zmq.REQ, s.opts.Endpoint, zmqmon.Options{Name: "batsky", Bind: s.opts.Bind})
	if err != nil {
		return nil, fmt.Errorf("batsky: opening %s: %w", s.opts.Endpoint, err)
	}
	c := &conn{z: z, poll: s.opts.PollInterval, in: zmq.NewPoller(), out: zmq.NewPoller()}
	c.in.Add(z.Sock, zmq.POLLIN)
	c.in.Add(z.Monitor, zmq.POLLIN)
	c.out.Add(z.Sock, zmq.POLLOUT)
	c.out.Add(z.Monitor, zmq.POLLIN)
	return c, nil
}

// send sends b once the socket can take it (a bound socket cannot before a
// scheduler connects).
func (c *conn) send(ctx context.Context, b []byte) error {
	for {
		_, err := c.z.Sock.SendBytes(b, zmq.DONTWAIT)
		if err == nil {
			return nil
		}
		if zmq.AsErrno(err) != zmq.Errno(syscall.EAGAIN) {
			return fmt.Errorf("batsky: send: %w", err)
		}
		if _, err := c.wait(ctx, c.out); err != nil {
			return err
		}
	}
}

// recv waits for the next message.
func (c *conn) recv(ctx context.Context) ([]byte, error) {
	for {
		ready, err := c.wait(ctx, c.in)
		if err != nil {
			return nil, err
		}
		if !ready {
			continue
		}
		b, err := c.z.Sock.RecvBytes(zmq.DONTWAIT)
		switch {
		case err == nil:
			return b, nil
		case zmq.AsErrno(err) != zmq.Errno(syscall.EAGAIN):
			return nil, fmt.Errorf("batsky: receive: %w", err)
		}
	}
}

// wait polls p for one poll interval and reports whether the socket is
// ready; it fails when ctx is done or the peer disconnected.
func (c *conn) wait(ctx context.Context, p *zmq.Poller) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	polled, err := p.Poll(c.poll)
	if err != nil {
		return false, fmt.Errorf("batsky: poll: %w", err)
	}
	ready := false
	for _, ps := range polled {
		if ps.Socket == c.z.Sock {
			ready = true
			continue
		}
		if err := c.drainMonitor(); err != nil {
			return false, err
		}
	}
	return ready, nil
}

// drainMonitor reads the connection events; a disconnection during an
// exchange breaks it (the REQ socket would wait for a reply forever).
func (c *conn) drainMonitor() error {
	disconnected, err := c.z.DrainMonitor()
	if err != nil {
		return fmt.Errorf("batsky: %w", err)
	}
	if disconnected && c.pending {
		return errPeerGone
	}
	return nil
}

func (c *conn) close() error {
	if err := c.z.Close(); err != nil {
		return fmt.Errorf("batsky: close: %w", err)
	}
	return nil
}
