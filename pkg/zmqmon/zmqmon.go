// Package zmqmon opens a ZeroMQ socket with its own context and a monitor of
// its connections, which tells when the peer is gone: a REQ socket whose
// peer died would otherwise wait for a reply forever, and a REP socket for
// a request. The Batsim transport (pkg/batsim) and the batsky-go time
// server (pkg/simtime/timeservice/batsky) are built on it.
//
// It owns the socket's life cycle and the count of its peers; what is sent,
// and how a caller waits (blocking receive or poll), is the caller's. A
// Socket is not safe for concurrent use: ZeroMQ sockets are not.
package zmqmon

import (
	"errors"
	"fmt"
	"syscall"

	zmq "github.com/pebbe/zmq4"
)

// Socket is a ZeroMQ socket, its context and its monitor.
type Socket struct {
	// Sock is the socket itself; Monitor receives its connection events.
	Sock, Monitor *zmq.Socket
	// Endpoint is the endpoint bound or connected, as ZeroMQ resolved it
	// (the port chosen for "tcp://127.0.0.1:*").
	Endpoint string

	zctx  *zmq.Context
	peers int // connections the monitor reported open and not yet closed
}

// Options say how Open sets a socket up.
type Options struct {
	// Name tells this socket's monitor from others of the process
	// ("inproc://<Name>-monitor"); each socket has its own context, so it
	// needs only to be a valid inproc name.
	Name string
	// Bind binds the endpoint; otherwise the socket connects to it.
	Bind bool
	// Configure, if set, sets socket options before the socket binds or
	// connects (linger is 0 already).
	Configure func(*zmq.Socket) error
}

// Open opens a socket of type typ on endpoint. The monitor is connected
// before the socket binds or connects, so that no connection event is
// missed.
func Open(typ zmq.Type, endpoint string, opts Options) (_ *Socket, err error) {
	s := &Socket{}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	if s.zctx, err = zmq.NewContext(); err != nil {
		return nil, fmt.Errorf("new ZeroMQ context: %w", err)
	}
	if s.Sock, err = s.zctx.NewSocket(typ); err != nil {
		return nil, fmt.Errorf("new %s socket: %w", typ, err)
	}
	if err = s.Sock.SetLinger(0); err != nil {
		return nil, fmt.Errorf("set linger: %w", err)
	}
	if opts.Configure != nil {
		if err = opts.Configure(s.Sock); err != nil {
			return nil, err
		}
	}
	monitorEndpoint := "inproc://" + opts.Name + "-monitor"
	if err = s.Sock.Monitor(monitorEndpoint, zmq.EVENT_ACCEPTED|zmq.EVENT_CONNECTED|zmq.EVENT_DISCONNECTED); err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	if s.Monitor, err = s.zctx.NewSocket(zmq.PAIR); err != nil {
		return nil, fmt.Errorf("new monitor socket: %w", err)
	}
	if err = s.Monitor.SetLinger(0); err != nil {
		return nil, fmt.Errorf("set linger: %w", err)
	}
	if err = s.Monitor.Connect(monitorEndpoint); err != nil {
		return nil, fmt.Errorf("connect monitor: %w", err)
	}
	if opts.Bind {
		err = s.Sock.Bind(endpoint)
	} else {
		err = s.Sock.Connect(endpoint)
	}
	if err != nil {
		return nil, err
	}
	if s.Endpoint, err = s.Sock.GetLastEndpoint(); err != nil {
		return nil, fmt.Errorf("last endpoint: %w", err)
	}
	return s, nil
}

// DrainMonitor reads the pending connection events without waiting and
// reports whether a peer disconnected among them.
func (s *Socket) DrainMonitor() (disconnected bool, err error) {
	for {
		ev, _, _, err := s.Monitor.RecvEvent(zmq.DONTWAIT)
		if err != nil {
			if zmq.AsErrno(err) == zmq.Errno(syscall.EAGAIN) {
				return disconnected, nil
			}
			return disconnected, fmt.Errorf("monitor: %w", err)
		}
		switch ev {
		case zmq.EVENT_ACCEPTED, zmq.EVENT_CONNECTED:
			s.peers++
		case zmq.EVENT_DISCONNECTED:
			s.peers = max(0, s.peers-1)
			disconnected = true
		}
	}
}

// Peers returns how many connections are open, as far as the events
// DrainMonitor has read tell.
func (s *Socket) Peers() int { return s.peers }

// Close closes the socket (which stops its monitor), the monitor's socket
// and the context, whatever Open got to.
func (s *Socket) Close() error {
	var errs []error
	if s.Sock != nil {
		errs = append(errs, s.Sock.Close())
	}
	if s.Monitor != nil {
		errs = append(errs, s.Monitor.Close())
	}
	if s.zctx != nil {
		errs = append(errs, s.zctx.Term())
	}
	return errors.Join(errs...)
}
