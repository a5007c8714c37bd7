// Package servertest starts a real Batkube API server in-process for tests
// and hands back the client configuration to reach it.
package servertest

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/batkube/batkube/pkg/server"
)

// Server is a running test server.
type Server struct {
	*server.Server
	URL string

	mu       sync.Mutex
	requests []string
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
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.requests = append(ts.requests, r.Method+" "+r.URL.RequestURI())
		ts.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
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

// Requests returns the "METHOD URI" of every request served so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}
