//go:build linux

package procquiet

import (
	"io"
	"net"
	"net/netip"
	"syscall"
	"testing"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server *net.TCPConn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

func raw(t *testing.T, c syscall.Conn) syscall.RawConn {
	t.Helper()
	r, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Bytes more than the peer's receive buffer wait in the sender's send
// queue (Unsent), which is empty once the peer has read them.
func TestUnsent(t *testing.T) {
	client, server := tcpPair(t)
	// More than the peer's receive buffer: the rest waits in the sender's
	// send queue.
	if err := client.SetReadBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 4<<20)
	wrote := make(chan error, 1)
	go func() { _, err := server.Write(big); wrote <- err }()
	for {
		n, err := Unsent(raw(t, server))
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
	}
	if _, err := io.ReadFull(client, make([]byte, len(big))); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	for {
		n, err := Unsent(raw(t, server))
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
}

// PeersUnread sees, through sock_diag, the bytes a peer of this process
// has received and not read, and none once it read them.
func TestPeersUnread(t *testing.T) {
	client, server := tcpPair(t)
	conn := []Connection{{Local: server.LocalAddr().(*net.TCPAddr).AddrPort(), Remote: server.RemoteAddr().(*net.TCPAddr).AddrPort()}}
	if n, err := PeersUnread(conn); err != nil || n != 0 {
		t.Fatalf("nothing sent: %d, %v", n, err)
	}
	const small = 1000
	if _, err := server.Write(make([]byte, small)); err != nil {
		t.Fatal(err)
	}
	for { // delivered in the kernel's time
		n, err := PeersUnread(conn)
		if err != nil {
			t.Fatal(err)
		}
		if n == small {
			break
		}
	}
	if _, err := io.ReadFull(client, make([]byte, small)); err != nil {
		t.Fatal(err)
	}
	if n, err := PeersUnread(conn); err != nil || n != 0 {
		t.Fatalf("all read: %d, %v", n, err)
	}
	client.Close()
	gone := []Connection{{Local: netip.MustParseAddrPort("127.0.0.1:1"), Remote: netip.MustParseAddrPort("127.0.0.1:2")}}
	if n, err := PeersUnread(gone); err != nil || n != 0 {
		t.Fatalf("no such peer: %d, %v", n, err)
	}
}
