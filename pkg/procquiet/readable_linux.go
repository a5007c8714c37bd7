//go:build linux

package procquiet

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Readable asks the kernel, in one system call, whether any of a set of
// sockets has something to read: bytes in a connection's receive queue
// (what Unread counts), a connection waiting in a listener's accept queue
// (AcceptQueue), or an end of stream or error not yet read. It is an
// epoll instance of its own, on which each socket is registered for input,
// level-triggered: epoll_wait with no timeout reports a socket whenever
// its queue is not empty at that moment, as the ioctl would, so that a
// question over every socket of a server costs one system call instead of
// one each. A socket leaves the set when it is closed (the kernel removes
// a file from every epoll set when its last descriptor goes).
//
// Go's own network poller registers the same sockets on its epoll
// instance, edge-triggered; the two are independent.
type Readable struct {
	mu     sync.Mutex
	epfd   int // -1 once closed
	events [1]unix.EpollEvent
}

// NewReadable returns an empty set.
func NewReadable() (*Readable, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("procquiet: epoll instance: %w", err)
	}
	return &Readable{epfd: fd}, nil
}

// errReadableClosed is returned by a closed set.
var errReadableClosed = errors.New("procquiet: the readable set is closed")

// Add registers the socket c.
func (r *Readable) Add(c syscall.RawConn) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.epfd < 0 {
		return errReadableClosed
	}
	var cerr error
	err := c.Control(func(fd uintptr) {
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(fd)}
		cerr = unix.EpollCtl(r.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev)
	})
	if err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("procquiet: watching a socket for input: %w", err)
	}
	return nil
}

// Any reports whether a socket of the set has something to read now
// (false for an empty set).
func (r *Readable) Any() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.epfd < 0 {
		return false, errReadableClosed
	}
	for {
		n, err := unix.EpollWait(r.epfd, r.events[:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("procquiet: sockets with input: %w", err)
		}
		return n > 0, nil
	}
}

// Close releases the epoll instance; the sockets are not touched.
func (r *Readable) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.epfd < 0 {
		return nil
	}
	err := unix.Close(r.epfd)
	r.epfd = -1
	return err
}
