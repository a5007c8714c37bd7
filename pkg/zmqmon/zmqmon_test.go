package zmqmon

import (
	"strings"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"
)

// awaitEvents waits until the monitor of s has events to read (bounded on
// failure only), then drains them.
func awaitEvents(t *testing.T, s *Socket) (disconnected bool) {
	t.Helper()
	p := zmq.NewPoller()
	p.Add(s.Monitor, zmq.POLLIN)
	polled, err := p.Poll(time.Minute)
	if err != nil || len(polled) == 0 {
		t.Fatalf("no monitor event within a minute (%v)", err)
	}
	disconnected, err = s.DrainMonitor()
	if err != nil {
		t.Fatal(err)
	}
	return disconnected
}

// A bound socket learns of its peer's connection and of its going, over a
// real loopback TCP connection.
func TestMonitorCountsPeers(t *testing.T) {
	rep, err := Open(zmq.REP, "tcp://127.0.0.1:*", Options{Name: "rep", Bind: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	if !strings.HasPrefix(rep.Endpoint, "tcp://127.0.0.1:") || strings.HasSuffix(rep.Endpoint, "*") {
		t.Fatalf("endpoint %q, want the port chosen", rep.Endpoint)
	}
	configured := false
	req, err := Open(zmq.REQ, rep.Endpoint, Options{Name: "req", Configure: func(s *zmq.Socket) error {
		configured = true
		return s.SetReqRelaxed(1)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !configured {
		t.Error("Configure was not called")
	}
	if _, err := req.Sock.Send("ping", 0); err != nil {
		t.Fatal(err)
	}
	if msg, err := rep.Sock.Recv(0); err != nil || msg != "ping" {
		t.Fatalf("received %q (%v)", msg, err)
	}
	for rep.Peers() == 0 {
		if awaitEvents(t, rep) {
			t.Fatal("a disconnection before the peer left")
		}
	}
	if err := req.Close(); err != nil {
		t.Fatal(err)
	}
	for !awaitEvents(t, rep) {
	}
	if n := rep.Peers(); n != 0 {
		t.Errorf("%d peers after the only one left", n)
	}
}

// A socket that cannot bind is closed whole, and says why.
func TestOpenFailsOnAnEndpointInUse(t *testing.T) {
	first, err := Open(zmq.REP, "tcp://127.0.0.1:*", Options{Name: "a", Bind: true})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if _, err := Open(zmq.REP, first.Endpoint, Options{Name: "b", Bind: true}); err == nil {
		t.Fatalf("a second bind of %s succeeded", first.Endpoint)
	}
}
