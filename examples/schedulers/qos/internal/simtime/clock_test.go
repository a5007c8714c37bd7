package simtime

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeServer answers GET Path as Batkube does, with the simulated time set
// by the test, and counts the readings. (An in-process stand-in: the e2e
// test of the plugin reads the real server.)
type fakeServer struct {
	*httptest.Server
	mu    sync.Mutex
	now   time.Duration // since epoch
	code  int           // answer other than 200 when set
	token string        // bearer token required when set
	reads atomic.Int64
}

func newFakeServer(t *testing.T) *fakeServer {
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.reads.Add(1)
		f.mu.Lock()
		now, code, token := f.now, f.code, f.token
		f.mu.Unlock()
		if r.URL.Path != Path || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if code != 0 {
			http.Error(w, "no", code)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"seconds": now.Seconds(), "nanoseconds": int64(now), "time": epoch.Add(now)})
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) set(now time.Duration) {
	f.mu.Lock()
	f.now = now
	f.mu.Unlock()
}

func (f *fakeServer) requireToken(token string) {
	f.mu.Lock()
	f.token = token
	f.mu.Unlock()
}

func (f *fakeServer) answer(code int) {
	f.mu.Lock()
	f.code = code
	f.mu.Unlock()
}

func newClock(t *testing.T, f *fakeServer, cfg *rest.Config, wall func() time.Time) (*Clock, error) {
	t.Helper()
	if cfg == nil {
		cfg = &rest.Config{}
	}
	cfg.Host = f.URL
	return New(t.Context(), cfg, klog.Background(), Options{Wall: wall})
}

