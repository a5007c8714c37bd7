package clockclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/batkube/batkube/pkg/simtime/timeservice"
)

var (
	_ clock.PassiveClock                  = (*Clock)(nil)
	_ clock.Clock                         = (*Clock)(nil)
	_ clock.WithTicker                    = (*Clock)(nil)
	_ clock.WithDelayedExecution          = (*Clock)(nil)
	_ clock.WithTickerAndDelayedExecution = (*Clock)(nil)
)

// DefaultRequestTimeout bounds a reading of the clock (Now) by default.
const DefaultRequestTimeout = 30 * time.Second

// Wall-clock backoff between the attempts of a failed wait.
const (
	retryMin = 10 * time.Millisecond
	retryMax = time.Second
)

// Options configure a Clock. The zero value is a sensible default.
type Options struct {
	// HTTPClient sends the requests; nil uses a client of the Clock's own
	// that keeps enough idle connections for many pending timers. Its
	// Timeout must be zero: a wait lasts as long as simulated time takes.
	HTTPClient *http.Client
	// BearerToken, when set, is sent in every request's Authorization header.
	BearerToken string
	// RequestTimeout bounds the wall-clock time of a reading by Now
	// (default DefaultRequestTimeout); waits are not bounded.
	RequestTimeout time.Duration
	// OnError is told of failed requests; nil logs them with slog.Default().
	OnError func(error)
}

// StatusError is an error answer of the server.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("clockclient: server answered %d %s: %s", e.Code, http.StatusText(e.Code), e.Message)
}

// permanent reports whether retrying cannot help.
func (e *StatusError) permanent() bool {
	return e.Code >= 400 && e.Code < 500 && e.Code != http.StatusRequestTimeout && e.Code != http.StatusTooManyRequests
}

// Clock is the simulated clock of a Batkube server, read over HTTP. It is
// safe for concurrent use.
type Clock struct {
	url      string
	hc       *http.Client
	ownHC    bool
	token    string
	timeout  time.Duration
	onError  func(error)
	ctx      context.Context // ends at Close
	cancel   context.CancelFunc
	wg       sync.WaitGroup // the goroutines of timers and tickers
	mu       sync.Mutex
	closed   bool
	lastSeen time.Time // latest simulated time read
}

// New returns a clock reading the Batkube API server at server (its base
// URL, "http://127.0.0.1:8001").
func New(server string, opts Options) (*Clock, error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, fmt.Errorf("clockclient: server URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("clockclient: server URL %q: want http(s)://host[:port]", server)
	}
	c := &Clock{
		url:     u.JoinPath(timeservice.Path).String(),
		hc:      opts.HTTPClient,
		token:   opts.BearerToken,
		timeout: opts.RequestTimeout,
		onError: opts.OnError,
	}
	if c.hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		c.hc, c.ownHC = &http.Client{Transport: tr}, true
	}
	if c.timeout <= 0 {
		c.timeout = DefaultRequestTimeout
	}
	if c.onError == nil {
		c.onError = func(err error) { slog.Default().Warn("simulated clock", "err", err) }
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// Close stops every timer and ticker of the clock and waits for their
// goroutines to end. Timers never fire afterwards. Close is idempotent and
// returns nil.
func (c *Clock) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	if c.ownHC {
		c.hc.CloseIdleConnections()
	}
	return nil
}

