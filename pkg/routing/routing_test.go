package routing_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/go-openapi/errors"
	"github.com/go-openapi/loads"
	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/spec"
	"github.com/go-openapi/strfmt"

	"github.com/batkube/batkube/pkg/endpoint"
	"github.com/batkube/batkube/pkg/routing"
)

var (
	objectTypes = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	patchTypes  = []string{"application/json-patch+json", "application/merge-patch+json"}
	yamlOnly    = []string{"application/yaml"}
)

// table is a small operation table with what makes routing tricky:
// literal segments against parameters at the same place, a branch that
// only matches by backtracking, trailing slashes, parameters named
// differently at the same place, the same path for several methods.
var table = []endpoint.Operation{
	{ID: "getAPIVersions", Method: "GET", Path: "/api/", Consumes: objectTypes, Produces: objectTypes},
	{ID: "getCoreV1APIResources", Method: "GET", Path: "/api/v1/", Consumes: objectTypes, Produces: objectTypes},
	{ID: "readNamespace", Method: "GET", Path: "/api/v1/namespaces/{name}", Consumes: objectTypes, Produces: objectTypes},
	{ID: "deleteNamespace", Method: "DELETE", Path: "/api/v1/namespaces/{name}", Consumes: objectTypes, Produces: objectTypes},
	{ID: "listPods", Method: "GET", Path: "/api/v1/namespaces/{namespace}/pods", Consumes: objectTypes, Produces: objectTypes},
	{ID: "createPod", Method: "POST", Path: "/api/v1/namespaces/{namespace}/pods", Consumes: objectTypes, Produces: objectTypes},
	{ID: "readPod", Method: "GET", Path: "/api/v1/namespaces/{namespace}/pods/{name}", Consumes: objectTypes, Produces: objectTypes},
	{ID: "patchPod", Method: "PATCH", Path: "/api/v1/namespaces/{namespace}/pods/{name}", Consumes: patchTypes, Produces: objectTypes},
	{ID: "readPodLog", Method: "GET", Path: "/api/v1/namespaces/{namespace}/pods/{name}/log", Consumes: objectTypes, Produces: yamlOnly},
	{ID: "proxyPodWithPath", Method: "GET", Path: "/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}", Consumes: objectTypes, Produces: objectTypes},
	{ID: "readNodeStatus", Method: "GET", Path: "/api/v1/nodes/{name}/status", Consumes: objectTypes, Produces: objectTypes},
	{ID: "readAnyStatus", Method: "GET", Path: "/api/v1/{resource}/{name}/status", Consumes: objectTypes, Produces: objectTypes},
	{ID: "readAnyScale", Method: "GET", Path: "/api/v1/{resource}/{name}/scale", Consumes: objectTypes, Produces: objectTypes},
	{ID: "watchPods", Method: "GET", Path: "/api/v1/watch/namespaces/{namespace}/pods", Consumes: objectTypes, Produces: objectTypes},
	{ID: "getLogs", Method: "GET", Path: "/logs/", Consumes: objectTypes, Produces: objectTypes},
	{ID: "logFileHandler", Method: "GET", Path: "/logs/{logpath}", Consumes: objectTypes, Produces: objectTypes},
	{ID: "noMediaTypes", Method: "PUT", Path: "/bare/{name}"},
	{ID: "colonLiteral", Method: "GET", Path: "/x/a:b", Consumes: objectTypes, Produces: objectTypes},
}

