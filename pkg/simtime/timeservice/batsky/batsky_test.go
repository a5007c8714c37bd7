package batsky

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/batkube/batkube/pkg/chantest"
	"github.com/batkube/batkube/pkg/simtime/simclock"
)

// failAfter bounds what should happen; a test-failure timeout only.
const failAfter = 10 * time.Second

// scheduler plays batsky-go's requester (time/requester.go): a REP socket,
// bound, answering "ready" with the JSON array of the timer durations
// requested since the last exchange, then the time with "done". Unlike
// batsky-go it runs one exchange when the test asks, not in a loop.
type scheduler struct {
	t        *testing.T
	zctx     *zmq.Context
	sock     *zmq.Socket
	endpoint string
}

func newScheduler(t *testing.T, endpoint string) *scheduler {
	t.Helper()
	zctx, err := zmq.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	sock, err := zctx.NewSocket(zmq.REP)
	if err != nil {
		t.Fatal(err)
	}
	s := &scheduler{t: t, zctx: zctx, sock: sock}
	t.Cleanup(s.close)
	if err := sock.SetLinger(0); err != nil {
		t.Fatal(err)
	}
	if err := sock.SetRcvtimeo(failAfter); err != nil {
		t.Fatal(err)
	}
	if err := sock.Bind(endpoint); err != nil {
		t.Fatalf("bind %s: %v", endpoint, err)
	}
	if s.endpoint, err = sock.GetLastEndpoint(); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *scheduler) close() {
	if s.sock != nil {
		_ = s.sock.Close()
		_ = s.zctx.Term()
		s.sock = nil
	}
}

// recvReady waits for the broker's "ready".
func (s *scheduler) recvReady() {
	s.t.Helper()
	b, err := s.sock.RecvBytes(0)
	if err != nil {
		s.t.Fatalf("waiting for \"ready\": %v", err)
	}
	if string(b) != "ready" {
		s.t.Fatalf("got %q, want \"ready\"", b)
	}
}

// exchange runs one exchange requesting timers of durations (ns) and
// returns the time answered, as batsky-go reads it.
func (s *scheduler) exchange(durations ...int64) time.Time {
	s.t.Helper()
	s.recvReady()
	if durations == nil {
		durations = make([]int64, 0) // batsky-go sends "[]", never "null"
	}
	msg, err := json.Marshal(durations)
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.sock.SendBytes(msg, 0); err != nil {
		s.t.Fatal(err)
	}
	b, err := s.sock.RecvBytes(0)
	if err != nil {
		s.t.Fatalf("waiting for the time: %v", err)
	}
	if len(b) != 8 {
		s.t.Fatalf("got %d bytes of time, want 8 (batsky-go would panic)", len(b))
	}
	now := int64(binary.LittleEndian.Uint64(b))
	if _, err := s.sock.SendBytes([]byte("done"), 0); err != nil {
		s.t.Fatal(err)
	}
	return time.Unix(0, now)
}