// mustClock is newClock with the default configuration and the wall
// clock, failing the test on an error.
func mustClock(t *testing.T, f *fakeServer) *Clock {
	t.Helper()
	c, err := newClock(t, f, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReadsTheSimulatedClock: against Batkube's clock, New reads the
// simulated time, Now returns it without asking again, and SinceStart
// counts from the simulation's start.
func TestReadsTheSimulatedClock(t *testing.T) {
	f := newFakeServer(t)
	f.set(90 * time.Second)
	c := mustClock(t, f)
	if !c.Simulated() || !c.Now().Equal(epoch.Add(90*time.Second)) {
		t.Fatalf("Simulated %v, Now %v; want true, 90 s after the epoch", c.Simulated(), c.Now())
	}
	f.set(100 * time.Second)
	reads := f.reads.Load()
	if !c.Now().Equal(epoch.Add(90 * time.Second)) {
		t.Errorf("Now changed without a reading: %v", c.Now())
	}
	if got := c.Read(t.Context()); !got.Equal(epoch.Add(100 * time.Second)) {
		t.Errorf("Read = %v, want 100 s", got)
	}
	if f.reads.Load() != reads+1 {
		t.Errorf("Now and Read made %d requests, want 1 (Read's)", f.reads.Load()-reads)
	}
	if got := c.SinceStart(c.Now()); got != 100*time.Second {
		t.Errorf("SinceStart = %v, want 100s", got)
	}
}

// TestReadIfChangedReadsOncePerKey: a keyed reading asks the server only
// when the key differs from the previous one.
func TestReadIfChangedReadsOncePerKey(t *testing.T) {
	f := newFakeServer(t)
	c := mustClock(t, f)
	for i, step := range []struct {
		key  string
		now  time.Duration
		want time.Duration
		read bool
	}{
		{"10/3", 5 * time.Second, 5 * time.Second, true},
		{"10/3", 6 * time.Second, 5 * time.Second, false},
		{"11/3", 6 * time.Second, 6 * time.Second, true},
		{"11/3", 7 * time.Second, 6 * time.Second, false},
		{"11/4", 7 * time.Second, 7 * time.Second, true},
	} {
		f.set(step.now)
		before := f.reads.Load()
		got, read := c.ReadIfChanged(t.Context(), step.key)
		if !got.Equal(epoch.Add(step.want)) || (f.reads.Load() > before) != step.read || read != step.read {
			t.Errorf("step %d (key %s): got %v after %d requests, want %v after a request: %v",
				i, step.key, got.Sub(epoch), f.reads.Load()-before, step.want, step.read)
		}
	}
}

// TestNoClockServedMeansWallTime: a server that answers 404 (no such
// path) or 403 (a real API server refusing it) gives a wall clock.
func TestNoClockServedMeansWallTime(t *testing.T) {
	for _, code := range []int{http.StatusNotFound, http.StatusForbidden} {
		f := newFakeServer(t)
		f.answer(code)
		wall := epoch.Add(42 * time.Hour)
		c, err := newClock(t, f, nil, func() time.Time { return wall })
		if err != nil {
			t.Fatalf("%d: %v", code, err)
		}
		if c.Simulated() || !c.Now().Equal(wall) {
			t.Errorf("%d: Simulated %v, Now %v; want false and the wall clock", code, c.Simulated(), c.Now())
		}
		wall = wall.Add(time.Minute)
		reads := f.reads.Load()
		if got := c.Read(t.Context()); !got.Equal(wall) || f.reads.Load() != reads {
			t.Errorf("%d: Read = %v with %d requests, want the wall clock without asking", code, got, f.reads.Load()-reads)
		}
	}
}

// TestOtherFailuresAreErrors: a server that fails otherwise, or none,
// makes New fail with the cause.
func TestOtherFailuresAreErrors(t *testing.T) {
	f := newFakeServer(t)
	f.answer(http.StatusInternalServerError)
	if _, err := newClock(t, f, nil, nil); err == nil {
		t.Errorf("New succeeded against a server answering 500")
	}
	f.answer(0)
	f.requireToken("secret")
	if _, err := newClock(t, f, nil, nil); err == nil {
		t.Errorf("New succeeded without the token the server wants (401)")
	}
	gone := newFakeServer(t)
	gone.Close()
	if _, err := newClock(t, gone, nil, nil); err == nil {
		t.Errorf("New succeeded with no server")
	}
}

// TestSendsTheKubeconfigsCredentials: the reading is authenticated as the
// scheduler's other requests are.
func TestSendsTheKubeconfigsCredentials(t *testing.T) {
	f := newFakeServer(t)
	f.requireToken("secret")
	f.set(time.Second)
	c, err := newClock(t, f, &rest.Config{BearerToken: "secret"}, nil)
	if err != nil || !c.Simulated() {
		t.Fatalf("New with the token: %v, simulated %v", err, c != nil && c.Simulated())
	}
}

// TestFailedReadingKeepsTheLatest: once the server is gone (the run is
// over), readings return the latest time and count the failures.
func TestFailedReadingKeepsTheLatest(t *testing.T) {
	f := newFakeServer(t)
	f.set(30 * time.Second)
	c := mustClock(t, f)
	f.Close()
	if got := c.Read(t.Context()); !got.Equal(epoch.Add(30 * time.Second)) {
		t.Errorf("Read after the server went away = %v, want the latest reading (30 s)", got)
	}
	if n, msg := c.Failures(); n != 1 || msg == "" {
		t.Errorf("Failures = %d, %q; want 1 with its error", n, msg)
	}
}

// TestReadingsNeverGoBack: a reading older than the latest (concurrent
// readings ending out of order) does not move Now back.
func TestReadingsNeverGoBack(t *testing.T) {
	f := newFakeServer(t)
	f.set(50 * time.Second)
	c := mustClock(t, f)
	f.set(40 * time.Second)
	if got := c.Read(t.Context()); !got.Equal(epoch.Add(50 * time.Second)) {
		t.Errorf("Read of an older time returned %v, want the latest, 50 s", got.Sub(epoch))
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			f.set(time.Duration(60+i) * time.Second)
			c.Read(t.Context())
		})
	}
	wg.Wait()
	if got := c.Now().Sub(epoch); got < 60*time.Second {
		t.Errorf("after concurrent readings Now = %v, want at least 60 s", got)
	}
}
