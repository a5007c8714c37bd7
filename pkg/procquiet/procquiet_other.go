//go:build !linux

package procquiet

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// Sampler takes snapshots reusing its buffers. On this system every
// method returns an error wrapping errors.ErrUnsupported.
type Sampler struct{}

func unsupported(what string) error {
	return fmt.Errorf("procquiet: %s: %w (Linux /proc only)", what, errors.ErrUnsupported)
}

// Snapshot returns an error wrapping errors.ErrUnsupported.
func Snapshot(pid int) (Threads, error) { return Threads{}, unsupported("snapshot") }

// Snapshot returns an error wrapping errors.ErrUnsupported.
func (s *Sampler) Snapshot(pid int, t *Threads) error { return unsupported("snapshot") }

// Close returns nil.
func (s *Sampler) Close() error { return nil }

// Quiescent returns an error wrapping errors.ErrUnsupported.
func Quiescent(pid int) (bool, error) { return false, unsupported("quiescent") }

// Quiescent returns an error wrapping errors.ErrUnsupported.
func (s *Sampler) Quiescent(pid int) (bool, error) { return false, unsupported("quiescent") }

// PeerPID returns an error wrapping errors.ErrUnsupported.
func PeerPID(local, remote netip.AddrPort) (int, error) { return 0, unsupported("peer pid") }

// ListenerPID is not supported on this system.
func ListenerPID(addr netip.AddrPort) (int, error) { return 0, unsupported("listener pid") }

// ReceiveQueued is not supported on this system.
func ReceiveQueued(local netip.AddrPort) (int, error) { return 0, unsupported("receive queue") }

// Unread is not supported on this system.
func Unread(syscall.RawConn) (int, error) { return 0, unsupported("unread bytes") }

// AcceptQueue is not supported on this system.
func AcceptQueue(syscall.RawConn) (int, error) { return 0, unsupported("accept queue") }

// Unsent is not supported on this system.
func Unsent(syscall.RawConn) (int, error) { return 0, unsupported("unsent bytes") }

// PeersUnread is not supported on this system.
func PeersUnread([]Connection) (int, error) { return 0, unsupported("peers' unread bytes") }

// Undelivered is not supported on this system.
func Undelivered([]OwnConnection) (int, error) { return 0, unsupported("undelivered bytes") }

// SocketDiag is not supported on this system.
type SocketDiag struct{}

// NewSocketDiag returns an error wrapping errors.ErrUnsupported.
func NewSocketDiag() (*SocketDiag, error) { return nil, unsupported("sock_diag") }

// Close returns nil.
func (d *SocketDiag) Close() error { return nil }

// PeerUnread returns an error wrapping errors.ErrUnsupported.
func (d *SocketDiag) PeerUnread(Connection) (int, error) {
	return 0, unsupported("peers' unread bytes")
}

// Undelivered returns an error wrapping errors.ErrUnsupported.
func (d *SocketDiag) Undelivered(OwnConnection) (int, error) {
	return 0, unsupported("undelivered bytes")
}

// Readable is not supported on this system.
type Readable struct{}

// NewReadable returns an error wrapping errors.ErrUnsupported.
func NewReadable() (*Readable, error) { return nil, unsupported("readable sockets") }

// Add returns an error wrapping errors.ErrUnsupported.
func (r *Readable) Add(syscall.RawConn) error { return unsupported("readable sockets") }

// Any returns an error wrapping errors.ErrUnsupported.
func (r *Readable) Any() (bool, error) { return false, unsupported("readable sockets") }

// Close returns nil.
func (r *Readable) Close() error { return nil }
