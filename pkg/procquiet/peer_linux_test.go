//go:build linux

package procquiet

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// ends returns the two ends of c as this process sees them.
func ends(c net.Conn) (local, remote netip.AddrPort) {
	return c.LocalAddr().(*net.TCPAddr).AddrPort(), c.RemoteAddr().(*net.TCPAddr).AddrPort()
}

// accept accepts one connection on l, failing the test after 30 s.
func accept(t *testing.T, l net.Listener) net.Conn {
	t.Helper()
	l.(*net.TCPListener).SetDeadline(time.Now().Add(30 * time.Second))
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// connect dials l and returns both ends of the connection, closed at the
// end of the test.
func connect(t *testing.T, l net.Listener) (client, server net.Conn) {
	t.Helper()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client, accept(t, l)
}

// listen listens on addr, skipping the test if the address family is not
// available.
func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// startBashConnected starts bash with its fd 3 connected (/dev/tcp) to a
// listener of this process, then running script, and returns the child
// and this end of the connection. It skips the test without bash.
func startBashConnected(t *testing.T, script string) (*child, net.Conn) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	l := listen(t, "127.0.0.1:0")
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	ch := start(t, "bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/"+port+"; "+script)
	return ch, accept(t, l)
}

// checkPeer checks that PeerPID finds pid at the other end of c.
func checkPeer(t *testing.T, c net.Conn, pid int) {
	t.Helper()
	local, remote := ends(c)
	got, err := PeerPID(local, remote)
	if err != nil {
		t.Fatal(err)
	}
	if got != pid {
		t.Fatalf("PeerPID(%v, %v) = %d; want %d", local, remote, got, pid)
	}
}

// TestPeerPIDDial: a child dials our listener.
func TestPeerPIDDial(t *testing.T) {
	for _, tc := range []struct{ name, listen string }{
		{"IPv4", "127.0.0.1:0"},
		{"IPv6", "[::1]:0"},
		// Our end is an IPv6 socket with IPv4-mapped addresses, the
		// child's an IPv4 one.
		{"dual-stack", ":0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := listen(t, tc.listen)
			addr := l.Addr().(*net.TCPAddr).AddrPort()
			if tc.listen == ":0" {
				addr = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), addr.Port())
			}
			ch := startChild(t, "dial", addr.String())
			c := accept(t, l)
			if l := ch.line(t); l != "connected" {
				t.Fatalf("child said %q", l)
			}
			if tc.listen == ":0" {
				if local, _ := ends(c); !local.Addr().Is4In6() {
					t.Logf("local address %v not IPv4-mapped", local)
				}
			}
			checkPeer(t, c, ch.pid())
			// The listen address, unspecified for the last case, in
			// place of the connection's local address.
			_, remote := ends(c)
			if got, err := PeerPID(l.Addr().(*net.TCPAddr).AddrPort(), remote); err != nil || got != ch.pid() {
				t.Errorf("PeerPID(%v, %v) = %d, %v; want %d", l.Addr(), remote, got, err, ch.pid())
			}
		})
	}
}

// TestPeerPIDMappedPeer: we dial a child listening on a dual-stack
// socket, so its end is listed in /proc/net/tcp6 with IPv4-mapped
// addresses.
func TestPeerPIDMappedPeer(t *testing.T) {
	ch := startChild(t, "listen", ":0")
	port := ch.line(t)
	c, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if l := ch.line(t); l != "accepted" {
		t.Fatalf("child said %q", l)
	}
	checkPeer(t, c, ch.pid())
}

// TestPeerPIDBash: the peer is bash's /dev/tcp, then the process bash
// execs into, which keeps the fd and the PID.
func TestPeerPIDBash(t *testing.T) {
	ch, c := startBashConnected(t, "exec sleep 60")
	checkPeer(t, c, ch.pid())
}

// TestPeerPIDAmbiguous: bash forks sleep, which inherits the socket.
func TestPeerPIDAmbiguous(t *testing.T) {
	_, c := startBashConnected(t, "sleep 60; exit 0")
	local, remote := ends(c)
	var err error
	eventually(t, 10*time.Second, "ambiguous", func() bool {
		_, err = PeerPID(local, remote)
		return errors.Is(err, ErrAmbiguous)
	})
	t.Log(err)
}

func TestPeerPIDNotFound(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	addr := l.Addr().(*net.TCPAddr).AddrPort()
	// No connection to our listener from this (unused) port.
	peer := netip.MustParseAddrPort("127.0.0.1:1")
	_, err := PeerPID(addr, peer)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("error %v; want ErrNotFound", err)
	}
	t.Log(err)
	if _, err := PeerPID(netip.AddrPort{}, peer); err == nil {
		t.Error("no error for an invalid address")
	}
}

func BenchmarkPeerPID(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ch := startChild(b, "dial", l.Addr().String())
	c, err := l.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ch.line(b)
	local, remote := ends(c)
	b.ReportAllocs()
	for b.Loop() {
		pid, err := PeerPID(local, remote)
		if err != nil || pid != ch.pid() {
			b.Fatalf("PeerPID = %d, %v; want %d", pid, err, ch.pid())
		}
	}
}

// TestListenerPIDFindsTheListeningProcess: our own listener is ours, and
// the connection accepted on it does not make it ambiguous.
func TestListenerPIDFindsTheListeningProcess(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	connect(t, l)
	addr := l.Addr().(*net.TCPAddr).AddrPort()
	got, err := ListenerPID(addr)
	if err != nil {
		t.Fatal(err)
	}
	if want := os.Getpid(); got != want {
		t.Fatalf("ListenerPID(%v) = %d, want %d (this process)", addr, got, want)
	}
}

// TestReceiveQueued: bytes a client wrote that the server has not read
// are counted on the server's address, and no longer once read.
func TestReceiveQueued(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	client, server := connect(t, l)
	addr := netip.MustParseAddrPort(l.Addr().String())
	if n, err := ReceiveQueued(addr); err != nil || n != 0 {
		t.Fatalf("before any write: %d, %v; want 0", n, err)
	}
	if _, err := client.Write([]byte("GET / HTTP/1.1\r\n")); err != nil {
		t.Fatal(err)
	}
	for { // loopback delivers at once; the loop only spares the test a guess
		n, err := ReceiveQueued(addr)
		if err != nil {
			t.Fatal(err)
		}
		if n == 16 {
			break
		}
		if n != 0 {
			t.Fatalf("%d bytes queued, want 16", n)
		}
	}
	buf := make([]byte, 16)
	if _, err := io.ReadFull(server, buf); err != nil {
		t.Fatal(err)
	}
	if n, err := ReceiveQueued(addr); err != nil || n != 0 {
		t.Fatalf("after the read: %d, %v; want 0", n, err)
	}
}
