//go:build linux

package procquiet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PeersUnread returns the bytes waiting unread in the receive queues of
// the other ends of conns (connections of this process whose peers are on
// this machine): what this process sent that its peers have not read yet.
// It asks the kernel about each peer socket by its addresses (sock_diag,
// an exact lookup), not by reading the machine's socket tables; a peer
// socket that is gone, or not on this machine, counts as none.
func PeersUnread(conns []Connection) (int, error) {
	return sumOver(conns, (*SocketDiag).PeerUnread)
}

// Undelivered returns the bytes this process wrote to conns that the
// sockets at their other ends have not received yet
// (SocketDiag.Undelivered on each).
func Undelivered(conns []OwnConnection) (int, error) {
	return sumOver(conns, (*SocketDiag).Undelivered)
}

func sumOver[C any](conns []C, count func(*SocketDiag, C) (int, error)) (int, error) {
	if len(conns) == 0 {
		return 0, nil
	}
	d, err := NewSocketDiag()
	if err != nil {
		return 0, err
	}
	defer d.Close()
	total := 0
	for _, c := range conns {
		n, err := count(d, c)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// SocketDiag asks the kernel about sockets through one sock_diag netlink
// socket, kept open across questions. One goroutine uses it at a time.
type SocketDiag struct {
	fd  int
	buf []byte
}

// NewSocketDiag opens the netlink socket.
func NewSocketDiag() (*SocketDiag, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("procquiet: sock_diag: %w", err)
	}
	return &SocketDiag{fd: fd, buf: make([]byte, 8192)}, nil
}

// Close closes the netlink socket.
func (d *SocketDiag) Close() error { return unix.Close(d.fd) }

// PeerUnread returns the bytes waiting unread in the receive queue of the
// other end of c, on this machine (none if it is gone or elsewhere).
func (d *SocketDiag) PeerUnread(c Connection) (int, error) {
	p, err := peerSocket(d.fd, d.buf, c, false)
	if err != nil {
		return 0, fmt.Errorf("procquiet: the peer of %v-%v: %w", c.Local, c.Remote, err)
	}
	return int(p.unread), nil
}

// Undelivered returns the bytes this process wrote to c that the socket
// at its other end has not received yet: the bytes written to the socket
// (those the peer acknowledged, tcp_info's bytes_acked, plus those not
// acknowledged yet, SIOCOUTQ, read first) less the bytes the peer's
// socket received (its tcp_info's bytes_received, through sock_diag, read
// after). With none undelivered, the peer's kernel holds everything
// written, and a peer thread waiting for it has been woken.
//
// SIOCOUTQ alone (Unsent) counts the bytes the peer received but has not
// acknowledged yet: on a connection the peer only reads (a watch), Linux
// delays its acknowledgements by up to 40 ms, which a caller polling for
// zero waits out although the bytes were delivered long before. A peer
// socket not on this machine (sock_diag finds none), or a kernel whose
// tcp_info lacks the counts (before Linux 4.2), falls back to SIOCOUTQ.
// Reads race with writes in the safe direction: a byte written or
// acknowledged between the reads can only make the result larger.
func (d *SocketDiag) Undelivered(c OwnConnection) (int, error) {
	n, err := undelivered(d.fd, d.buf, c)
	if err != nil {
		return 0, fmt.Errorf("procquiet: bytes written to %v-%v: %w", c.Local, c.Remote, err)
	}
	return n, nil
}

func undelivered(fd int, buf []byte, c OwnConnection) (int, error) {
	var (
		outq int
		info *unix.TCPInfo
		ierr error
	)
	err := c.Raw.Control(func(s uintptr) {
		// SIOCOUTQ again after tcp_info: an acknowledgement between the
		// two first reads counts its bytes twice (acknowledged, and still
		// in the queue read before), a safe but false "undelivered" that
		// would make the caller look again; with both queue reads equal,
		// none came (a few tries, then the safe count).
		for range 3 {
			if outq, ierr = unix.IoctlGetInt(int(s), unix.SIOCOUTQ); ierr != nil || outq == 0 {
				return
			}
			if info, ierr = unix.GetsockoptTCPInfo(int(s), unix.IPPROTO_TCP, unix.TCP_INFO); ierr != nil {
				return
			}
			again, err := unix.IoctlGetInt(int(s), unix.SIOCOUTQ)
			if err != nil || again == outq {
				return
			}
		}
	})
	if err == nil {
		err = ierr
	}
	if err != nil {
		return 0, err
	}
	if outq == 0 {
		return 0, nil // everything written was acknowledged, hence received
	}
	p, err := peerSocket(fd, buf, c.Connection, true)
	if err != nil {
		return 0, err
	}
	if !p.found || !p.counted {
		return outq, nil
	}
	written := info.Bytes_acked + uint64(outq)
	if p.received >= written {
		return 0, nil
	}
	return int(written - p.received), nil
}

// peer is what sock_diag says of the other end of a connection.
type peer struct {
	found bool
	// unread: bytes received and not read (the receive queue).
	unread uint32
	// received: bytes received since the connection opened (tcp_info's
	// bytes_received), when counted.
	received uint64
	counted  bool
}

// inetDiagInfo is the attribute of a sock_diag answer that carries the
// socket's tcp_info (INET_DIAG_INFO in linux/inet_diag.h), asked for by
// the request's ext bit 1<<(inetDiagInfo-1).
const inetDiagInfo = 2

// bytesReceivedEnd is where tcp_info's bytes_received ends: a shorter
// tcp_info (a kernel before 4.2) does not count it.
var bytesReceivedEnd = int(unsafe.Offsetof(unix.TCPInfo{}.Bytes_received) + unsafe.Sizeof(unix.TCPInfo{}.Bytes_received))

// peerSocket asks sock_diag for the socket whose local address is
// c.Remote and remote address c.Local, with its tcp_info when withInfo.
func peerSocket(fd int, buf []byte, c Connection, withInfo bool) (peer, error) {
	local, remote := c.Remote, c.Local // the peer's view
	req := inetDiagReqV2{protocol: unix.IPPROTO_TCP, states: ^uint32(0)}
	if withInfo {
		req.ext = 1 << (inetDiagInfo - 1)
	}
	req.id.cookie = [2]uint32{inetDiagNoCookie, inetDiagNoCookie}
	binary.BigEndian.PutUint16(req.id.sport[:], local.Port())
	binary.BigEndian.PutUint16(req.id.dport[:], remote.Port())
	la, ra := local.Addr().Unmap(), remote.Addr().Unmap()
	if la.Is4() && ra.Is4() {
		req.family = unix.AF_INET
		a, b := la.As4(), ra.As4()
		copy(req.id.src[:], a[:])
		copy(req.id.dst[:], b[:])
	} else {
		req.family = unix.AF_INET6
		req.id.src, req.id.dst = la.As16(), ra.As16()
	}
	hdr := unix.NlMsghdr{Len: uint32(unix.NLMSG_HDRLEN + unsafe.Sizeof(req)), Type: unix.SOCK_DIAG_BY_FAMILY, Flags: unix.NLM_F_REQUEST, Seq: 1}
	msg := make([]byte, hdr.Len)
	*(*unix.NlMsghdr)(unsafe.Pointer(&msg[0])) = hdr
	*(*inetDiagReqV2)(unsafe.Pointer(&msg[unix.NLMSG_HDRLEN])) = req
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return peer{}, err
	}
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return peer{}, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return peer{}, err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return peer{}, errors.New("a short netlink error")
				}
				errno := -int32(binary.NativeEndian.Uint32(m.Data[:4]))
				if errno == 0 {
					continue
				}
				if syscall.Errno(errno) == syscall.ENOENT {
					return peer{}, nil // no such socket: gone, or not local
				}
				return peer{}, syscall.Errno(errno)
			case unix.SOCK_DIAG_BY_FAMILY:
				size := int(unsafe.Sizeof(inetDiagMsg{}))
				if len(m.Data) < size {
					return peer{}, errors.New("a short sock_diag answer")
				}
				d := (*inetDiagMsg)(unsafe.Pointer(&m.Data[0]))
				p := peer{found: true, unread: d.rqueue}
				if withInfo {
					p.received, p.counted = tcpInfoBytesReceived(m.Data[size:])
				}
				return p, nil
			case unix.NLMSG_DONE:
				return peer{}, nil
			}
		}
	}
}

