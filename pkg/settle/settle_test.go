package settle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/store"
)

func post(t *testing.T, srv *httptest.Server, body string) (int, settle.IdleResponse) {
	t.Helper()
	resp, err := http.Post(srv.URL+settle.IdlePath, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out settle.IdleResponse
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestSignalsEndAStepOnceEverySchedulerHasSeenTheLatestChange(t *testing.T) {
	s := settle.NewSignals()
	srv := httptest.NewServer(s)
	defer srv.Close()
	ctx := context.Background()
	st := settle.State{RV: 10}
	if v, _ := s.Check(ctx, st); v.Done {
		t.Fatal("done before any signal")
	}
	if code, _ := post(t, srv, `{"scheduler":"a","resourceVersion":"10"}`); code != http.StatusOK {
		t.Fatalf("signal: %d", code)
	}
	if v, _ := s.Check(ctx, st); !v.Done || !v.Exact {
		t.Fatalf("a idle at the latest change: %+v, want done, exact", v)
	}
	post(t, srv, `{"scheduler":"b","resourceVersion":"9"}`)
	if v, _ := s.Check(ctx, st); v.Done {
		t.Fatalf("b has not seen RV 10: %+v, want not done", v)
	}
	select {
	case <-s.Abilities().Wake:
	default:
		t.Fatal("a signal does not wake the broker")
	}
	for _, bad := range []string{`{"resourceVersion":"1"}`, `{"scheduler":"a","resourceVersion":"x"}`, `{"scheduler":"a","resourceVersion":"1","extra":1}`, `nope`} {
		if code, _ := post(t, srv, bad); code != http.StatusBadRequest {
			t.Errorf("signal %s: %d, want 400", bad, code)
		}
	}
}

func TestIdleWaitEndsOnAChangeWhileTheGateIsOpen(t *testing.T) {
	s := settle.NewSignals()
	srv := httptest.NewServer(s)
	defer srv.Close()
	s.Observe(store.Change{RV: 5})
	type answer struct {
		code int
		resp settle.IdleResponse
	}
	done := make(chan answer, 1)
	go func() {
		code, resp := post(t, srv, `{"scheduler":"a","resourceVersion":"5","wait":true}`)
		done <- answer{code, resp}
	}()
	// A change while the broker applies a step (gate shut) does not end
	// the wait; opening the gate does.
	s.Observe(store.Change{RV: 6})
	select {
	case a := <-done:
		t.Fatalf("the wait ended (%+v) while the gate was shut", a)
	case <-time.After(50 * time.Millisecond): // a bound on waiting for something that must not happen
	}
	s.Open()
	a := <-done
	if a.code != http.StatusOK || a.resp.ResourceVersion != "6" {
		t.Fatalf("wait: %+v, want 200 at RV 6", a)
	}
	if got := s.Deciding(); got != "a" {
		t.Fatalf("deciding after the answer: %q, want a (until its next signal)", got)
	}
	s.Shut()
	go func() {
		code, resp := post(t, srv, `{"scheduler":"a","resourceVersion":"6","wait":true}`)
		done <- answer{code, resp}
	}()
	s.End()
	if a := <-done; !a.resp.Ended {
		t.Fatalf("wait at the end of the simulation: %+v, want ended", a)
	}
	if got := s.Deciding(); got != "" {
		t.Errorf("deciding after signalling again and being told the end: %q, want none", got)
	}
}

func TestQuietNeedsAPresentSchedulerAndSilence(t *testing.T) {
	q := settle.NewQuiet(time.Hour)
	ctx := context.Background()
	if v, _ := q.Check(ctx, settle.State{LastActivity: time.Now().Add(-2 * time.Hour)}); v.Done {
		t.Error("done with no scheduler present")
	}
	if v, _ := q.Check(ctx, settle.State{LastActivity: time.Now(), SchedulerPresent: true}); v.Done || v.RetryAfter <= 0 {
		t.Errorf("done right after a write: %+v", v)
	}
	if v, _ := q.Check(ctx, settle.State{LastActivity: time.Now().Add(-2 * time.Hour), SchedulerPresent: true}); !v.Done || v.Exact {
		t.Errorf("after the window: %+v, want done, not exact", v)
	}
}

func TestAutoFallsBackOnSilenceUntilASignal(t *testing.T) {
	s := settle.NewSignals()
	a := settle.NewAuto(s, settle.NewQuiet(time.Nanosecond))
	ctx := context.Background()
	st := settle.State{RV: 3, LastActivity: time.Now().Add(-time.Second), SchedulerPresent: true}
	if v, _ := a.Check(ctx, st); !v.Done || v.Exact || a.Name() != "quiet" {
		t.Fatalf("no signal yet: %+v (%s), want done on silence", v, a.Name())
	}
	s.Signal("x", 2)
	if v, _ := a.Check(ctx, st); v.Done {
		t.Fatalf("a signal older than the latest change: %+v, want not done", v)
	}
	s.Signal("x", 3)
	if v, _ := a.Check(ctx, st); !v.Done || !v.Exact || a.Name() != "quiet+signal" {
		t.Fatalf("signal at the latest change: %+v (%s), want done, exact", v, a.Name())
	}
}

// TestSignalOlderThanTheAnswerIsWarnedOnce: a scheduler that signals a
// resourceVersion older than the server's latest answer to it (a script
// reading none from its lists signalled 0) is answered at once every time;
// the server says so in its log, once per scheduler.
func TestSignalOlderThanTheAnswerIsWarnedOnce(t *testing.T) {
	s := settle.NewSignals()
	var log bytes.Buffer
	s.Logger = slog.New(slog.NewTextHandler(&log, nil))
	srv := httptest.NewServer(s)
	defer srv.Close()
	s.Observe(store.Change{RV: 6})
	s.Open()
	if _, a := post(t, srv, `{"scheduler":"a","resourceVersion":"5","wait":true}`); a.ResourceVersion != "6" {
		t.Fatalf("answer %+v, want at RV 6", a)
	}
	if log.Len() != 0 {
		t.Fatalf("warned before any older signal: %s", log.String())
	}
	for range 2 {
		if _, a := post(t, srv, `{"scheduler":"a","resourceVersion":"0","wait":true}`); a.ResourceVersion != "6" {
			t.Fatalf("answer %+v, want at once at RV 6", a)
		}
	}
	if n := strings.Count(log.String(), "older than the server's latest answer"); n != 1 {
		t.Errorf("%d warnings, want 1: %s", n, log.String())
	}
	if !strings.Contains(log.String(), "scheduler=a") || !strings.Contains(log.String(), "answered=6") {
		t.Errorf("the warning does not name the scheduler and the answer: %s", log.String())
	}
}

// TestAnswerSaysEachResourcesLatestChange: the answer gives the latest
// change of pods and of nodes apart, so that a scheduler with one informer
// each knows when both have caught up (a pods' informer that delivered the
// latest change says nothing of the nodes' one).
func TestAnswerSaysEachResourcesLatestChange(t *testing.T) {
	s := settle.NewSignals()
	srv := httptest.NewServer(s)
	defer srv.Close()
	nodes, pods := schema.GroupResource{Resource: "nodes"}, schema.GroupResource{Resource: "pods"}
	for _, c := range []store.Change{{GR: nodes, RV: 3}, {GR: nodes, RV: 4}, {GR: pods, RV: 5}} {
		s.Observe(c)
	}
	s.Open()
	_, a := post(t, srv, `{"scheduler":"a","resourceVersion":"0","wait":true}`)
	want := map[string]string{"nodes": "4", "pods": "5"}
	if a.ResourceVersion != "5" || !maps.Equal(a.Latest, want) {
		t.Fatalf("answer %+v, want resourceVersion 5, latest %v", a, want)
	}
}
