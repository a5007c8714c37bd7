package timeservice

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/simtime/simclock"
)

// failAfter bounds what should happen; a test-failure timeout only.
const failAfter = 10 * time.Second

var epoch = simclock.DefaultEpoch

func serve(t *testing.T) (*simclock.Clock, string) {
	t.Helper()
	clk := simclock.New(epoch)
	hs := httptest.NewServer(NewHandler(clk, nil))
	t.Cleanup(hs.Close)
	return clk, hs.URL + Path
}

func get(t *testing.T, ctx context.Context, u string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func decode[T any](t *testing.T, resp *http.Response) T {
	t.Helper()
	var v T
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("decoding the answer: %v", err)
	}
	return v
}

func TestGetAnswersTheSimulatedNow(t *testing.T) {
	clk, u := serve(t)
	clk.Set(90.000000001)
	resp := get(t, context.Background(), u)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %q, want 200 application/json", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	raw := decode[map[string]any](t, resp)
	want := map[string]any{
		"seconds":     90.000000001,
		"nanoseconds": float64(90_000_000_001),
		"time":        "2026-01-01T00:01:30.000000001Z",
	}
	for k, v := range want {
		if raw[k] != v {
			t.Errorf("%s = %v, want %v", k, raw[k], v)
		}
	}
	if _, ok := raw["until"]; ok || len(raw) != len(want) {
		t.Errorf("got fields %v, want only %v", raw, want)
	}
}

// A wait answers its headers once its timer is registered and its body
// when simulated time reaches the instant, not before.
func TestWaitEndsExactlyWhenTimeReachesTheInstant(t *testing.T) {
	for name, tc := range map[string]struct {
		query string
		at    time.Duration // since the epoch
	}{
		"until seconds":   {"until=5", 5 * time.Second},
		"until RFC 3339":  {"until=" + url.QueryEscape("2026-01-01T00:00:05.000000001Z"), 5*time.Second + 1},
		"after duration":  {"after=1.5s", 3500 * time.Millisecond},
		"after seconds":   {"after=0.25", 2250 * time.Millisecond},
		"after in ns":     {"after=7ns", 2*time.Second + 7},
		"until far ahead": {"until=" + url.QueryEscape("2100-01-01T00:00:00Z"), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Sub(epoch)},
	} {
		t.Run(name, func(t *testing.T) {
			clk, u := serve(t)
			clk.Set(2)
			resp := get(t, context.Background(), u+"?"+tc.query)
			at := epoch.Add(tc.at)
			if h := resp.Header.Get(UntilHeader); h != at.Format(time.RFC3339Nano) {
				t.Fatalf("%s = %q, want %q", UntilHeader, h, at.Format(time.RFC3339Nano))
			}
			if next, ok := clk.NextTimer(); !ok || !next.Equal(at) || clk.Pending() != 1 {
				t.Fatalf("NextTimer() = %v, %v with %d pending; want %v, 1 pending", next, ok, clk.Pending(), at)
			}
			if n := clk.SetElapsed(tc.at - 1); n != 0 {
				t.Fatalf("a nanosecond early: %d timers fired, want 0", n)
			}
			if n := clk.SetElapsed(tc.at + 3); n != 1 {
				t.Fatalf("past the instant: %d timers fired, want 1", n)
			}
			r := decode[Reading](t, resp)
			if want := epoch.Add(tc.at + 3); !r.Time.Equal(want) || r.Nanoseconds != int64(tc.at+3) {
				t.Errorf("woke at %v (%d ns), want %v", r.Time, r.Nanoseconds, want)
			}
			if r.Until == nil || !r.Until.Equal(at) {
				t.Errorf("until = %v, want %v", r.Until, at)
			}
		})
	}
}

