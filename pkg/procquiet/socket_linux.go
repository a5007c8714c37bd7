//go:build linux

package procquiet

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Unread returns the bytes a connected TCP socket of this process has
// received and not read yet (the SIOCINQ ioctl): the part of a request
// that has reached a server but that the server has not seen. It asks the
// kernel about one socket, where ReceiveQueued lists every socket of the
// machine.
func Unread(c syscall.RawConn) (int, error) {
	var n int
	var ierr error
	err := c.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
	if err == nil {
		err = ierr
	}
	if err != nil {
		return 0, fmt.Errorf("procquiet: unread bytes of a socket: %w", err)
	}
	return n, nil
}

// AcceptQueue returns the connections a listening TCP socket of this
// process holds that have not been accepted yet (TCP_INFO, whose unacked
// field is a listening socket's accept queue): a client may have sent a
// request on them that no Unread can see.
func AcceptQueue(c syscall.RawConn) (int, error) {
	var info *unix.TCPInfo
	var ierr error
	err := c.Control(func(fd uintptr) { info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) })
	if err == nil {
		err = ierr
	}
	if err != nil {
		return 0, fmt.Errorf("procquiet: accept queue of a socket: %w", err)
	}
	return int(info.Unacked), nil
}
