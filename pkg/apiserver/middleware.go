package apiserver

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/batkube/batkube/pkg/metrics"
)

type acceptKey struct{}

// originalAccept returns the Accept header the client sent: Wrap replaces it
// before the generated router, whose own negotiation knows nothing of the
// Kubernetes media type parameters.
func originalAccept(r *http.Request) string {
	if v, ok := r.Context().Value(acceptKey{}).(string); ok {
		return v
	}
	return r.Header.Get("Accept")
}

// healthPaths answer "ok" like the real server's health checks.
var healthPaths = []string{"/healthz", "/livez", "/readyz"}

// Wrap returns the outer handler: request metrics, panic recovery, request
// logging, bearer token check, health checks, the non-resource paths, the
// fast path of the hot operations (fastpath.go), and the generated router
// behind them. Every request, on the fast path or not, goes through the
// same outer layers.
func (s *Server) Wrap(router http.Handler) http.Handler {
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, p := range healthPaths {
			if r.URL.Path == p || strings.HasPrefix(r.URL.Path, p+"/") {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.Header().Set("X-Content-Type-Options", "nosniff")
				_, _ = w.Write([]byte("ok"))
				return
			}
		}
		if s.opts.NonResource != nil && s.opts.NonResource.Handles(r.URL.Path) {
			s.opts.NonResource.ServeHTTP(w, r)
			return
		}
		if s.serveFast(w, r) || s.serveCustom(w, r) {
			return
		}
		r2 := r.WithContext(context.WithValue(r.Context(), acceptKey{}, r.Header.Get("Accept")))
		r2.Header = r.Header.Clone()
		r2.Header.Set("Accept", mediaJSON)
		if (r.Method == http.MethodPost || r.Method == http.MethodPut) && r.Header.Get("Content-Type") == "" {
			// The real server reads a body without a media type as its
			// first one, JSON (kubectl create --raw sends none).
			r2.Header.Set("Content-Type", mediaJSON)
		}
		router.ServeHTTP(w, r2)
	})
	h = s.authenticate(h)
	h = s.logRequests(h)
	h = s.recoverPanics(h)
	if s.opts.Metrics != nil {
		h = s.opts.Metrics.Instrument(h)
	}
	return s.countRequests(h)
}

// countRequests counts the requests other than watches that are in
// progress and those finished (RequestCounts).
func (s *Server) countRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWatchRequest(r) {
			next.ServeHTTP(w, r)
			return
		}
		s.requestsInFlight.Add(1)
		p := &parking{inFlight: &s.requestsInFlight}
		defer func() {
			p.unpark()
			s.requestsFinished.Add(1)
			s.requestsInFlight.Add(-1)
		}()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), parkingKey{}, p)))
	})
}

// parking takes a request out of those in progress while it waits parked
// (ParkRequest).
type parking struct {
	inFlight *atomic.Int64
	parked   atomic.Bool
}

type parkingKey struct{}

func (p *parking) park() {
	if p.parked.CompareAndSwap(false, true) {
		p.inFlight.Add(-1)
	}
}

func (p *parking) unpark() {
	if p.parked.CompareAndSwap(true, false) {
		p.inFlight.Add(1)
	}
}

// ParkRequest returns, for a request in progress, functions that take it
// out of RequestCounts' requests in progress (park) and put it back
// (unpark): a long wait on the simulated clock (package timeservice) is
// not work in progress while its timer is pending, which the broker knows
// of. A request still parked when it ends is unparked then. Requests that
// are not counted (watches) get functions that do nothing.
func (s *Server) ParkRequest(r *http.Request) (park, unpark func()) {
	p, ok := r.Context().Value(parkingKey{}).(*parking)
	if !ok {
		return func() {}, func() {}
	}
	return p.park, p.unpark
}

// isWatchRequest: ?watch=true (or 1), or a legacy /watch/ path. The
// query is parsed only when it names watch (this runs for every request).
func isWatchRequest(r *http.Request) bool {
	if strings.Contains(r.URL.RawQuery, "watch=") {
		if v := r.URL.Query().Get("watch"); v == "true" || v == "1" {
			return true
		}
	}
	return strings.Contains(r.URL.Path, "/watch/")
}

// RequestCounts returns the number of requests other than watches in
// progress and the number finished since the server started: a client
// that waits for none of its requests, and whose requests have all been
// answered, has nothing in flight here (see package settle/controllers).
func (s *Server) RequestCounts() (inFlight int64, finished uint64) {
	// In flight first: a request that finishes between the two reads
	// (finished counted, then in flight decremented) is then seen in
	// flight, never as neither.
	inFlight = s.requestsInFlight.Load()
	return inFlight, s.requestsFinished.Load()
}

func (s *Server) authenticate(next http.Handler) http.Handler {
	if s.opts.BearerToken == "" {
		return next
	}
	want := []byte("Bearer " + s.opts.BearerToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			s.writeError(w, r, apierrors.NewUnauthorized("Unauthorized"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) logRequests(next http.Handler) http.Handler {
	if s.opts.Verbosity < 2 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &metrics.StatusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		s.log.Info("request", "method", r.Method, "uri", r.URL.RequestURI(), "code", rec.Code,
			"duration", time.Since(start), "accept", r.Header.Get("Accept"), "userAgent", r.UserAgent())
	})
}

// recoverPanics turns a panic in a handler into a 500 Status and a log line,
// so that no request brings the server down.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &metrics.StatusRecorder{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil || v == http.ErrAbortHandler {
				if v != nil {
					panic(v)
				}
				return
			}
			s.log.Error("panic serving a request", "method", r.Method, "uri", r.URL.RequestURI(), "panic", v)
			if rec.Code == 0 {
				s.writeError(rec, r, apierrors.NewInternalError(fmt.Errorf("%v", v)))
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// NonResourceHandlers tries each handler in turn.
type NonResourceHandlers []NonResourceHandler

// Handles reports whether one of the handlers serves path.
func (hs NonResourceHandlers) Handles(path string) bool {
	for _, h := range hs {
		if h.Handles(path) {
			return true
		}
	}
	return false
}

func (hs NonResourceHandlers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for _, h := range hs {
		if h.Handles(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
	}
	http.NotFound(w, r)
}