// run starts srv and returns a function that stops it and returns Run's
// error.
func run(t *testing.T, srv *Server) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- srv.Run(ctx) }()
	var err error
	stopped := false
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			err = chantest.Recv(t, errc, failAfter, "Run did not return after its context was cancelled")
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func newServer(t *testing.T, opts Options) *Server {
	t.Helper()
	opts.PollInterval = 5 * time.Millisecond
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestExchangeAnswersTheSimulatedTimeAsUnixNanoseconds(t *testing.T) {
	clk := simclock.New(simclock.DefaultEpoch)
	sched := newScheduler(t, "tcp://127.0.0.1:*")
	srv := newServer(t, Options{Endpoint: sched.endpoint, Clock: clk})
	stop := run(t, srv)

	if got := sched.exchange(); !got.Equal(simclock.DefaultEpoch) {
		t.Errorf("at time 0: batsky-go reads %v, want the epoch %v", got, simclock.DefaultEpoch)
	}
	clk.Set(12.5)
	want := simclock.DefaultEpoch.Add(12500 * time.Millisecond)
	if got := sched.exchange(); !got.Equal(want) {
		t.Errorf("at 12.5 s: batsky-go reads %v, want %v", got, want)
	}
	sched.recvReady() // the server starts the next exchange at once
	if got := srv.Exchanges(); got != 2 {
		t.Errorf("Exchanges() = %d, want 2", got)
	}
	if err := stop(); err != nil {
		t.Errorf("Run returned %v, want nil", err)
	}
}

func TestPrototypeTimeIsSecondsSinceStartOnTheUnixEpoch(t *testing.T) {
	clk := simclock.New(time.Unix(0, 0).UTC())
	sched := newScheduler(t, "tcp://127.0.0.1:*")
	run(t, newServer(t, Options{Endpoint: sched.endpoint, Clock: clk}))
	clk.Set(3.25)
	if got := sched.exchange().UnixNano(); got != 3_250_000_000 {
		t.Errorf("got %d ns, want 3250000000 (3.25 s since the start)", got)
	}
}

func TestTimersRequestedBecomeClockTimersThatFireExactly(t *testing.T) {
	clk := simclock.New(simclock.DefaultEpoch)
	clk.Set(10)
	sched := newScheduler(t, "tcp://127.0.0.1:*")
	srv := newServer(t, Options{Endpoint: sched.endpoint, Clock: clk})
	run(t, srv)

	// NewTimer(3s) and Sleep(1s) in the scheduler: when = answer + d.
	now := sched.exchange(3e9, 1e9)
	when1, when3 := now.Add(time.Second), now.Add(3*time.Second)
	if at, ok := clk.NextTimer(); !ok || !at.Equal(when1) {
		t.Fatalf("NextTimer() = %v, %v; want %v (the scheduler's instant)", at, ok, when1)
	}
	if s, _ := clk.NextTimerSeconds(); s != 11 {
		t.Errorf("NextTimerSeconds() = %v, want 11 (a CALL_ME_LATER at 11)", s)
	}
	if clk.Pending() != 2 || srv.Timers() != 2 {
		t.Errorf("Pending() = %d, Timers() = %d; want 2 and 2", clk.Pending(), srv.Timers())
	}
	if n := clk.SetElapsed(11*time.Second - 1); n != 0 {
		t.Fatalf("a nanosecond before the instant: %d timers fired, want 0", n)
	}
	if got := sched.exchange(); !got.Before(when1) {
		t.Fatalf("the scheduler's timer would fire at %v, before %v", got, when1)
	}
	if n := clk.Set(11); n != 1 {
		t.Fatalf("at the instant: %d timers fired, want 1", n)
	}
	// batsky-go's timer goroutine polls: it fires at the next exchange.
	if got := sched.exchange(); got.Before(when1) {
		t.Errorf("after Set(11) the scheduler reads %v, before its timer %v", got, when1)
	}
	if at, ok := clk.NextTimer(); !ok || !at.Equal(when3) {
		t.Errorf("NextTimer() = %v, %v; want %v", at, ok, when3)
	}
}

func TestRunClosesItsSocketWhenCancelled(t *testing.T) {
	// Bind mode: the server owns the endpoint, so binding it again after
	// Run returned proves the socket was closed.
	endpoint := "tcp://" + freeAddr(t)
	srv := newServer(t, Options{Endpoint: endpoint, Clock: simclock.New(simclock.DefaultEpoch), Bind: true})
	stop := run(t, srv)

	// A scheduler of batsky-go before 33cc99b connects its REP socket.
	zctx, err := zmq.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = zctx.Term() }()
	rep, err := zctx.NewSocket(zmq.REP)
	if err != nil {
		t.Fatal(err)
	}
	_ = rep.SetLinger(0)
	_ = rep.SetRcvtimeo(failAfter)
	if err := rep.Connect(endpoint); err != nil {
		t.Fatal(err)
	}
	b, err := rep.RecvBytes(0)
	if err != nil || string(b) != "ready" {
		t.Fatalf("connected scheduler got %q, %v; want \"ready\"", b, err)
	}
	_ = rep.Close()
	// The server now waits for an answer that never comes; cancel it.
	if err := stop(); err != nil {
		t.Fatalf("Run returned %v, want nil", err)
	}
	again := newScheduler(t, endpoint)
	again.close()
}

