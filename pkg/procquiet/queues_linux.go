//go:build linux

package procquiet

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Unsent returns the bytes a connected TCP socket of this process has
// written that the peer's kernel has not acknowledged yet (the SIOCOUTQ
// ioctl): on loopback, bytes not yet queued at the peer (the kernel
// delivers them in a softirq, which a loaded machine may defer). Once
// they are, the peer's waiting thread has been woken.
func Unsent(c syscall.RawConn) (int, error) {
	var n int
	var ierr error
	err := c.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) })
	if err == nil {
		err = ierr
	}
	if err != nil {
		return 0, fmt.Errorf("procquiet: unsent bytes of a socket: %w", err)
	}
	return n, nil
}
