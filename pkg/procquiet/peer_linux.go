//go:build linux

package procquiet

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"syscall"
)

// PeerPID returns the PID of the local process that holds the other end
// of a TCP connection of this process. local and remote are the ends as
// this process sees them: for a server, the connection's local address
// (net.Conn.LocalAddr, or the http.LocalAddrContextKey value of a
// request's context) and the client's address (http.Request.RemoteAddr).
// IPv4-mapped IPv6 addresses are taken as IPv4, and zones are ignored. A
// local address that is unspecified (the listen address [::]:8080 or
// 0.0.0.0:8080) matches any address with its port.
//
// It looks for the socket whose local address is remote and whose remote
// address is local in /proc/net/tcp and /proc/net/tcp6 (the network
// namespace of this process), then for the process having socket:[inode]
// among /proc/*/fd/*. Processes whose fds this process may not read
// (another user's, without CAP_SYS_PTRACE) are skipped. It returns an
// error wrapping ErrNotFound when there is no such socket (the peer is not
// local, is in another network namespace, or has closed its end) or no
// readable process holds it, and one wrapping ErrAmbiguous when several
// processes hold it (a socket inherited across fork; a Go program's
// sockets are close-on-exec, a shell's redirections are not) or, with an
// unspecified local address, several sockets match. The PID is in the PID
// namespace of this process's /proc.
//
// It reads every process's fd table (a readlink per fd): milliseconds on
// a busy host. Call it once per connection, not per event.
func PeerPID(local, remote netip.AddrPort) (int, error) {
	if !local.IsValid() || !remote.IsValid() {
		return 0, fmt.Errorf("procquiet: peer of %v-%v: invalid address", local, remote)
	}
	local = netip.AddrPortFrom(local.Addr().Unmap().WithZone(""), local.Port())
	remote = netip.AddrPortFrom(remote.Addr().Unmap().WithZone(""), remote.Port())
	inode, err := socketInodeOf(remote, local)
	if err != nil {
		return 0, fmt.Errorf("procquiet: peer of %v-%v: %w", local, remote, err)
	}
	pids, n, err := socketHolders(inode)
	if err != nil {
		return 0, fmt.Errorf("procquiet: peer of %v-%v: socket inode %d: %w", local, remote, inode, err)
	}
	switch len(pids) {
	case 0:
		return 0, fmt.Errorf("procquiet: peer of %v-%v: no process with socket:[%d] among the fds of %d readable processes (%d unreadable): %w",
			local, remote, inode, n.readable, n.denied, ErrNotFound)
	case 1:
		return pids[0], nil
	}
	return 0, fmt.Errorf("procquiet: peer of %v-%v: socket:[%d] held by processes %v: %w", local, remote, inode, pids, ErrAmbiguous)
}

// socketInodeOf returns the inode of the TCP socket bound to local and
// connected to remote, whose address may be unspecified.
func socketInodeOf(local, remote netip.AddrPort) (uint64, error) {
	files := []string{"/proc/net/tcp6"}
	if local.Addr().Is4() {
		files = []string{"/proc/net/tcp", "/proc/net/tcp6"}
	}
	var found []uint64
	for _, name := range files {
		var err error
		if found, err = findSockets(name, local, remote, found); err != nil {
			return 0, err
		}
	}
	switch len(found) {
	case 0:
		return 0, fmt.Errorf("no socket with local address %v and remote address %v in /proc/net/tcp or /proc/net/tcp6: %w", local, remote, ErrNotFound)
	case 1:
		return found[0], nil
	}
	return 0, fmt.Errorf("sockets %v all have local address %v and remote address %v: %w", found, local, remote, ErrAmbiguous)
}

// findSockets appends to found the inodes of the sockets listed in file
// name that are bound to local and connected to remote (any address if
// remote's is unspecified). A missing file (no IPv6) is no error.
func findSockets(name string, local, remote netip.AddrPort, found []uint64) ([]uint64, error) {
	anyAddr := remote.Addr().IsUnspecified()
	err := eachTCPSocket(name, func(s tcpSocket) {
		if s.inode != 0 && s.local == local &&
			(s.remote == remote || anyAddr && s.remote.Port() == remote.Port()) {
			found = append(found, s.inode)
		}
	})
	return found, err
}

// scanCount counts the processes whose fds were read and those skipped
// for lack of permission.
type scanCount struct{ readable, denied int }