// requests are paths to route with every method.
var requests = []string{
	"/api", "/api/", "/api/v1", "/api/v1/", "//api//v1//", "/api/v1/namespaces",
	"/api/v1/namespaces/default", "/api/v1/namespaces/default/", "/api/v1/namespaces/pods",
	"/api/v1/namespaces/default/pods", "/api/v1/namespaces/default/pods/p1", "/api/v1/namespaces/default/pods/p1/log",
	"/api/v1/namespaces/default/pods/p1/log/more", "/api/v1/namespaces/default/pods/p1/proxy/a%2Fb",
	"/api/v1/namespaces/default/pods/p1/proxy/a/b", "/api/v1/namespaces/default/pods/p1/../p2",
	"/api/v1/namespaces/a%20b/pods/p%3A1", "/api/v1/namespaces/ns:1/pods/p:1", "/api/v1/namespaces/%zz/pods",
	"/api/v1/nodes/n1/status", "/api/v1/nodes/n1/scale", "/api/v1/nodes/status", "/api/v1/pods/p1/status",
	"/api/v1/watch/namespaces/ns/pods", "/api/v1/watch/namespaces", "/logs", "/logs/", "/logs/kube.log", "/logs/a/b",
	"/bare/x", "/x/a:b", "/x/a%3Ab", "/x/a%3ab", "/", "", "/widgets", "/api/v2",
}

var methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// fakeAPI is a RoutableAPI whose handlers answer their operation's id.
type fakeAPI struct {
	handlers map[string]map[string]http.Handler
	// media type lists asked for, one string each
	askedConsumers, askedProducers []string
}

func newFakeAPI(ops []endpoint.Operation) *fakeAPI {
	api := &fakeAPI{handlers: map[string]map[string]http.Handler{}}
	for _, op := range ops {
		if api.handlers[op.Method] == nil {
			api.handlers[op.Method] = map[string]http.Handler{}
		}
		id := op.ID
		api.handlers[op.Method][routing.Pattern(op.Path)] = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, id)
		})
	}
	return api
}

func (a *fakeAPI) HandlerFor(method, path string) (http.Handler, bool) {
	h, ok := a.handlers[strings.ToUpper(method)][path]
	return h, ok
}

func (a *fakeAPI) ServeErrorFor(string) func(http.ResponseWriter, *http.Request, error) {
	return errors.ServeError
}

func (a *fakeAPI) ConsumersFor(types []string) map[string]runtime.Consumer {
	a.askedConsumers = append(a.askedConsumers, strings.Join(types, ","))
	return jsonFor(types, runtime.JSONConsumer())
}

func (a *fakeAPI) ProducersFor(types []string) map[string]runtime.Producer {
	a.askedProducers = append(a.askedProducers, strings.Join(types, ","))
	return jsonFor(types, runtime.JSONProducer())
}

// jsonFor maps every media type to codec.
func jsonFor[C any](types []string, codec C) map[string]C {
	m := map[string]C{}
	for _, t := range types {
		m[t] = codec
	}
	return m
}

func (a *fakeAPI) AuthenticatorsFor(map[string]spec.SecurityScheme) map[string]runtime.Authenticator {
	return nil
}
func (a *fakeAPI) Authorizer() runtime.Authorizer { return nil }
func (a *fakeAPI) Formats() strfmt.Registry       { return strfmt.Default }
func (a *fakeAPI) DefaultProduces() string        { return "application/json" }
func (a *fakeAPI) DefaultConsumes() string        { return "application/json" }

