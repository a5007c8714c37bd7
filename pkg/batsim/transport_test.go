package batsim

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/chantest"
)

// testTimeout bounds every wait of these tests, so that a bug fails a test
// instead of hanging it. No test sleeps.
const testTimeout = 10 * time.Second

func listen(t *testing.T, endpoint string) *Conn {
	t.Helper()
	return openSocket(t, "Conn", Listen, endpoint)
}

func dial(t *testing.T, endpoint string) *Client {
	t.Helper()
	return openSocket(t, "Client", Dial, endpoint)
}

// openSocket opens a Conn or a Client with a short poll interval and closes
// it when the test ends.
func openSocket[S interface{ Close() error }](t *testing.T, name string, open func(string, ...Option) (S, error), endpoint string) S {
	t.Helper()
	s, err := open(endpoint, WithPollInterval(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("%s.Close: %v", name, err)
		}
	})
	return s
}

// eachTransport runs test as a subtest for a TCP and for an IPC endpoint to
// listen on.
func eachTransport(t *testing.T, test func(t *testing.T, endpoint string)) {
	for _, tc := range []struct{ name, endpoint string }{
		{"tcp", "tcp://127.0.0.1:*"},
		{"ipc", "ipc://" + filepath.Join(t.TempDir(), "batsim.sock")},
	} {
		t.Run(tc.name, func(t *testing.T) { test(t, tc.endpoint) })
	}
}

// answer plays the decision process in a goroutine: it receives one message
// on conn and hands it to reply. The channel receives the error of either.
func answer(ctx context.Context, conn *Conn, reply func(m Message) error) <-chan error {
	errc := make(chan error, 1)
	go func() {
		m, err := conn.Recv(ctx)
		if err == nil {
			err = reply(m)
		}
		errc <- err
	}()
	return errc
}

// serve plays a decision process on conn: it answers each message with a
// CALL_ME_LATER one second later, until SIMULATION_ENDS, and reports what it
// received and how it stopped.
func serve(ctx context.Context, conn *Conn) (<-chan []Message, <-chan error) {
	received := make(chan []Message, 1)
	done := make(chan error, 1)
	go func() {
		var got []Message
		defer func() { received <- got }()
		for {
			m, err := conn.Recv(ctx)
			if err != nil {
				done <- err
				return
			}
			got = append(got, m)
			reply := Message{Now: m.Now}
			ends := len(m.Events) > 0 && m.Events[0].Type() == TypeSimulationEnds
			if !ends {
				reply.Events = []Event{{Timestamp: m.Now, Data: CallMeLater{At: m.Now + 1}}}
			}
			if err := conn.Send(reply); err != nil {
				done <- err
				return
			}
			if ends {
				done <- nil
				return
			}
		}
	}()
	return received, done
}

func TestTransportRoundTrips(t *testing.T) {
	eachTransport(t, func(t *testing.T, endpoint string) {
		ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
		defer cancel()
		conn := listen(t, endpoint)
		received, done := serve(ctx, conn)
		client := dial(t, conn.Endpoint())

		var sent []Message
		for i := range 5 {
			now := float64(i) * 1.5
			m := Message{Now: now, Events: []Event{{Timestamp: now, Data: RequestedCall{}}}}
			if i == 4 {
				m.Events = []Event{{Timestamp: now, Data: SimulationEnds{}}}
			}
			sent = append(sent, m)
			reply, err := client.Request(ctx, m)
			if err != nil {
				t.Fatalf("Request %d: %v", i, err)
			}
			want := Message{Now: now, Events: []Event{{Timestamp: now, Data: CallMeLater{At: now + 1}}}}
			if i == 4 {
				want = Message{Now: now}
			}
			if !reflect.DeepEqual(reply, want) {
				t.Errorf("reply %d = %+v, want %+v", i, reply, want)
			}
		}
		if err := <-done; err != nil {
			t.Fatalf("server: %v", err)
		}
		if got := <-received; !reflect.DeepEqual(got, sent) {
			t.Errorf("server received %+v, want %+v", got, sent)
		}
	})
}

