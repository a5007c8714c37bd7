// Package server assembles the Batkube API server: the store, the REST
// semantics of pkg/apiserver, discovery and OpenAPI, and the router generated
// by go-swagger.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-openapi/loads"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/utils/clock"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/discovery"
	"github.com/batkube/batkube/pkg/metrics"
	"github.com/batkube/batkube/pkg/openapi"
	"github.com/batkube/batkube/pkg/registry"
	"github.com/batkube/batkube/pkg/scheme"
	"github.com/batkube/batkube/pkg/store"
	"github.com/batkube/batkube/restapi"
	"github.com/batkube/batkube/restapi/operations"
)

// KubernetesVersion is the version of the API Batkube emulates.
var KubernetesVersion = version.Info{
	Major:      "1",
	Minor:      "37",
	GitVersion: "v1.37.1",
	GoVersion:  "go1.26",
	Compiler:   "gc",
	Platform:   "linux/amd64",
}

// Options configure a Server. The zero value of every field is a sensible default.
type Options struct {
	// WatchHistory is the number of past events kept for watches that resume.
	WatchHistory int
	// BearerToken, when set, is required from every client; it stands for an
	// administrator (group system:masters) unless Authenticator knows it.
	BearerToken string
	// Authenticator answers TokenReviews, for the components that delegate
	// the authentication of their own clients to the API server
	// (kube-scheduler's /metrics): apiserver.StaticTokens maps tokens to
	// users. nil: every token but BearerToken is unknown.
	Authenticator apiserver.Authenticator
	// Authorizer answers SubjectAccessReviews, for the same components:
	// apiserver.AllowGroups{apiserver.SystemMasters} allows the
	// administrators only. nil: everything is allowed (Batkube has no RBAC).
	Authorizer apiserver.Authorizer
	// Clock gives object timestamps (simulated time in a simulation).
	Clock clock.PassiveClock
	// Terminator plays the kubelet's part in pod deletion (nil: at once).
	Terminator apiserver.Terminator
	// Admitter may refuse creations (a simulation refuses pods it cannot run).
	Admitter apiserver.Admitter
	// MinWatchTimeout bounds the timeout of watches that ask for none.
	MinWatchTimeout time.Duration
	// BookmarkInterval is how often idle watches get a bookmark.
	BookmarkInterval time.Duration
	// Extensions serve paths of Batkube's own outside the Kubernetes API
	// (a simulation's progress and clock), tried after discovery and OpenAPI.
	Extensions []apiserver.NonResourceHandler
	// Metrics is the registry the server's metrics go to, served at
	// /metrics (nil: a registry of its own); NoMetrics turns the request
	// metrics and /metrics off (benchmarks measure their cost against it).
	Metrics   *metrics.Registry
	NoMetrics bool
	Logger    *slog.Logger
	Verbosity int
}

// Server is a ready-to-serve Batkube API server.
type Server struct {
	Store *store.Store
	API   *apiserver.Server
	// Metrics is served at /metrics (nil with Options.NoMetrics).
	Metrics *metrics.Registry
	handler http.Handler
	log     *slog.Logger
}

// New builds a Server.
func New(opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	sch, err := scheme.New()
	if err != nil {
		return nil, err
	}
	st := store.New(store.Options{HistorySize: opts.WatchHistory, Fields: registry.StoreFields})
	spec, err := routingSpec()
	if err != nil {
		return nil, err
	}
	disc, err := discovery.New(restapi.Operations, KubernetesVersion)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	oapi, err := openapi.New(restapi.SwaggerJSON)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	nonResource := append(apiserver.NonResourceHandlers{disc, oapi}, opts.Extensions...)
	var requestMetrics *metrics.APIServer
	if !opts.NoMetrics {
		if opts.Metrics == nil {
			opts.Metrics = metrics.NewRegistry()
		}
		if requestMetrics, err = metrics.NewAPIServer(opts.Metrics, restapi.Operations); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		nonResource = append(nonResource, opts.Metrics)
	} else {
		opts.Metrics = nil
	}
	api, err := apiserver.New(apiserver.Options{
		Store:            st,
		Scheme:           sch,
		Operations:       restapi.Operations,
		NonResource:      nonResource,
		Metrics:          requestMetrics,
		Clock:            opts.Clock,
		Terminator:       opts.Terminator,
		Admitter:         opts.Admitter,
		BearerToken:      opts.BearerToken,
		Authenticator:    opts.Authenticator,
		Authorizer:       opts.Authorizer,
		Logger:           opts.Logger,
		Verbosity:        opts.Verbosity,
		MinWatchTimeout:  opts.MinWatchTimeout,
		BookmarkInterval: opts.BookmarkInterval,
	})
	if err != nil {
		return nil, err
	}
	router := operations.NewKubernetesAPI(spec)
	return &Server{Store: st, API: api, Metrics: opts.Metrics, handler: restapi.Configure(router, api), log: opts.Logger}, nil
}