func TestWaitForAPastInstantAnswersAtOnce(t *testing.T) {
	clk, u := serve(t)
	clk.Set(10)
	for _, q := range []string{"until=3", "until=0", "until=-1", "after=0s", "after=-5s", "until=" + url.QueryEscape("2000-01-01T00:00:00Z")} {
		ctx, cancel := context.WithTimeout(context.Background(), failAfter)
		resp := get(t, ctx, u+"?"+q)
		r := decode[Reading](t, resp)
		cancel()
		if resp.StatusCode != http.StatusOK || r.Seconds != 10 || r.Until == nil {
			t.Errorf("%s: got %d %+v, want 200 at 10 s with until", q, resp.StatusCode, r)
		}
	}
	if clk.Pending() != 0 {
		t.Errorf("%d timers pending, want 0", clk.Pending())
	}
}

func TestAWaitWhoseClientWentAwayLeavesNoTimer(t *testing.T) {
	clk, u := serve(t)
	const n = 20
	ctx, cancel := context.WithCancel(context.Background())
	for i := range n {
		resp := get(t, ctx, u+"?after="+time.Duration(i+1).String())
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("got %d", resp.StatusCode)
		}
	}
	if clk.Pending() != n {
		t.Fatalf("%d timers pending, want %d", clk.Pending(), n)
	}
	cancel()
	deadline := time.After(failAfter)
	for clk.Pending() > 0 {
		_, changed := clk.TimerActivity()
		if clk.Pending() == 0 {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%d timers left behind by clients that went away", clk.Pending())
		}
	}
}

