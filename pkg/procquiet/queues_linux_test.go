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
	overflowReceiveBuffer(t, client, server, func() (int, error) { return Unsent(raw(t, server)) })
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
	waitFor(t, func() (int, error) { return PeersUnread(conn) }, func(n int) bool { return n == small }) // delivered in the kernel's time
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

// Undelivered counts what the peer's socket has not received: the bytes
// that wait in the sender's send queue behind a full receive buffer, and
// none once they are received, acknowledged or not. The peer here only
// reads, as a watch's client does, so after its first segments Linux
// delays its acknowledgements: SIOCOUTQ (Unsent) then still counts bytes
// the peer holds, which Undelivered must not.
func TestUndelivered(t *testing.T) {
	client, server := tcpPair(t)
	conn := []OwnConnection{{Connection: Connection{Local: server.LocalAddr().(*net.TCPAddr).AddrPort(), Remote: server.RemoteAddr().(*net.TCPAddr).AddrPort()},
		Raw: raw(t, server)}}
	peer := []Connection{conn[0].Connection}
	if n, err := Undelivered(conn); err != nil || n != 0 {
		t.Fatalf("nothing sent: %d, %v", n, err)
	}
	// Small writes, each received before the next: count those received
	// while still unacknowledged.
	const small, writes = 100, 64
	unacked := 0
	for i := 1; i <= writes; i++ {
		if _, err := server.Write(make([]byte, small)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() (int, error) { return PeersUnread(peer) }, func(n int) bool { return n == i*small }) // received in the kernel's time
		outq, err := Unsent(conn[0].Raw)
		if err != nil {
			t.Fatal(err)
		}
		if outq > 0 {
			unacked++
		}
		if n, err := Undelivered(conn); err != nil || n != 0 {
			t.Fatalf("write %d: all %d bytes received by the peer (%d not acknowledged): Undelivered = %d, %v; want 0", i, i*small, outq, n, err)
		}
	}
	if unacked == 0 {
		t.Fatalf("the peer acknowledged each of %d writes before it was looked at: the delayed acknowledgements this test is about never happened", writes)
	}
	t.Logf("%d of %d writes were received and not yet acknowledged when looked at", unacked, writes)
	if _, err := io.ReadFull(client, make([]byte, small*writes)); err != nil {
		t.Fatal(err)
	}

	// More than the peer's receive buffer: the rest waits here.
	overflowReceiveBuffer(t, client, server, func() (int, error) { return Undelivered(conn) })
}

// overflowReceiveBuffer writes more than client's receive buffer from
// server: queued, what the function under test counts of it, must see
// bytes waiting, then none once client has read them all (the last are
// received in the kernel's time).
func overflowReceiveBuffer(t *testing.T, client, server *net.TCPConn, queued func() (int, error)) {
	t.Helper()
	if err := client.SetReadBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 4<<20)
	wrote := make(chan error, 1)
	go func() { _, err := server.Write(big); wrote <- err }()
	waitFor(t, queued, func(n int) bool { return n > 0 })
	if _, err := io.ReadFull(client, make([]byte, len(big))); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	waitFor(t, queued, func(n int) bool { return n == 0 })
}

// waitFor polls count until done says its count is the one awaited.
func waitFor(t *testing.T, count func() (int, error), done func(int) bool) {
	t.Helper()
	for {
		n, err := count()
		if err != nil {
			t.Fatal(err)
		}
		if done(n) {
			return
		}
	}
}
