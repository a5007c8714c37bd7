// Package routing routes requests to the operations of the server generated
// by go-swagger from the operation table generated beside it
// (restapi.Operations), without loading or analysing a spec.
//
// go-swagger's generated API builds its router at start from the spec:
// parsing it, analysing it (go-openapi/analysis) and building go-openapi's
// default router. For the Kubernetes spec (1,229 operations) that was most
// of the server's start-up. Everything that router needs per operation —
// method, path template, operation id, the media types it consumes and
// produces — is known when the code is generated, so cmd/apigen writes it
// into the operation table, and this package builds the same routes from
// it in well under a millisecond: the same matches as go-openapi's router
// (literal segments before parameters, backtracking when a branch ends
// without a route), the same middleware.MatchedRoute handed to the
// generated handlers, the same 404 and 405 answers through the API's
// ServeError. (go-openapi's router, denco, builds a double-array trie that
// took 10 ms at each start for these routes: a map per path segment is as
// quick to search and nearly free to build.)
package routing

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/spec"
	"github.com/go-openapi/strfmt"

	"github.com/batkube/batkube/pkg/endpoint"
)

// Router is a middleware.Router over a table of operations. It is safe for
// concurrent use.
type Router struct {
	byMethod map[string]*node
}

// node is a path segment of the routing tree: the routes below it by their
// next segment, literal or parameter.
type node struct {
	literal map[string]*node
	param   *node  // a {parameter} segment
	route   *route // the route ending here, if any
}

var _ middleware.Router = (*Router)(nil)

// route is what a matched request carries to its operation.
type route struct {
	pattern    string   // the path template, as go-swagger registers it
	paramNames []string // of the template's parameters, in order
	op         *spec.Operation
	handler    http.Handler
	consumes   []string
	consumers  map[string]runtime.Consumer
	produces   []string
	producers  map[string]runtime.Producer
	formats    strfmt.Registry
	authorizer runtime.Authorizer
}

// New builds the router of api's operations: each operation of ops is
// routed to api.HandlerFor(op.Method, its path without trailing slash), which
// must exist. The media types of each operation are its Consumes and
// Produces, plus the API's default ones, as go-openapi's router adds them.
func New(api middleware.RoutableAPI, ops []endpoint.Operation) (*Router, error) {
	if len(ops) == 0 {
		return nil, errors.New("routing: no operation to route")
	}
	formats, authorizer := api.Formats(), api.Authorizer()
	codecs := codecCache{api: api}
	r := &Router{byMethod: map[string]*node{}}
	for i := range ops {
		op := &ops[i]
		method := strings.ToUpper(op.Method)
		pattern := Pattern(op.Path)
		segs, names, err := templateSegments(pattern)
		if err != nil {
			return nil, fmt.Errorf("routing: operation %s: %w", op.ID, err)
		}
		handler, ok := api.HandlerFor(method, pattern)
		if !ok {
			return nil, fmt.Errorf("routing: the API has no handler for %s %s (operation %s)", method, pattern, op.ID)
		}
		root := r.byMethod[method]
		if root == nil {
			root = &node{}
			r.byMethod[method] = root
		}
		n := root.add(segs)
		if n.route != nil {
			return nil, fmt.Errorf("routing: operations %s and %s have the same route %s %s", n.route.op.ID, op.ID, method, pattern)
		}
		consumes := withDefault(op.Consumes, api.DefaultConsumes())
		produces := withDefault(op.Produces, api.DefaultProduces())
		n.route = &route{
			pattern:    pattern,
			paramNames: names,
			op:         &spec.Operation{OperationProps: spec.OperationProps{ID: op.ID, Consumes: op.Consumes, Produces: op.Produces}},
			handler:    handler,
			consumes:   consumes,
			consumers:  codecs.consumers(consumes),
			produces:   produces,
			producers:  codecs.producers(produces),
			formats:    formats,
			authorizer: authorizer,
		}
	}
	return r, nil
}

// paramSegment stands for a parameter in the segments of a template.
const paramSegment = "{}"

// add returns the node of a template's segments, creating it if needed.
func (n *node) add(segs []string) *node {
	for _, s := range segs {
		if s == paramSegment {
			if n.param == nil {
				n.param = &node{}
			}
			n = n.param
			continue
		}
		next := n.literal[s]
		if next == nil {
			if n.literal == nil {
				n.literal = map[string]*node{}
			}
			next = &node{}
			n.literal[s] = next
		}
		n = next
	}
	return n
}

// match finds the route of a request's segments below n, literal segments
// first; values collects the parameters' values.
func (n *node) match(segs []string, values []string) (*route, []string) {
	if len(segs) == 0 {
		return n.route, values
	}
	if next := n.literal[segs[0]]; next != nil {
		if rt, v := next.match(segs[1:], values); rt != nil {
			return rt, v
		}
	}
	if n.param != nil {
		return n.param.match(segs[1:], append(values, segs[0]))
	}
	return nil, nil
}

