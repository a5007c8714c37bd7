package enginetest

import (
	"syscall"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"
)

// RawPeer serves a bare ZeroMQ REP socket as a decision process that
// answers the i-th message with replies[i], bytes no encoder would have to
// accept, and every later one with then (or no more once replies run out if
// then is empty, holding its socket open). It returns the endpoint; the
// socket is closed when the test ends.
func RawPeer(t testing.TB, replies []string, then string) string {
	t.Helper()
	sock, err := zmq.NewSocket(zmq.REP)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{sock.SetLinger(0), sock.SetRcvtimeo(50 * time.Millisecond), sock.Bind("tcp://127.0.0.1:*")} {
		if err != nil {
			sock.Close()
			t.Fatal(err)
		}
	}
	endpoint, err := sock.GetLastEndpoint()
	if err != nil {
		sock.Close()
		t.Fatal(err)
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		defer sock.Close()
		for i := 0; i < len(replies) || then != ""; i++ {
			// The receive times out now and then, so that the test's end
			// is noticed.
			for {
				select {
				case <-done:
					return
				default:
				}
				_, err := sock.RecvBytes(0)
				if err == nil {
					break
				}
				if zmq.AsErrno(err) != zmq.Errno(syscall.EAGAIN) {
					return
				}
			}
			reply := then
			if i < len(replies) {
				reply = replies[i]
			}
			if _, err := sock.Send(reply, 0); err != nil {
				return
			}
		}
		<-done
	}()
	t.Cleanup(func() {
		close(done)
		<-exited
	})
	return endpoint
}
