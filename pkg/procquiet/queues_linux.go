//go:build linux

package procquiet

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
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

// ProcessUnread returns the bytes waiting unread in the receive queues of
// the connected TCP sockets of process pid (its socket fds, found in
// /proc/pid/fd, looked up in /proc/net/tcp and tcp6): what others sent it
// that it has not read yet. It reads the process's fd table and the
// machine's socket tables: call it once a check, not once an event.
func ProcessUnread(pid int) (int, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("procquiet: the sockets of process %d: %w", pid, err)
	}
	inodes := map[uint64]bool{}
	for _, e := range entries {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // closed meanwhile
			}
			return 0, fmt.Errorf("procquiet: the sockets of process %d: %w", pid, err)
		}
		if s, ok := strings.CutPrefix(link, "socket:["); ok {
			if inode, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				inodes[inode] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0, nil
	}
	total := 0
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		err := eachTCPSocket(name, func(s tcpSocket) {
			if s.inode != 0 && inodes[s.inode] && s.state == tcpEstablished {
				total += int(s.rxQueue)
			}
		})
		if err != nil {
			return 0, fmt.Errorf("procquiet: the sockets of process %d: %w", pid, err)
		}
	}
	return total, nil
}