// socketHolders returns the processes having socket:[inode] among their
// fds.
func socketHolders(inode uint64) (pids []int, n scanCount, err error) {
	want := strconv.AppendUint([]byte("socket:["), inode, 10)
	want = append(want, ']')
	procfd, err := openat(atFDCWD, []byte("/proc\x00"), syscall.O_DIRECTORY)
	if err != nil {
		return nil, n, &os.PathError{Op: "open", Path: "/proc", Err: err}
	}
	defer syscall.Close(procfd)
	var (
		procBuf = make([]byte, 32<<10)
		fdBuf   = make([]byte, 16<<10)
		link    = make([]byte, 256)
		path    []byte
	)
	for {
		nb, err := syscall.Getdents(procfd, procBuf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, n, fmt.Errorf("reading /proc: %w", err)
		}
		if nb == 0 {
			return pids, n, nil
		}
		for rec := procBuf[:nb]; len(rec) > 0; {
			name, rest, ok := nextDirent(rec)
			if !ok {
				return nil, n, errors.New("malformed directory record in /proc")
			}
			rec = rest
			pid, ok := parseTID(name)
			if !ok {
				continue
			}
			path = append(append(path[:0], name...), "/fd\x00"...)
			fdDir, err := openat(procfd, path, syscall.O_DIRECTORY)
			if err != nil {
				if err == syscall.EACCES || err == syscall.EPERM {
					n.denied++
				}
				continue // exited, or not ours to read
			}
			held, err := holds(fdDir, fdBuf, link, want)
			syscall.Close(fdDir)
			switch {
			case err == syscall.EACCES || err == syscall.EPERM:
				n.denied++
			case err != nil:
				// The process exited while being read.
			default:
				n.readable++
				if held {
					pids = append(pids, pid)
				}
			}
		}
	}
}

// holds reports whether one of the fds of directory fdDir (/proc/PID/fd)
// links to want.
func holds(fdDir int, buf, link, want []byte) (bool, error) {
	var path [24]byte
	for {
		nb, err := syscall.Getdents(fdDir, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false, err
		}
		if nb == 0 {
			return false, nil
		}
		for rec := buf[:nb]; len(rec) > 0; {
			name, rest, ok := nextDirent(rec)
			if !ok || len(name) >= len(path) {
				return false, syscall.EINVAL
			}
			rec = rest
			if name[0] == '.' {
				continue
			}
			p := append(append(path[:0], name...), 0)
			m, err := readlinkat(fdDir, p, link)
			if err != nil {
				continue // closed meanwhile
			}
			if bytes.Equal(link[:m], want) {
				return true, nil
			}
		}
	}
}

// ListenerPID returns the PID of the local process whose TCP socket listens
// on addr (e.g. a server's 127.0.0.1:10259), with PeerPID's errors.
func ListenerPID(addr netip.AddrPort) (int, error) {
	unspecified := netip.IPv4Unspecified()
	if a := addr.Addr(); a.Is6() && !a.Is4In6() {
		unspecified = netip.IPv6Unspecified()
	}
	return PeerPID(netip.AddrPortFrom(unspecified, 0), addr)
}

// ReceiveQueued returns the bytes that connected TCP sockets bound to
// local (a server's listening address, e.g. 127.0.0.1:8001: the server's
// ends of its connections) have received and their process has not read
// yet: requests on their way to a server that has not seen them.
func ReceiveQueued(local netip.AddrPort) (int, error) {
	files := []string{"/proc/net/tcp6"}
	if local.Addr().Is4() {
		files = []string{"/proc/net/tcp", "/proc/net/tcp6"}
	}
	total := 0
	for _, name := range files {
		err := eachTCPSocket(name, func(s tcpSocket) {
			if s.local == local && s.state == tcpEstablished {
				total += int(s.rxQueue)
			}
		})
		if err != nil {
			return 0, err
		}
	}
	return total, nil
}

// eachTCPSocket calls f with each socket listed in file name (a missing
// file, no IPv6, is no error).
func eachTCPSocket(name string, f func(tcpSocket)) error {
	file, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, 64<<10)
	for first := true; ; first = false {
		line, err := r.ReadSlice('\n')
		if err == io.EOF && len(line) == 0 {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		if !first {
			s, perr := parseTCPLine(bytes.TrimRight(line, "\n"), binary.NativeEndian)
			if perr != nil {
				return fmt.Errorf("%s: %w", name, perr)
			}
			f(s)
		}
		if err == io.EOF {
			return nil
		}
	}
}
