//go:build linux

package procquiet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Connection is a TCP connection as one of its ends sees it.
type Connection struct {
	Local, Remote netip.AddrPort
}

// PeersUnread returns the bytes waiting unread in the receive queues of
// the other ends of conns (connections of this process whose peers are on
// this machine): what this process sent that its peers have not read yet.
// It asks the kernel about each peer socket by its addresses (sock_diag,
// an exact lookup), not by reading the machine's socket tables; a peer
// socket that is gone, or not on this machine, counts as none.
func PeersUnread(conns []Connection) (int, error) {
	if len(conns) == 0 {
		return 0, nil
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, fmt.Errorf("procquiet: sock_diag: %w", err)
	}
	defer unix.Close(fd)
	total := 0
	buf := make([]byte, 8192)
	for _, c := range conns {
		n, err := peerQueue(fd, buf, c)
		if err != nil {
			return 0, fmt.Errorf("procquiet: the peer of %v-%v: %w", c.Local, c.Remote, err)
		}
		total += n
	}
	return total, nil
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

// peerQueue returns the receive queue of the socket whose local address
// is c.Remote and remote address c.Local.
func peerQueue(fd int, buf []byte, c Connection) (int, error) {
	local, remote := c.Remote, c.Local // the peer's view
	req := inetDiagReqV2{protocol: unix.IPPROTO_TCP, states: ^uint32(0)}
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
		return 0, err
	}
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return 0, err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return 0, errors.New("a short netlink error")
				}
				errno := -int32(binary.NativeEndian.Uint32(m.Data[:4]))
				if errno == 0 {
					continue
				}
				if syscall.Errno(errno) == syscall.ENOENT {
					return 0, nil // no such socket: gone, or not local
				}
				return 0, syscall.Errno(errno)
			case unix.SOCK_DIAG_BY_FAMILY:
				if len(m.Data) < int(unsafe.Sizeof(inetDiagMsg{})) {
					return 0, errors.New("a short sock_diag answer")
				}
				d := (*inetDiagMsg)(unsafe.Pointer(&m.Data[0]))
				return int(d.rqueue), nil
			case unix.NLMSG_DONE:
				return 0, nil
			}
		}
	}
}