// tcpInfoBytesReceived finds the INET_DIAG_INFO attribute among attrs
// (struct rtattr: length and type, 16 bits each, then the payload, padded
// to 4 bytes) and reads its tcp_info's bytes_received.
func tcpInfoBytesReceived(attrs []byte) (uint64, bool) {
	for len(attrs) >= 4 {
		n := int(binary.NativeEndian.Uint16(attrs[:2]))
		typ := binary.NativeEndian.Uint16(attrs[2:4])
		if n < 4 || n > len(attrs) {
			return 0, false
		}
		if typ == inetDiagInfo {
			payload := attrs[4:n]
			if len(payload) < bytesReceivedEnd {
				return 0, false
			}
			return binary.NativeEndian.Uint64(payload[bytesReceivedEnd-8 : bytesReceivedEnd]), true
		}
		attrs = attrs[min((n+3)&^3, len(attrs)):]
	}
	return 0, false
}

// The kernel's sock_diag structures (linux/inet_diag.h).
type inetDiagSockID struct {
	sport, dport [2]byte // big-endian
	src, dst     [16]byte
	iface        uint32
	cookie       [2]uint32
}

type inetDiagReqV2 struct {
	family, protocol, ext, pad uint8
	states                     uint32
	id                         inetDiagSockID
}

type inetDiagMsg struct {
	family, state, timer, retrans uint8
	id                            inetDiagSockID
	expires, rqueue, wqueue       uint32
	uid, inode                    uint32
}

// inetDiagNoCookie matches any socket of the addresses asked.
const inetDiagNoCookie = ^uint32(0)
