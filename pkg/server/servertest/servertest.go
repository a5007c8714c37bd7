// Package servertest starts a real Batkube API server in-process for tests
// and hands back the client configuration to reach it.
package servertest

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/batkube/batkube/pkg/metrics"
	"github.com/batkube/batkube/pkg/server"
)

// Server is a running test server.
type Server struct {
	*server.Server
	URL string

	mu       sync.Mutex
	requests []Request
	// connections counts the client connections accepted.
	connections atomic.Int64
}

// Request is a request the server answered (watches appear when they end).
type Request struct {
	Method, URI string
	Code        int
}

// StartDefault serves a Batkube API with the default options (no token, an
// in-memory store, metrics on) on a loopback port until the test ends.
func StartDefault(t testing.TB) *Server {
	t.Helper()
	return Start(t, server.Options{})
}

// Start serves a new Batkube API on a loopback port until the test ends.
func Start(t testing.TB, opts server.Options) *Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := server.New(opts)
	if err != nil {
		t.Fatalf("starting the server: %v", err)
	}
	ts := &Server{Server: srv}
	h := srv.Handler()
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &metrics.StatusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		ts.mu.Lock()
		ts.requests = append(ts.requests, Request{Method: r.Method, URI: r.URL.RequestURI(), Code: rec.Code})
		ts.mu.Unlock()
	}))
	hs.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			ts.connections.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	ts.URL = hs.URL
	return ts
}

// Config returns a client configuration for JSON clients.
func (s *Server) Config() *rest.Config {
	return &rest.Config{Host: s.URL, QPS: -1}
}

// ProtobufConfig returns a client configuration that speaks protobuf, as
// kube-scheduler and kube-controller-manager do.
func (s *Server) ProtobufConfig() *rest.Config {
	c := s.Config()
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf, */*"
	return c
}

// Clientset returns a client-go clientset that speaks JSON to the server.
func (s *Server) Clientset() *kubernetes.Clientset {
	return kubernetes.NewForConfigOrDie(s.Config()) // fails only on a malformed configuration
}

// ProtobufClientset returns a client-go clientset that speaks protobuf to
// the server, as kube-scheduler does.
func (s *Server) ProtobufClientset() *kubernetes.Clientset {
	return kubernetes.NewForConfigOrDie(s.ProtobufConfig())
}

// Connections returns how many client connections the server accepted.
func (s *Server) Connections() int64 { return s.connections.Load() }

// Requests returns every request answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}
