package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
	"github.com/batkube/batkube/pkg/simtime/simclock"
	"github.com/batkube/batkube/pkg/simtime/timeservice"
)

// A wait on the simulated clock is not a request in progress while its
// timer is pending (the controllers' barrier would never hold), and is one
// again from the instant its timer fires until its answer is written.
func TestClockWaitsParkInTheRequestCounts(t *testing.T) {
	clk := simclock.New(simclock.DefaultEpoch)
	var api func(*http.Request) (func(), func())
	ts := servertest.Start(t, server.Options{Clock: clk, Extensions: []apiserver.NonResourceHandler{
		timeservice.NewHandler(clk, func(r *http.Request) (func(), func()) { return api(r) })}})
	api = ts.API.ParkRequest
	inFlight := func() int64 { n, _ := ts.API.RequestCounts(); return n }

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+timeservice.Path+"?until=5&kind=work", nil)
	resp, err := http.DefaultClient.Do(req) // answered with headers once parked
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if n := inFlight(); n != 0 {
		t.Fatalf("a parked wait counts %d requests in progress, want 0", n)
	}
	_, before := ts.API.RequestCounts()
	clk.Set(5)
	// Fired, the wait counts again until its handler returns, which may
	// already have happened: in progress, or finished; never neither.
	if n, finished := ts.API.RequestCounts(); n != 1 && finished == before {
		t.Fatalf("a fired wait counts %d requests in progress and is not finished, want 1 in progress", n)
	}
	var buf [512]byte
	for {
		if _, err := resp.Body.Read(buf[:]); err != nil {
			break
		}
	}
	for { // the handler returns after writing
		if n, finished := ts.API.RequestCounts(); n == 0 && finished > before {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}

	// A client that goes away while parked leaves the counts balanced.
	ctx2, cancel2 := context.WithCancel(context.Background())
	req2, _ := http.NewRequestWithContext(ctx2, http.MethodGet, ts.URL+timeservice.Path+"?until=9&kind=passive", nil)
	resp2, err := http.DefaultClient.Do(req2)
	if err != nil {
		t.Fatal(err)
	}
	_, before = ts.API.RequestCounts()
	cancel2()
	resp2.Body.Close()
	for {
		if n, finished := ts.API.RequestCounts(); finished > before {
			if n != 0 {
				t.Fatalf("after a parked client went away: %d requests in progress, want 0", n)
			}
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// Unread asks the kernel about the server's own sockets once it serves:
// before, it cannot; while it serves, a connection open and idle leaves
// nothing unread, and closed connections are forgotten.
func TestUnreadReadsTheServersSockets(t *testing.T) {
	srv, err := server.New(server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Unread(); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("before Serve: %v, want ErrUnsupported", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	defer func() { cancel(); <-served }()
	client := &http.Client{Transport: &http.Transport{}}
	for i := 0; i < 3; i++ { // keep-alive connections, idle between requests
		resp, err := client.Get("http://" + l.Addr().String() + "/api/v1/namespaces")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if n, err := srv.Unread(); err != nil || n != 0 {
		t.Fatalf("idle connections: %d unread, %v; want 0", n, err)
	}
	client.CloseIdleConnections()
	if n, err := srv.Unread(); err != nil || n != 0 {
		t.Fatalf("after the client closed its connections: %d unread, %v; want 0", n, err)
	}

	// A watch whose request has a body the server never reads: net/http
	// discards an unread body of up to 256 KiB before it answers, not a
	// larger one, which stays in the connection's socket while the watch
	// runs (as much of it as the socket holds: the client writes on in
	// the background). Unread sees it through its one question about every
	// socket first: a connection left out of that set would be reported
	// empty.
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const body = 1 << 20
	req := fmt.Sprintf("GET /api/v1/namespaces?watch=true HTTP/1.1\r\nHost: batkube\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", body)
	go conn.Write(append([]byte(req), make([]byte, body)...)) // ends when conn is closed
	status, err := bufio.NewReader(conn).ReadString('\n')     // the watch has begun: its request was read
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("watch: %q, %v", status, err)
	}
	if n, err := srv.Unread(); err != nil || n == 0 {
		t.Fatalf("a watch whose body was not read: %d unread, %v; want some of its %d bytes", n, err, body)
	}
}