func TestBadRequestsGetJSONErrors(t *testing.T) {
	clk, u := serve(t)
	for _, q := range []string{
		"until=abc", "until=NaN", "until=Inf", "until=2026-01-01", "until=2026-01-01T00:00:00",
		"after=abc", "after=1x", "after=NaN",
		"until=1&after=1s", "until=1&until=2", "untill=1", "watch=true",
		"kind=work", "until=1&kind=later", "until=1&kind=work&kind=passive",
	} {
		resp := get(t, context.Background(), u+"?"+q)
		e := decode[Error](t, resp)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" || e.Error == "" {
			t.Errorf("%s: got %d %q %+v, want 400 with a JSON error", q, resp.StatusCode, resp.Header.Get("Content-Type"), e)
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodHead} {
		req, _ := http.NewRequest(m, u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != http.MethodGet {
			t.Errorf("%s: got %d Allow=%q, want 405 Allow=GET", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
		if m != http.MethodHead && json.Unmarshal(body, &Error{}) != nil {
			t.Errorf("%s: body %q is not JSON", m, body)
		}
	}
	if clk.Pending() != 0 {
		t.Errorf("bad requests left %d timers", clk.Pending())
	}
}

func TestHandlesOnlyItsPath(t *testing.T) {
	h := NewHandler(simclock.New(epoch), nil)
	for path, want := range map[string]bool{Path: true, Path + "/": false, "/batkube/v1": false, "/api": false, "/batkube/v1/clockx": false} {
		if got := h.Handles(path); got != want {
			t.Errorf("Handles(%q) = %v, want %v", path, got, want)
		}
	}
}

// A wait's kind says what its timer asks of the simulation: a work timer
// a call (and NextWorkSeconds), a passive one nothing; each fires when
// time reaches it.
func TestWaitKinds(t *testing.T) {
	clk, u := serve(t)
	work := get(t, context.Background(), u+"?until=2&kind=work")
	passive := get(t, context.Background(), u+"?until=1&kind=passive")
	if work.StatusCode != http.StatusOK || passive.StatusCode != http.StatusOK {
		t.Fatalf("got %d and %d", work.StatusCode, passive.StatusCode)
	}
	if s, ok := clk.NextTimerSeconds(); !ok || s != 2 {
		t.Errorf("next call at %v (%v), want 2: the passive timer asks for none", s, ok)
	}
	if s, ok := clk.NextWorkSeconds(); !ok || s != 2 {
		t.Errorf("next work at %v (%v), want 2", s, ok)
	}
	if clk.Pending() != 0 {
		t.Errorf("%d scheduler timers, want none", clk.Pending())
	}
	clk.Set(1)
	if r := decode[Reading](t, passive); r.Nanoseconds != int64(time.Second) {
		t.Errorf("passive wait woken at %v", r.Nanoseconds)
	}
	clk.Set(3)
	if r := decode[Reading](t, work); r.Nanoseconds != int64(3*time.Second) {
		t.Errorf("work wait woken at %v", r.Nanoseconds)
	}
}

// A pause asks for no call; released, it ends at once with the time of
// the release and "released": true; a wait of another kind never does.
func TestPauseReleased(t *testing.T) {
	clk, u := serve(t)
	clk.Set(1)
	pause := get(t, context.Background(), u+"?until=5&kind=pause")
	passive := get(t, context.Background(), u+"?until=4&kind=passive")
	if pause.StatusCode != http.StatusOK || passive.StatusCode != http.StatusOK {
		t.Fatalf("got %d and %d", pause.StatusCode, passive.StatusCode)
	}
	if s, ok := clk.NextTimerSeconds(); ok {
		t.Errorf("a call asked at %v: a pause asks for none", s)
	}
	if n := clk.Pauses(); n != 1 {
		t.Fatalf("%d pauses pending, want 1", n)
	}
	if n := clk.ReleasePauses(); n != 1 {
		t.Fatalf("released %d, want 1", n)
	}
	if r := decode[Reading](t, pause); !r.Released || r.Nanoseconds != int64(time.Second) || r.Until == nil || !r.Until.Equal(epoch.Add(5*time.Second)) {
		t.Errorf("released pause: %+v, want released at 1 s, until 5 s", r)
	}
	clk.Set(4)
	if r := decode[Reading](t, passive); r.Released || r.Nanoseconds != int64(4*time.Second) {
		t.Errorf("passive wait: %+v, want reached at 4 s, not released", r)
	}
}

// A wait is parked once its timer is registered and unparked as the timer
// fires (before its answer is written), or when its client goes away.
func TestWaitsPark(t *testing.T) {
	clk := simclock.New(epoch)
	var parked, unparked atomic.Int32
	hs := httptest.NewServer(NewHandler(clk, func(*http.Request) (func(), func()) {
		return func() { parked.Add(1) }, func() { unparked.Add(1) }
	}))
	t.Cleanup(hs.Close)
	resp := get(t, context.Background(), hs.URL+Path+"?until=5")
	if parked.Load() != 1 || unparked.Load() != 0 {
		t.Fatalf("registered: parked %d, unparked %d; want 1, 0", parked.Load(), unparked.Load())
	}
	clk.Set(5) // the timer fires: unparked at once, inside Set
	if unparked.Load() != 1 {
		t.Fatalf("fired: unparked %d, want 1", unparked.Load())
	}
	decode[Reading](t, resp)

	ctx, cancel := context.WithCancel(context.Background())
	get(t, ctx, hs.URL+Path+"?until=9")
	cancel()
	for clk.Pending() != 0 { // the server sees the client go
		time.Sleep(time.Millisecond)
	}
	for unparked.Load() != 2 {
		time.Sleep(time.Millisecond)
	}
	if parked.Load() != 2 {
		t.Errorf("parked %d, want 2", parked.Load())
	}
}

// After End, a wait in progress ends with no reading and a new one is
// refused: no wait holds the server's shutdown.
func TestEndEndsTheWaits(t *testing.T) {
	clk := simclock.New(epoch)
	h := NewHandler(clk, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	resp := get(t, context.Background(), hs.URL+Path+"?until=5")
	h.End()
	if body, err := io.ReadAll(resp.Body); err != nil || len(body) != 0 {
		t.Errorf("a wait ended by End: body %q, %v; want none", body, err)
	}
	if clk.Pending() != 0 {
		t.Errorf("%d timers left", clk.Pending())
	}
	if resp := get(t, context.Background(), hs.URL+Path+"?until=6"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a wait after End: %d, want 503", resp.StatusCode)
	}
	if resp := get(t, context.Background(), hs.URL+Path); resp.StatusCode != http.StatusOK {
		t.Errorf("a reading after End: %d, want 200", resp.StatusCode)
	}
}