// goTimer runs f in a goroutine that Close waits for; it reports false,
// without running f, once the clock is closed.
func (c *Clock) goTimer(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// NowContext reads the simulated time.
func (c *Clock) NowContext(ctx context.Context) (time.Time, error) {
	r, err := c.get(ctx, nil, nil)
	if err != nil {
		return time.Time{}, err
	}
	return r.Time, nil
}

// WaitUntil blocks until simulated time reaches t (one request, no retry)
// and returns the simulated time that woke it. If ctx ends first, the
// server removes the wait and WaitUntil returns an error wrapping ctx.Err().
func (c *Clock) WaitUntil(ctx context.Context, t time.Time) (time.Time, error) {
	r, err := c.get(ctx, url.Values{timeservice.ParamUntil: {t.Format(time.RFC3339Nano)}}, nil)
	if err != nil {
		return time.Time{}, err
	}
	return r.Time, nil
}

// Now returns the simulated time: see the package doc for its cost and its
// answer when the server cannot be reached.
func (c *Clock) Now() time.Time {
	ctx, cancel := context.WithTimeout(c.ctx, c.timeout)
	defer cancel()
	t, err := c.NowContext(ctx)
	if err != nil {
		c.onError(err)
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.lastSeen
	}
	return t
}

// Since returns the simulated time elapsed since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// After returns the channel of a new timer.
func (c *Clock) After(d time.Duration) <-chan time.Time { return c.NewTimer(d).C() }

// NewTimer returns a timer that sends the simulated time on its channel once
// simulated time has advanced by d.
func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	return c.newTimer(d, make(chan time.Time, 1), nil)
}

// AfterFunc calls f in its own goroutine once simulated time has advanced by
// d. The timer's C is nil; Stop reports whether it prevented the call.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return c.newTimer(d, nil, f)
}

// Sleep blocks until simulated time has advanced by d (or the clock is
// closed).
func (c *Clock) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := c.NewTimer(d)
	select {
	case <-t.C():
	case <-c.ctx.Done():
		t.Stop()
	}
}

// Tick returns the channel of a new ticker, nil if d <= 0.
func (c *Clock) Tick(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil
	}
	return c.NewTicker(d).C()
}

// NewTicker returns a ticker that ticks each time simulated time advances by
// d, on the instants creation + k*d.
func (c *Clock) NewTicker(d time.Duration) clock.Ticker {
	tk := &ticker{c: make(chan time.Time, 1), stop: func() {}}
	if d <= 0 {
		c.onError(fmt.Errorf("clockclient: NewTicker(%v): the interval must be positive; this ticker never ticks", d))
		return tk
	}
	ctx, cancel := context.WithCancel(c.ctx)
	tk.stop = cancel
	c.goTimer(func() {
		defer cancel()
		w := wait{after: d}
		for {
			r, ok := c.waitRetrying(ctx, &w)
			if !ok {
				return
			}
			tk.deliver(r.Time)
			if !w.known { // a server that did not say: count from now
				w.until = r.Time
			}
			// The next instant after now on the grid, skipping the missed.
			next := w.until.Add(d)
			if !next.After(r.Time) {
				next = next.Add((r.Time.Sub(next)/d + 1) * d)
			}
			w = wait{until: next, known: true}
		}
	})
	return tk
}

// wait is what a timer waits for: d after the server's time, until the
// server said which instant that is, then that instant.
type wait struct {
	after time.Duration
	until time.Time
	known bool
}

func (w *wait) query() url.Values {
	if w.known {
		return url.Values{timeservice.ParamUntil: {w.until.Format(time.RFC3339Nano)}}
	}
	return url.Values{timeservice.ParamAfter: {strconv.FormatInt(int64(w.after), 10) + "ns"}}
}

// waitRetrying waits for w, retrying failures, until it is reached (true)
// or ctx ends or the server refuses it (false). w learns its instant from
// the server's first answer, so retries wait for the same instant.
func (c *Clock) waitRetrying(ctx context.Context, w *wait) (timeservice.Reading, bool) {
	backoff := retryMin
	for {
		r, err := c.get(ctx, w.query(), func(until time.Time) { w.until, w.known = until, true })
		if err == nil {
			if r.Until != nil && !w.known {
				w.until, w.known = *r.Until, true
			}
			return r, true
		}
		if ctx.Err() != nil {
			return r, false
		}
		c.onError(err)
		if se := (*StatusError)(nil); errors.As(err, &se) && se.permanent() {
			return r, false
		}
		pause := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			pause.Stop()
			return r, false
		case <-pause.C:
		}
		backoff = min(2*backoff, retryMax)
	}
}

