package procquiet

import (
	"net/netip"
	"syscall"
)

// Connection is a TCP connection as one of its ends sees it.
type Connection struct {
	Local, Remote netip.AddrPort
}

// OwnConnection is a TCP connection of this process: its addresses as
// this end sees them, and its socket.
type OwnConnection struct {
	Connection
	Raw syscall.RawConn
}