// Handler returns the HTTP handler of the whole API.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves the API on l until ctx is cancelled, then shuts down:
// watches send the events written so far and end (so clients see the last
// changes), other requests get a few seconds to finish.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	// Requests outlive ctx until the shutdown is done with them.
	reqCtx, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	s.Store.Close()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	cancelRequests()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("server: shutting down: %w", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// routingSpec returns the spec the generated router is built from: the
// embedded spec without descriptions, with the schemas of the definitions
// left empty, and with only the path parameters of each operation and a bare
// response. The generated binders read parameters and decode bodies into the
// Kubernetes Go types themselves and validate nothing, but the router would
// still parse every parameter and response and expand every body schema into
// a validator it never uses: with all of it, building the router takes about
// nine seconds; without, under one. It is computed once per process and only
// read afterwards. (/openapi/v2 serves the full spec.)
var routingSpec = sync.OnceValues(func() (*loads.Document, error) {
	var doc map[string]any
	if err := json.Unmarshal(restapi.SwaggerJSON, &doc); err != nil {
		return nil, fmt.Errorf("server: reading the embedded spec: %w", err)
	}
	if defs, ok := doc["definitions"].(map[string]any); ok {
		for name := range defs {
			defs[name] = map[string]any{}
		}
	}
	dropDescriptions(doc["paths"])
	dropDescriptions(doc["parameters"])
	shared, _ := doc["parameters"].(map[string]any)
	stripOperations(doc["paths"], shared)
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	spec, err := loads.Analyzed(data, "2.0")
	if err != nil {
		return nil, fmt.Errorf("server: loading the embedded spec: %w", err)
	}
	return spec, nil
})

// stripOperations keeps of each operation what the router reads: its path
// parameters (the generated binders read the others from the request
// themselves) and a bare 200 response (handlers write their own answers).
// Parsing the rest was half the start-up.
func stripOperations(paths any, shared map[string]any) {
	ps, _ := paths.(map[string]any)
	for _, item := range ps {
		ops, _ := item.(map[string]any)
		for key, op := range ops {
			if key == "parameters" {
				ops[key] = pathParameters(op, shared)
				continue
			}
			if o, ok := op.(map[string]any); ok {
				o["responses"] = map[string]any{"200": map[string]any{"description": ""}}
				o["parameters"] = pathParameters(o["parameters"], shared)
			}
		}
	}
}

// pathParameters returns the parameters of a list that are in the path,
// looking up references to the spec's shared parameters.
func pathParameters(v any, shared map[string]any) []any {
	list, _ := v.([]any)
	out := []any{}
	for _, p := range list {
		m, _ := p.(map[string]any)
		def := m
		if ref, ok := m["$ref"].(string); ok {
			def, _ = shared[strings.TrimPrefix(ref, "#/parameters/")].(map[string]any)
		}
		if def != nil && def["in"] == "path" {
			out = append(out, p)
		}
	}
	return out
}

func dropDescriptions(v any) {
	switch t := v.(type) {
	case map[string]any:
		delete(t, "description")
		for _, e := range t {
			dropDescriptions(e)
		}
	case []any:
		for _, e := range t {
			dropDescriptions(e)
		}
	}
}
