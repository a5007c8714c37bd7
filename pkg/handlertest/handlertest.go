// Package handlertest serves requests to an http.Handler in memory and
// checks what a handler of the API server's documents (the discovery
// documents, the OpenAPI specs) owes every client: the media type content
// negotiation picks, the paths the handler claims, and revalidation of an
// answer by its ETag. It owns these checks for the tests of such handlers
// and imports only the standard library.
package handlertest

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Get serves h a GET of target with the request headers of header (one
// whose value is "" is not sent) and returns h's answer.
func Get(h http.Handler, target string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Negotiation is a case of content negotiation: a GET of Path with the
// Accept header Accept ("": no Accept header) should be answered with the
// status WantCode and the Content-Type WantType.
type Negotiation struct {
	Name, Path, Accept string
	WantCode           int
	WantType           string
}

// CheckNegotiation serves h each case, in a subtest of t named by the
// case, and checks the status and Content-Type of the answer.
func CheckNegotiation(t *testing.T, h http.Handler, cases []Negotiation) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			rec := Get(h, c.Path, map[string]string{"Accept": c.Accept})
			if rec.Code != c.WantCode {
				t.Errorf("status: got %d, want %d", rec.Code, c.WantCode)
			}
			if ct := rec.Header().Get("Content-Type"); ct != c.WantType {
				t.Errorf("Content-Type: got %q, want %q", ct, c.WantType)
			}
		})
	}
}

// CheckHandles checks, in a subtest of t for each path, that handles (a
// handler's Handles method) claims every path of handled and none of
// unhandled.
func CheckHandles(t *testing.T, handles func(path string) bool, handled, unhandled []string) {
	t.Helper()
	check := func(paths []string, want bool) {
		for _, path := range paths {
			t.Run(path, func(t *testing.T) {
				if got := handles(path); got != want {
					t.Errorf("Handles(%q): got %v, want %v", path, got, want)
				}
			})
		}
	}
	check(handled, true)
	check(unhandled, false)
}

// CheckRevalidation checks that h answers a GET of target with the
// request headers of header with an ETag, that the same GET with that ETag
// in If-None-Match is answered 304 Not Modified without a body, and that
// one with another ETag is answered in full.
func CheckRevalidation(t testing.TB, h http.Handler, target string, header map[string]string) {
	t.Helper()
	first := Get(h, target, header)
	etag := first.Header().Get("ETag")
	if first.Code != http.StatusOK || etag == "" {
		t.Fatalf("first request: got %d with ETag %q, want 200 with an ETag", first.Code, etag)
	}
	again := Get(h, target, with(header, "If-None-Match", etag))
	if again.Code != http.StatusNotModified || again.Body.Len() != 0 {
		t.Errorf("conditional request: got %d with %d bytes, want 304 and no body", again.Code, again.Body.Len())
	}
	stale := Get(h, target, with(header, "If-None-Match", `"stale"`))
	if stale.Code != http.StatusOK {
		t.Errorf("stale ETag: got %d, want 200", stale.Code)
	}
}

// with returns a copy of header with key set to value.
func with(header map[string]string, key, value string) map[string]string {
	out := make(map[string]string, len(header)+1)
	maps.Copy(out, header)
	out[key] = value
	return out
}
