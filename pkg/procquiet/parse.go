package procquiet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
)

// parseStatState returns the state letter of a /proc/PID/task/TID/stat
// line: "pid (comm) S ppid ...". The comm may hold any byte, spaces and
// parentheses included, but the kernel writes nothing after it that
// contains ')', so the state follows the last ')'.
func parseStatState(b []byte) (byte, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) || b[i+1] != ' ' {
		return 0, fmt.Errorf("malformed stat %q", truncate(b))
	}
	s := b[i+2]
	if i+3 < len(b) && b[i+3] != ' ' && b[i+3] != '\n' {
		return 0, fmt.Errorf("malformed stat state in %q", truncate(b))
	}
	return s, nil
}

// parseSchedstat returns the first (run time, ns) and third (switch count)
// fields of a /proc/PID/task/TID/schedstat line: "runtime delay pcount".
func parseSchedstat(line []byte) (runTime, switches uint64, err error) {
	b := line
	var f [3]uint64
	for i := range f {
		var ok bool
		f[i], b, ok = parseUint(b)
		if !ok {
			return 0, 0, fmt.Errorf("malformed schedstat %q", truncate(line))
		}
		if i < 2 {
			if len(b) == 0 || b[0] != ' ' {
				return 0, 0, fmt.Errorf("malformed schedstat %q", truncate(line))
			}
			b = b[1:]
		}
	}
	return f[0], f[2], nil
}

// parseUint parses the decimal number at the start of b and returns the
// rest of b.
func parseUint(b []byte) (n uint64, rest []byte, ok bool) {
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if n > (1<<64-1-d)/10 {
			return 0, b, false
		}
		n = n*10 + d
	}
	return n, b[i:], i > 0
}

// parseTID returns the thread ID named by a /proc/PID/task entry, or false
// for "." and "..".
func parseTID(name []byte) (int, bool) {
	n, rest, ok := parseUint(name)
	if !ok || len(rest) != 0 || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

// tcpSocket is one line of /proc/net/tcp or /proc/net/tcp6.
type tcpSocket struct {
	local, remote netip.AddrPort // IPv4-mapped IPv6 addresses unmapped
	inode         uint64         // 0 for sockets without one (TIME_WAIT)
	state         uint8          // tcpEstablished...
	rxQueue       uint64         // bytes received and not yet read
}

// tcpEstablished is the state of a connected socket in /proc/net/tcp.
const tcpEstablished = 0x01

// parseTCPLine parses one socket line of /proc/net/tcp or /proc/net/tcp6:
//
//	sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
//	0: 0100007F:1F90 0100007F:A2C4 01 00000000:00000000 00:00000000 00000000 1000 0 34567 ...
//
// Addresses are the hex of each 32-bit word of the network-order address
// loaded as an integer of the host (order; little-endian on x86 and
// arm64), ports plain hex. The header line is an error: callers skip it.
func parseTCPLine(line []byte, order binary.ByteOrder) (tcpSocket, error) {
	var f [10][]byte
	n := 0
	for n < len(f) {
		line = bytes.TrimLeft(line, " ")
		if len(line) == 0 {
			break
		}
		i := bytes.IndexByte(line, ' ')
		if i < 0 {
			i = len(line)
		}
		f[n], line = line[:i], line[i:]
		n++
	}
	if n < len(f) {
		return tcpSocket{}, fmt.Errorf("malformed socket line: %d fields", n)
	}
	var s tcpSocket
	var err error
	if s.local, err = parseHexAddrPort(f[1], order); err != nil {
		return tcpSocket{}, err
	}
	if s.remote, err = parseHexAddrPort(f[2], order); err != nil {
		return tcpSocket{}, err
	}
	var rest []byte
	var ok bool
	if s.inode, rest, ok = parseUint(f[9]); !ok || len(rest) != 0 {
		return tcpSocket{}, fmt.Errorf("malformed socket inode %q", f[9])
	}
	state, ok := parseHex(f[3])
	if !ok {
		return tcpSocket{}, fmt.Errorf("malformed socket state %q", f[3])
	}
	s.state = uint8(state)
	i := bytes.IndexByte(f[4], ':')
	if i < 0 {
		return tcpSocket{}, fmt.Errorf("malformed socket queues %q", f[4])
	}
	rx, ok := parseHex(f[4][i+1:])
	if !ok {
		return tcpSocket{}, fmt.Errorf("malformed socket receive queue %q", f[4])
	}
	s.rxQueue = rx
	return s, nil
}

// parseHexAddrPort parses "0100007F:1F90" (IPv4) or a 32-digit IPv6
// address and a port, unmapping IPv4-mapped IPv6 addresses.
func parseHexAddrPort(b []byte, order binary.ByteOrder) (netip.AddrPort, error) {
	i := bytes.IndexByte(b, ':')
	if i < 0 {
		return netip.AddrPort{}, fmt.Errorf("malformed socket address %q", b)
	}
	hexAddr, hexPort := b[:i], b[i+1:]
	port, ok := parseHex(hexPort)
	if !ok || len(hexPort) != 4 {
		return netip.AddrPort{}, fmt.Errorf("malformed socket port %q", b)
	}
	var raw [16]byte
	switch len(hexAddr) {
	case 8, 32:
	default:
		return netip.AddrPort{}, fmt.Errorf("malformed socket address %q", b)
	}
	for w := 0; w < len(hexAddr)/8; w++ {
		v, ok := parseHex(hexAddr[8*w : 8*w+8])
		if !ok {
			return netip.AddrPort{}, fmt.Errorf("malformed socket address %q", b)
		}
		order.PutUint32(raw[4*w:], uint32(v))
	}
	var a netip.Addr
	if len(hexAddr) == 8 {
		a = netip.AddrFrom4([4]byte(raw[:4]))
	} else {
		a = netip.AddrFrom16(raw).Unmap()
	}
	return netip.AddrPortFrom(a, uint16(port)), nil
}

// parseHex parses up to 8 hex digits.
func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 8 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		default:
			return 0, false
		}
		n = n<<4 | uint64(d)
	}
	return n, true
}

// socketInode parses the target of a /proc/PID/fd/N link, "socket:[123]".
func socketInode(link []byte) (uint64, bool) {
	const prefix = "socket:["
	if !bytes.HasPrefix(link, []byte(prefix)) || len(link) < len(prefix)+2 || link[len(link)-1] != ']' {
		return 0, false
	}
	n, rest, ok := parseUint(link[len(prefix) : len(link)-1])
	return n, ok && len(rest) == 0
}

func truncate(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}
