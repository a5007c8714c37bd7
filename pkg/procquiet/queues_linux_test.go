//go:build linux

package procquiet

import (
	"io"
	"net"
	"os"
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

// Bytes a process sent and its peer has not read: in the peer's receive
// queue (ProcessUnread of the peer's process), then, once that is full,
// in the sender's send queue (Unsent); both empty once the peer read them.
func TestQueuesOfBothEnds(t *testing.T) {
	client, server := tcpPair(t)
	if n, err := ProcessUnread(os.Getpid()); err != nil || n != 0 {
		t.Fatalf("nothing sent: %d unread, %v", n, err)
	}
	const small = 1000
	if _, err := server.Write(make([]byte, small)); err != nil {
		t.Fatal(err)
	}
	// The bytes reach the client's queue in the kernel's time: wait on
	// the queue itself, bounded by the test's deadline.
	for {
		n, err := ProcessUnread(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if n == small {
			break
		}
		if n > small {
			t.Fatalf("%d bytes unread, want %d", n, small)
		}
	}
	if _, err := io.ReadFull(client, make([]byte, small)); err != nil {
		t.Fatal(err)
	}
	if n, err := ProcessUnread(os.Getpid()); err != nil || n != 0 {
		t.Fatalf("all read: %d unread, %v", n, err)
	}

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
	if _, err := io.ReadFull(client, big); err != nil {
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
