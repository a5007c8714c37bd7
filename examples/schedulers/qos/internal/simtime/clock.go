package simtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// Path is where Batkube serves its clock.
const Path = "/batkube/v1/clock"

// DefaultTimeout bounds one reading of the clock.
const DefaultTimeout = 10 * time.Second

// reading is Batkube's answer to GET Path.
type reading struct {
	// Nanoseconds is the simulated time since the start of the simulation.
	Nanoseconds int64 `json:"nanoseconds"`
	// Time is the simulated instant, on the run's epoch (what object
	// timestamps use).
	Time time.Time `json:"time"`
}

// Clock reads the time of a cluster: Batkube's simulated clock, or wall
// time where none is served. It is safe for concurrent use.
type Clock struct {
	url       string
	client    *http.Client
	timeout   time.Duration
	simulated bool
	start     time.Time // the simulation's start; zero in wall time
	wall      func() time.Time
	logger    klog.Logger

	latest atomic.Pointer[time.Time]

	mu        sync.Mutex // serialises keyed readings
	key       string
	keyed     bool
	failures  atomic.Int64
	lastError atomic.Pointer[string]
}

// Options configure New; the zero value is the default.
type Options struct {
	// Timeout bounds one reading (default DefaultTimeout).
	Timeout time.Duration
	// Wall is the wall clock used where no simulated clock is served
	// (default time.Now).
	Wall func() time.Time
}

// New returns the clock of the cluster cfg points at. It reads the clock
// once: a Batkube server answers with the simulated time; 404 (no such
// path) or 403 (not allowed: a real API server, which kube-scheduler's
// role does not let read other paths) make a wall clock, said in the log;
// any other failure is an error.
func New(ctx context.Context, cfg *rest.Config, logger klog.Logger, opts Options) (*Clock, error) {
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("simtime: the API server's URL: %w", err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("simtime: an HTTP client for %s: %w", base, err)
	}
	c := &Clock{url: base.JoinPath(Path).String(), client: client, timeout: opts.Timeout, wall: opts.Wall, logger: logger}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.wall == nil {
		c.wall = time.Now
	}
	r, err := c.fetch(ctx)
	var se *statusError
	switch {
	case err == nil:
		c.simulated = true
		c.start = r.Time.Add(-time.Duration(r.Nanoseconds))
		c.store(r.Time)
		logger.Info("Reading the simulated clock", "url", c.url, "simulatedTime", r.Time, "sinceStart", time.Duration(r.Nanoseconds))
	case errors.As(err, &se) && (se.code == http.StatusNotFound || se.code == http.StatusForbidden):
		c.store(c.wall())
		logger.Info("No simulated clock served: measuring in wall time", "url", c.url, "status", se.code)
	default:
		return nil, fmt.Errorf("simtime: reading the clock: %w", err)
	}
	return c, nil
}

// Simulated reports whether the clock is Batkube's simulated one.
func (c *Clock) Simulated() bool { return c.simulated }

// SinceStart returns the time t is after the start of the simulation (zero
// in wall time).
func (c *Clock) SinceStart(t time.Time) time.Duration {
	if !c.simulated {
		return 0
	}
	return t.Sub(c.start)
}

// Now returns the latest reading, without I/O.
func (c *Clock) Now() time.Time { return *c.latest.Load() }

// Read reads the time now. If the reading fails (the simulation is over and
// its server gone) it returns the latest reading; the failure is logged.
func (c *Clock) Read(ctx context.Context) time.Time {
	if !c.simulated {
		return c.store(c.wall())
	}
	r, err := c.fetch(ctx)
	if err != nil {
		c.failed(err)
		return c.Now()
	}
	return c.store(r.Time)
}

// ReadIfChanged reads the time if key differs from the key of the previous
// ReadIfChanged, and returns the latest reading otherwise; read says which.
func (c *Clock) ReadIfChanged(ctx context.Context, key string) (now time.Time, read bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keyed && key == c.key {
		return c.Now(), false
	}
	now = c.Read(ctx)
	c.key, c.keyed = key, true
	return now, true
}

// Failures returns how many readings failed, and the last error.
func (c *Clock) Failures() (int64, string) {
	msg := ""
	if p := c.lastError.Load(); p != nil {
		msg = *p
	}
	return c.failures.Load(), msg
}

// store records t as the latest reading unless a later one is already
// recorded (concurrent readings may end out of order), and returns the
// latest.
func (c *Clock) store(t time.Time) time.Time {
	for {
		old := c.latest.Load()
		if old != nil && !t.After(*old) {
			return *old
		}
		if c.latest.CompareAndSwap(old, &t) {
			return t
		}
	}
}

func (c *Clock) failed(err error) {
	n := c.failures.Add(1)
	msg := err.Error()
	c.lastError.Store(&msg)
	if n == 1 {
		c.logger.Error(err, "Reading the simulated clock failed: keeping the latest reading (further failures are logged at verbosity 4)", "latest", c.Now())
	} else {
		c.logger.V(4).Info("Reading the simulated clock failed", "err", err, "failures", n)
	}
}

// statusError is an answer other than 200.
type statusError struct {
	code int
	body string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.code, http.StatusText(e.code), e.body)
}

func (c *Clock) fetch(ctx context.Context) (reading, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return reading{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return reading{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return reading{}, &statusError{code: resp.StatusCode, body: string(body)}
	}
	var r reading
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return reading{}, fmt.Errorf("GET %s: decoding the answer: %w", c.url, err)
	}
	if r.Time.IsZero() {
		return reading{}, fmt.Errorf("GET %s: the answer has no time", c.url)
	}
	return r, nil
}