func TestRecvCancelledWhileBlocked(t *testing.T) {
	conn := listen(t, "tcp://127.0.0.1:*")
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		_, err := conn.Recv(ctx)
		errc <- err
	}()
	<-started
	cancel()
	if err := chantest.Recv(t, errc, testTimeout, "Recv did not return after its context was cancelled"); !errors.Is(err, context.Canceled) {
		t.Errorf("Recv after cancel: got %v, want context.Canceled", err)
	}
	// The Conn is still usable.
	client := dial(t, conn.Endpoint())
	reqCtx, reqCancel := context.WithTimeout(t.Context(), testTimeout)
	defer reqCancel()
	_, done := serve(reqCtx, conn)
	if _, err := client.Request(reqCtx, Message{Now: 1, Events: []Event{{Timestamp: 1, Data: SimulationEnds{}}}}); err != nil {
		t.Fatalf("Request after a cancelled Recv: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRecvWaitsInTheNetworkPoller: a Recv waiting for Batsim parks its
// goroutine in Go's network poller ("IO wait"), not in a call into C that
// holds a thread in a system call ("syscall"), which Go's sysmon then polls
// every 20 µs (see pollable).
func TestRecvWaitsInTheNetworkPoller(t *testing.T) {
	conn := listen(t, "tcp://127.0.0.1:*")
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Recv(ctx)
		errc <- err
	}()
	defer func() {
		cancel()
		chantest.Recv(t, errc, testTimeout, "Recv did not return after its context was cancelled")
	}()
	buf := make([]byte, 1<<20)
	states := map[string]int{}
	for end := time.Now().Add(testTimeout); time.Now().Before(end); runtime.Gosched() {
		stacks := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(stacks, "\n\n") {
			if !strings.Contains(g, "batsim.(*socket).recvLocked") {
				continue
			}
			// "goroutine 7 [IO wait, 2 minutes]:"
			_, header, _ := strings.Cut(g, "[")
			state, _, _ := strings.Cut(header, "]")
			state, _, _ = strings.Cut(state, ",")
			if state == "IO wait" {
				return
			}
			states[state]++
		}
	}
	t.Fatalf("Recv's goroutine never seen waiting in the network poller; seen in %v", states)
}

func TestRecvDeadline(t *testing.T) {
	conn := listen(t, "tcp://127.0.0.1:*")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	_, err := conn.Recv(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Recv with a deadline and no peer: got %v, want context.DeadlineExceeded", err)
	}
	if got, want := err.Error(), "batsim: receive from Batsim: no message: context deadline exceeded"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}

func TestRecvPeerDisconnected(t *testing.T) {
	eachTransport(t, func(t *testing.T, endpoint string) {
		ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
		defer cancel()
		conn := listen(t, endpoint)
		client, err := Dial(conn.Endpoint())
		if err != nil {
			t.Fatal(err)
		}
		errc := answer(ctx, conn, func(m Message) error {
			if err := conn.Send(Message{Now: m.Now}); err != nil {
				return err
			}
			_, err := conn.Recv(ctx) // Batsim dies while we wait
			return err
		})
		if _, err := client.Request(ctx, Message{Now: 0, Events: []Event{{Timestamp: 0, Data: RequestedCall{}}}}); err != nil {
			t.Fatal(err)
		}
		if err := client.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; !errors.Is(err, ErrPeerDisconnected) {
			t.Fatalf("Recv after the peer closed: got %v, want ErrPeerDisconnected", err)
		}
	})
}

func TestCloseInterruptsRecv(t *testing.T) {
	conn, err := Listen("tcp://127.0.0.1:*")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Recv(context.Background())
		errc <- err
	}()
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := chantest.Recv(t, errc, testTimeout, "Recv did not return after Close"); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv on a closed Conn: got %v, want ErrClosed", err)
	}
	if err := conn.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := conn.Send(Message{Now: 1}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send on a closed Conn: got %v, want ErrClosed", err)
	}
}

// TestRequestAbandoned checks that a Client survives a request whose reply
// comes too late: the late reply is dropped and the next request gets its
// own reply.
func TestRequestAbandoned(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	conn := listen(t, "tcp://127.0.0.1:*")
	client := dial(t, conn.Endpoint())

	first := make(chan Message, 1)
	replyFirst := make(chan struct{})
	serverErr := answer(ctx, conn, func(m Message) error {
		first <- m
		<-replyFirst // the client has given up by now
		if err := conn.Send(Message{Now: m.Now, Events: []Event{{Timestamp: m.Now, Data: CallMeLater{At: 100}}}}); err != nil {
			return err
		}
		m, err := conn.Recv(ctx)
		if err != nil {
			return err
		}
		return conn.Send(Message{Now: m.Now, Events: []Event{{Timestamp: m.Now, Data: CallMeLater{At: 200}}}})
	})

	reqCtx, reqCancel := context.WithCancel(ctx)
	abandoned := make(chan error, 1)
	go func() {
		_, err := client.Request(reqCtx, Message{Now: 1, Events: []Event{{Timestamp: 1, Data: RequestedCall{}}}})
		abandoned <- err
	}()
	<-first
	reqCancel()
	if err := <-abandoned; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned Request: got %v, want context.Canceled", err)
	}
	close(replyFirst)
	reply, err := client.Request(ctx, Message{Now: 2, Events: []Event{{Timestamp: 2, Data: RequestedCall{}}}})
	if err != nil {
		t.Fatalf("second Request: %v", err)
	}
	want := Message{Now: 2, Events: []Event{{Timestamp: 2, Data: CallMeLater{At: 200}}}}
	if !reflect.DeepEqual(reply, want) {
		t.Errorf("second reply = %+v, want %+v", reply, want)
	}
	if err := <-serverErr; err != nil {
		t.Fatal(err)
	}
}

func TestTransportValidates(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	conn := listen(t, "tcp://127.0.0.1:*")
	client := dial(t, conn.Endpoint())
	// A message Batsim would not send is refused before it leaves.
	_, err := client.Request(ctx, Message{Now: 1, Events: []Event{{Timestamp: 1, Data: RejectJob{JobID: "w!1"}}}})
	var me *MessageError
	if !errors.As(err, &me) {
		t.Fatalf("Request of a decision: got %v, want a *MessageError", err)
	}
	errc := answer(ctx, conn, func(m Message) error {
		// An invalid reply is refused and the reply is still due.
		if err := conn.Send(Message{Now: m.Now, Events: []Event{{Timestamp: m.Now + 1, Data: RejectJob{JobID: "w!1"}}}}); !errors.As(err, &me) {
			return errors.New("invalid reply accepted")
		}
		return conn.Send(Message{Now: m.Now})
	})
	if _, err := client.Request(ctx, Message{Now: 3}); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestListenErrors(t *testing.T) {
	conn := listen(t, "tcp://127.0.0.1:*")
	if _, err := Listen(conn.Endpoint()); err == nil {
		t.Error("Listen on a busy endpoint succeeded")
	}
	if _, err := Listen("nonsense"); err == nil {
		t.Error("Listen on an invalid endpoint succeeded")
	}
	if _, err := Dial("nonsense://x"); err == nil {
		t.Error("Dial of an invalid endpoint succeeded")
	}
}