// get sends a GET with query q and decodes the reading; until, if not nil,
// is told the instant a wait waits for as soon as the server registered it.
func (c *Clock) get(ctx context.Context, q url.Values, until func(time.Time)) (timeservice.Reading, error) {
	u := c.url
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return timeservice.Reading{}, fmt.Errorf("clockclient: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return timeservice.Reading{}, fmt.Errorf("clockclient: %w", err)
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) // lets the connection be reused
		_ = resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		var e timeservice.Error
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = string(b)
		}
		return timeservice.Reading{}, &StatusError{Code: resp.StatusCode, Message: e.Error}
	}
	if h := resp.Header.Get(timeservice.UntilHeader); h != "" && until != nil {
		if t, err := time.Parse(time.RFC3339Nano, h); err == nil {
			until(t)
		}
	}
	var r timeservice.Reading
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return timeservice.Reading{}, fmt.Errorf("clockclient: reading the answer: %w", err)
	}
	c.mu.Lock()
	if r.Time.After(c.lastSeen) {
		c.lastSeen = r.Time
	}
	c.mu.Unlock()
	return r, nil
}

// timer is a clock.Timer: a channel timer, or an AfterFunc when f is set.
type timer struct {
	clk *Clock
	c   chan time.Time // nil for AfterFunc
	f   func()

	mu     sync.Mutex
	active bool
	gen    uint64             // arming number; a goroutine of an older arming does not fire
	cancel context.CancelFunc // ends the goroutine of the current arming
}

var _ clock.Timer = (*timer)(nil)

func (c *Clock) newTimer(d time.Duration, ch chan time.Time, f func()) *timer {
	t := &timer{clk: c, c: ch, f: f}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.armLocked(d)
	return t
}

func (t *timer) C() <-chan time.Time { return t.c }

func (t *timer) armLocked(d time.Duration) {
	t.gen++
	gen := t.gen
	t.active = true
	ctx, cancel := context.WithCancel(t.clk.ctx)
	t.cancel = cancel
	t.clk.goTimer(func() {
		defer cancel()
		r, ok := t.clk.waitRetrying(ctx, &wait{after: d})
		if ok {
			t.fire(gen, r.Time)
		}
	})
}

func (t *timer) fire(gen uint64, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if gen != t.gen || !t.active {
		return
	}
	t.active = false
	if t.f != nil {
		go t.f()
		return
	}
	select {
	case t.c <- now:
	default: // cannot happen: disarming drains C
	}
}

// disarmLocked stops the current arming and drains C; it reports whether the
// timer was active, counting a value not yet received.
func (t *timer) disarmLocked() bool {
	was := t.active
	t.active = false
	t.gen++
	if t.cancel != nil {
		t.cancel()
		t.cancel = nil
	}
	if t.c != nil {
		select {
		case <-t.c:
			was = true
		default:
		}
	}
	return was
}

// Stop prevents the timer from firing. It reports whether the call stopped
// it: false if it had already fired (and its value was received, or f
// started) or been stopped.
func (t *timer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.disarmLocked()
}

// Reset makes the timer fire once simulated time has advanced by d from now,
// and reports whether it had been active.
func (t *timer) Reset(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.disarmLocked()
	t.armLocked(d)
	return was
}

// ticker is a clock.Ticker.
type ticker struct {
	c       chan time.Time
	stop    context.CancelFunc
	mu      sync.Mutex
	stopped bool
}

var _ clock.Ticker = (*ticker)(nil)

func (tk *ticker) C() <-chan time.Time { return tk.c }

// Stop turns the ticker off: no tick is received after it returns.
func (tk *ticker) Stop() {
	tk.mu.Lock()
	tk.stopped = true
	select {
	case <-tk.c:
	default:
	}
	tk.mu.Unlock()
	tk.stop()
}

func (tk *ticker) deliver(now time.Time) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if tk.stopped {
		return
	}
	select {
	case tk.c <- now:
	default: // the receiver is behind: drop the tick
	}
}