func TestASchedulerThatRestartsMidExchangeIsServedAgain(t *testing.T) {
	clk := simclock.New(simclock.DefaultEpoch)
	first := newScheduler(t, "tcp://127.0.0.1:*")
	endpoint := first.endpoint
	run(t, newServer(t, Options{Endpoint: endpoint, Clock: clk}))
	first.exchange()
	first.recvReady()
	first.close() // dies before answering

	second := newScheduler(t, endpoint)
	clk.Set(7)
	if got, want := second.exchange(), simclock.DefaultEpoch.Add(7*time.Second); !got.Equal(want) {
		t.Errorf("restarted scheduler reads %v, want %v", got, want)
	}
}

func TestAPeerThatIsNotBatskyGoIsAProtocolError(t *testing.T) {
	for name, answer := range map[string]string{
		"not JSON":      "hello",
		"not an array":  `{"durations":[1]}`,
		"no done":       "",
		"floats in ns ": "[1.5]",
	} {
		t.Run(name, func(t *testing.T) {
			sched := newScheduler(t, "tcp://127.0.0.1:*")
			srv := newServer(t, Options{Endpoint: sched.endpoint, Clock: simclock.New(simclock.DefaultEpoch)})
			errc := make(chan error, 1)
			go func() { errc <- srv.Run(context.Background()) }()
			sched.recvReady()
			if answer == "" { // a valid first answer, then something else than "done"
				_, _ = sched.sock.SendBytes([]byte("[]"), 0)
				if _, err := sched.sock.RecvBytes(0); err != nil {
					t.Fatal(err)
				}
				answer = "DONE"
			}
			if _, err := sched.sock.SendBytes([]byte(answer), 0); err != nil {
				t.Fatal(err)
			}
			if err := chantest.Recv(t, errc, failAfter, "Run did not fail"); !errors.Is(err, ErrProtocol) {
				t.Errorf("Run returned %v, want ErrProtocol", err)
			}
		})
	}
}

func TestNewRefusesWhatBatskyGoCannotRead(t *testing.T) {
	for name, opts := range map[string]Options{
		"no endpoint":       {Clock: simclock.New(simclock.DefaultEpoch)},
		"no clock":          {Endpoint: DefaultEndpoint},
		"epoch before 1970": {Endpoint: DefaultEndpoint, Clock: simclock.New(time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC))},
	} {
		if _, err := New(opts); err == nil {
			t.Errorf("%s: New succeeded, want an error", name)
		}
	}
}

func TestEncodeTimeSaturates(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want uint64
	}{
		{time.Unix(0, 0), 0},
		{time.Unix(1, 5), 1_000_000_005},
		{time.Unix(0, 0).Add(-time.Second), 0},
		{time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), 1<<63 - 1},
	} {
		if got := binary.LittleEndian.Uint64(encodeTime(tc.t)); got != tc.want {
			t.Errorf("encodeTime(%v) = %d, want %d", tc.t, got, tc.want)
		}
	}
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestPacedExchanges(t *testing.T) {
	clk := simclock.New(simclock.DefaultEpoch)
	sched := newScheduler(t, "tcp://127.0.0.1:*")
	srv := newServer(t, Options{Endpoint: sched.endpoint, Clock: clk, Interval: time.Millisecond})
	stop := run(t, srv)
	for i := range 3 {
		clk.Set(float64(i))
		if got, want := sched.exchange(), simclock.DefaultEpoch.Add(time.Duration(i)*time.Second); !got.Equal(want) {
			t.Errorf("exchange %d: got %v, want %v", i, got, want)
		}
	}
	// The server counts an exchange once it has read the scheduler's
	// "done", which may come after the scheduler's side returned.
	for deadline := time.Now().Add(10 * time.Second); srv.Exchanges() < 3 && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	if err := stop(); err != nil {
		t.Errorf("Run returned %v", err)
	}
	if got := srv.Exchanges(); got != 3 {
		t.Errorf("Exchanges() = %d, want 3", got)
	}
}