// Handler returns the generated API's handler over router, as go-swagger's
// generated Serve builds it (without its /swagger.json and /docs pages,
// which the real API server does not have): the router, then builder's
// middleware (nil: none) around the operation executor. It is meant for
// the generated API's Middleware hook.
func Handler(api middleware.RoutableAPI, router *Router, builder middleware.Builder) http.Handler {
	if builder == nil {
		builder = middleware.PassthroughBuilder
	}
	ctx := middleware.NewRoutableContextWithAnalyzedSpec(nil, nil, api, router)
	return middleware.NewRouter(ctx, builder(middleware.NewOperationExecutor(ctx)))
}

// Lookup finds the route of a request, as go-openapi's default router does:
// the escaped path, cleaned, literal colons escaped, path parameters
// unescaped.
func (r *Router) Lookup(method, escapedPath string) (*middleware.MatchedRoute, bool) {
	root, ok := r.byMethod[strings.ToUpper(method)]
	if !ok {
		return nil, false
	}
	rt, values := root.match(pathSegments(escapedPath), nil)
	if rt == nil {
		return nil, false
	}
	m := &middleware.MatchedRoute{}
	if len(values) > 0 {
		m.Params = make(middleware.RouteParams, len(values))
		for i, raw := range values {
			v, err := url.PathUnescape(raw)
			if err != nil {
				v = raw // as go-openapi's router: kept as sent
			}
			m.Params[i] = middleware.RouteParam{Name: rt.paramNames[i], Value: v}
		}
	}
	m.PathPattern = rt.pattern
	m.Operation = rt.op
	m.Handler = rt.handler
	m.Consumes, m.Consumers = rt.consumes, rt.consumers
	m.Produces, m.Producers = rt.produces, rt.producers
	m.Formats, m.Authorizer = rt.formats, rt.authorizer
	return m, true
}

// OtherMethods returns the methods other than method that route path (for
// 405 answers).
func (r *Router) OtherMethods(method, escapedPath string) []string {
	method = strings.ToUpper(method)
	segs := pathSegments(escapedPath)
	var others []string
	for m, root := range r.byMethod {
		if m == method {
			continue
		}
		if rt, _ := root.match(segs, nil); rt != nil {
			others = append(others, m)
		}
	}
	return others
}

// Pattern is a spec path as go-swagger registers its handler: without a
// trailing slash ("/api/v1/" is "/api/v1"), "/" for the root.
func Pattern(specPath string) string {
	if p := strings.TrimRight(specPath, "/"); p != "" {
		return p
	}
	return "/"
}

// pathSegments splits a request's escaped path as go-openapi's router
// reads it: cleaned (no empty segment, no trailing slash, dot segments
// resolved), literal colons escaped.
func pathSegments(escapedPath string) []string {
	p := path.Clean(strings.ReplaceAll(escapedPath, ":", "%3A"))
	if p == "/" || p == "." {
		return nil
	}
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}

// templateSegments splits a path template into its segments, each
// parameter as paramSegment, and returns the parameters' names. Every
// parameter must be a whole path segment (go-openapi's composite
// parameters, "{a}.{b}", are not supported; the Kubernetes spec has none).
func templateSegments(pattern string) (segs, names []string, err error) {
	segs = pathSegments(pattern)
	for i, s := range segs {
		if !strings.ContainsAny(s, "{}") {
			continue
		}
		name, ok := strings.CutPrefix(s, "{")
		if name, ok = strings.CutSuffix(name, "}"); !ok || name == "" || strings.ContainsAny(name, "{}") {
			return nil, nil, fmt.Errorf("path %s: parameter %q is not a whole path segment", pattern, s)
		}
		if slices.Contains(names, name) {
			return nil, nil, fmt.Errorf("path %s: parameter %q appears twice", pattern, name)
		}
		segs[i], names = paramSegment, append(names, name)
	}
	return segs, names, nil
}

// withDefault returns types with def appended when it is not among them
// (case-insensitively).
func withDefault(types []string, def string) []string {
	if def == "" {
		return types
	}
	for _, t := range types {
		if strings.EqualFold(t, def) {
			return types
		}
	}
	return append(types[:len(types):len(types)], def)
}

// codecCache asks the API for the consumers and producers of each distinct
// list of media types once: the operations share a handful of lists.
type codecCache struct {
	api  middleware.RoutableAPI
	cons map[string]map[string]runtime.Consumer
	prod map[string]map[string]runtime.Producer
}

func (c *codecCache) consumers(types []string) map[string]runtime.Consumer {
	return cachedCodecs(&c.cons, types, c.api.ConsumersFor)
}

func (c *codecCache) producers(types []string) map[string]runtime.Producer {
	return cachedCodecs(&c.prod, types, c.api.ProducersFor)
}

// cachedCodecs returns the codecs of a list of media types from cache,
// building them with build the first time the list is asked for.
func cachedCodecs[C any](cache *map[string]map[string]C, types []string, build func([]string) map[string]C) map[string]C {
	key := strings.Join(types, ",")
	if m, ok := (*cache)[key]; ok {
		return m
	}
	if *cache == nil {
		*cache = map[string]map[string]C{}
	}
	m := build(bare(types))
	(*cache)[key] = m
	return m
}

// bare strips the parameters of media types: the API's codecs are keyed by
// the bare type.
func bare(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i], _, _ = strings.Cut(t, ";")
	}
	return out
}
