//go:build linux

package procquiet

import (
	"net"
	"testing"
)

// TestReadableAgreesWithTheQueues, on real loopback sockets: the set
// answers as the ioctls do, each time it is asked. A connection waiting in
// the listener's accept queue makes it readable, until accepted; bytes a
// client sent make the server's end readable until read; a socket closed
// leaves the set.
func TestReadableAgreesWithTheQueues(t *testing.T) {
	r, err := NewReadable()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	any := func(want bool, when string) {
		t.Helper()
		got, err := r.Any()
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%s: readable %v, want %v", when, got, want)
		}
	}
	any(false, "an empty set")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	lrc := rawConn(t, l)
	if err := r.Add(lrc); err != nil {
		t.Fatal(err)
	}
	any(false, "an idle listener")
	c := dialQueued(t, l, lrc)
	defer c.Close()
	any(true, "a connection in the accept queue")
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	any(false, "the connection accepted")
	src := rawConn(t, s)
	if err := r.Add(src); err != nil {
		t.Fatal(err)
	}
	any(false, "a connection with nothing sent")

	msg := []byte("GET / HTTP/1.1\r\n")
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	waitUnread(t, src, len(msg)) // loopback's softirq may lag: the ioctl says when the bytes are there
	any(true, "bytes sent, not read")
	buf := make([]byte, 64)
	if n, err := s.Read(buf); err != nil || n != len(msg) {
		t.Fatalf("read %d bytes, %v", n, err)
	}
	any(false, "every byte read")

	// A socket closed with bytes unread leaves the set.
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	waitUnread(t, src, len(msg))
	any(true, "bytes sent again")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	any(false, "the connection closed by the server")

	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Any(); err == nil {
		t.Error("a closed set answered")
	}
}
