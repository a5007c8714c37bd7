//go:build linux

package procquiet

import (
	"net"
	"syscall"
	"testing"
	"time"
)

func rawConn(t *testing.T, c any) syscall.RawConn {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// dialQueued connects to l, whose socket is lrc, and waits until the
// connection is in its accept queue: the handshake completes in the
// kernel, on loopback within Dial unless softirq processing lags (a
// condition, not a duration).
func dialQueued(t *testing.T, l net.Listener, lrc syscall.RawConn) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := AcceptQueue(lrc)
		if err == nil && n == 1 {
			return c
		}
		if err != nil || n > 1 || time.Now().After(deadline) {
			c.Close()
			t.Fatalf("accept queue with a connection not accepted: %d, %v; want 1", n, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitUnread waits until the socket src holds want bytes unread: loopback
// delivers within the write, but softirq processing may lag (a condition,
// not a duration).
func waitUnread(t *testing.T, src syscall.RawConn, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := Unread(src)
		if err != nil {
			t.Fatal(err)
		}
		if n == want {
			return
		}
		if n > want || time.Now().After(deadline) {
			t.Fatalf("unread %d bytes, want %d", n, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestUnreadAndAcceptQueue, on real loopback sockets: a connection the
// server has not accepted is in the listener's accept queue; bytes the
// server has not read are unread on its end, and no longer once read.
func TestUnreadAndAcceptQueue(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	lrc := rawConn(t, l)
	if n, err := AcceptQueue(lrc); err != nil || n != 0 {
		t.Fatalf("accept queue of an idle listener: %d, %v", n, err)
	}
	c := dialQueued(t, l, lrc)
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := AcceptQueue(lrc); err != nil || n != 0 {
		t.Fatalf("accept queue once accepted: %d, %v; want 0", n, err)
	}
	src := rawConn(t, s)
	if n, err := Unread(src); err != nil || n != 0 {
		t.Fatalf("unread before any byte: %d, %v", n, err)
	}
	msg := []byte("GET / HTTP/1.1\r\n")
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	waitUnread(t, src, len(msg))
	buf := make([]byte, 64)
	if _, err := s.Read(buf); err != nil {
		t.Fatal(err)
	}
	if n, err := Unread(src); err != nil || n != 0 {
		t.Fatalf("unread once read: %d, %v; want 0", n, err)
	}
}