// specOf writes the table as the swagger document go-openapi's router is
// built from.
func specOf(t *testing.T, ops []endpoint.Operation) *loads.Document {
	t.Helper()
	paths := map[string]map[string]any{}
	for _, op := range ops {
		item := paths[op.Path]
		if item == nil {
			item = map[string]any{}
			paths[op.Path] = item
		}
		var params []any
		for _, seg := range strings.Split(op.Path, "/") {
			if name, ok := strings.CutPrefix(seg, "{"); ok {
				params = append(params, map[string]any{"name": strings.TrimSuffix(name, "}"), "in": "path", "required": true, "type": "string"})
			}
		}
		o := map[string]any{"operationId": op.ID, "responses": map[string]any{"200": map[string]any{"description": "OK"}}}
		if params != nil {
			o["parameters"] = params
		}
		if op.Consumes != nil {
			o["consumes"] = op.Consumes
		}
		if op.Produces != nil {
			o["produces"] = op.Produces
		}
		item[strings.ToLower(op.Method)] = o
	}
	data, err := json.Marshal(map[string]any{"swagger": "2.0", "info": map[string]any{"title": "t", "version": "1"}, "paths": paths})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := loads.Analyzed(data, "2.0")
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// match is what a lookup found, in a form to compare.
type match struct {
	Found              bool
	Pattern, ID        string
	Params             middleware.RouteParams
	Consumes, Produces []string
	Answer             string // what the route's handler answers
	Others             []string
}

func lookup(r middleware.Router, method, path string) match {
	m := match{Others: r.OtherMethods(method, path)}
	slices.Sort(m.Others)
	route, ok := r.Lookup(method, path)
	if !ok {
		return m
	}
	rec := httptest.NewRecorder()
	route.Handler.ServeHTTP(rec, httptest.NewRequest(method, "/", nil))
	m.Found, m.Pattern, m.ID, m.Params, m.Answer = true, route.PathPattern, route.Operation.ID, route.Params, rec.Body.String()
	// go-openapi lists media types in map order: compare them as sets.
	m.Consumes, m.Produces = slices.Sorted(slices.Values(route.Consumes)), slices.Sorted(slices.Values(route.Produces))
	for _, t := range route.Consumes {
		if route.Consumers[t] == nil {
			m.Consumes = append(m.Consumes, "no consumer for "+t)
		}
	}
	for _, t := range route.Produces {
		if route.Producers[t] == nil {
			m.Produces = append(m.Produces, "no producer for "+t)
		}
	}
	return m
}

// TestSameRoutesAsGoOpenAPI routes every request with every method through
// this package's router and through go-openapi's default router built from
// the equivalent spec: both find the same operation, template, parameters,
// media types and codecs, and the same other methods.
func TestSameRoutesAsGoOpenAPI(t *testing.T) {
	api := newFakeAPI(table)
	ours, err := routing.New(api, table)
	if err != nil {
		t.Fatal(err)
	}
	reference := middleware.DefaultRouter(specOf(t, table), api)
	found := map[string]bool{}
	for _, path := range requests {
		for _, method := range methods {
			got, want := lookup(ours, method, path), lookup(reference, method, path)
			if !equalMatch(got, want) {
				t.Errorf("%s %s: got %+v, want %+v (go-openapi's router)", method, path, got, want)
			}
			if got.Found {
				found[got.ID] = true
			}
		}
	}
	for _, op := range table {
		if !found[op.ID] {
			t.Errorf("no request reached %s: add one", op.ID)
		}
	}
}

func equalMatch(a, b match) bool {
	return a.Found == b.Found && a.Pattern == b.Pattern && a.ID == b.ID && a.Answer == b.Answer &&
		slices.Equal(a.Params, b.Params) && slices.Equal(a.Consumes, b.Consumes) &&
		slices.Equal(a.Produces, b.Produces) && slices.Equal(a.Others, b.Others)
}

func TestLiteralSegmentsWinOverParameters(t *testing.T) {
	r, err := routing.New(newFakeAPI(table), table)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, wantID string
		wantParams   middleware.RouteParams
	}{
		{"/api/v1/nodes/n1/status", "readNodeStatus", middleware.RouteParams{{Name: "name", Value: "n1"}}},
		// the literal branch (nodes) has no scale: back to the parameter
		{"/api/v1/nodes/n1/scale", "readAnyScale", middleware.RouteParams{{Name: "resource", Value: "nodes"}, {Name: "name", Value: "n1"}}},
		{"/api/v1/namespaces/ns/pods/p%2F1/proxy/a%2Fb", "proxyPodWithPath", middleware.RouteParams{{Name: "namespace", Value: "ns"}, {Name: "name", Value: "p/1"}, {Name: "path", Value: "a/b"}}},
		{"/api/v1/namespaces/ns:1", "readNamespace", middleware.RouteParams{{Name: "name", Value: "ns:1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			m, ok := r.Lookup("GET", tt.path)
			if !ok {
				t.Fatalf("got no route, want %s", tt.wantID)
			}
			if m.Operation.ID != tt.wantID || !slices.Equal(m.Params, tt.wantParams) {
				t.Errorf("got %s %v, want %s %v", m.Operation.ID, m.Params, tt.wantID, tt.wantParams)
			}
		})
	}
}

func TestCodecsAskedOncePerMediaTypeList(t *testing.T) {
	api := newFakeAPI(table)
	if _, err := routing.New(api, table); err != nil {
		t.Fatal(err)
	}
	for kind, asked := range map[string][]string{"consumers": api.askedConsumers, "producers": api.askedProducers} {
		seen := map[string]bool{}
		for _, list := range asked {
			if seen[list] {
				t.Errorf("%s of %q asked more than once", kind, list)
			}
			seen[list] = true
		}
		if want := "application/json,application/yaml,application/vnd.kubernetes.protobuf"; !seen[want] {
			t.Errorf("got %s lists %q, want %q among them", kind, asked, want)
		}
	}
}

func TestNewRejectsBadTables(t *testing.T) {
	pod := endpoint.Operation{ID: "readPod", Method: "GET", Path: "/api/v1/namespaces/{namespace}/pods/{name}"}
	tests := []struct {
		name    string
		ops     []endpoint.Operation
		handled []endpoint.Operation // operations the API has handlers for (default: ops)
		want    string
	}{
		{"empty", nil, nil, "no operation"},
		{"no handler", []endpoint.Operation{pod}, []endpoint.Operation{}, "no handler for GET /api/v1/namespaces/{namespace}/pods/{name}"},
		{"same route", []endpoint.Operation{pod, {ID: "other", Method: "GET", Path: "/api/v1/namespaces/{ns}/pods/{n}/"}}, nil, "readPod and other have the same route"},
		{"composite parameter", []endpoint.Operation{{ID: "c", Method: "GET", Path: "/files/{name}.{ext}"}}, nil, "not a whole path segment"},
		{"empty parameter", []endpoint.Operation{{ID: "c", Method: "GET", Path: "/files/{}"}}, nil, "not a whole path segment"},
		{"repeated parameter", []endpoint.Operation{{ID: "c", Method: "GET", Path: "/a/{x}/b/{x}"}}, nil, `parameter "x" appears twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			handled := tt.handled
			if handled == nil {
				handled = tt.ops
			}
			_, err := routing.New(newFakeAPI(handled), tt.ops)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestHandler serves requests through Handler: a routed request reaches
// its operation's handler through the builder's middleware, an unknown
// path is a 404 and a known path with another method a 405, as go-openapi
// answers them.
func TestHandler(t *testing.T) {
	api := newFakeAPI(table)
	r, err := routing.New(api, table)
	if err != nil {
		t.Fatal(err)
	}
	var built int
	h := routing.Handler(api, r, func(next http.Handler) http.Handler {
		built++
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if middleware.MatchedRouteFrom(req) == nil {
				t.Errorf("%s %s: the builder's middleware got no matched route", req.Method, req.URL)
			}
			next.ServeHTTP(w, req)
		})
	})
	if built != 1 {
		t.Errorf("builder called %d times, want once", built)
	}
	tests := []struct {
		method, path string
		wantCode     int
		wantBody     string
	}{
		{"GET", "/api/v1/namespaces/ns/pods/p1", http.StatusOK, "readPod"},
		{"POST", "/api/v1/namespaces/ns/pods", http.StatusOK, "createPod"},
		{"GET", "/api/v1/widgets", http.StatusNotFound, `"path /api/v1/widgets was not found"`},
		{"PUT", "/api/v1/namespaces/ns/pods/p1", http.StatusMethodNotAllowed, "method PUT is not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			if rec.Code != tt.wantCode || !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("got %d %q, want %d with %q", rec.Code, rec.Body.String(), tt.wantCode, tt.wantBody)
			}
		})
	}
	if rec := httptest.NewRecorder(); true {
		h.ServeHTTP(rec, httptest.NewRequest("PUT", "/api/v1/namespaces/ns/pods/p1", nil))
		if allow := rec.Header().Get("Allow"); allow != "GET,PATCH" && allow != "PATCH,GET" {
			t.Errorf("405: got Allow %q, want GET and PATCH", allow)
		}
	}
}
