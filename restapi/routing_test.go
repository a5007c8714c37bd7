package restapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/go-openapi/loads"
	"github.com/go-openapi/runtime/middleware"

	"github.com/batkube/batkube/pkg/endpoint"
	"github.com/batkube/batkube/pkg/routing"
	"github.com/batkube/batkube/restapi/operations"
)

// requestPath is a path that reaches op, with each parameter's value
// derived from its name ("{namespace}" is "namespace-1"), and the values.
func requestPath(op *endpoint.Operation) (string, map[string]string) {
	values := map[string]string{}
	segs := strings.Split(op.Path, "/")
	for i, s := range segs {
		if name, ok := strings.CutPrefix(s, "{"); ok {
			name = strings.TrimSuffix(name, "}")
			values[name] = name + "-1"
			segs[i] = values[name]
		}
	}
	return strings.Join(segs, "/"), values
}

// routingSpec is the part of swagger.json go-openapi's router reads: each
// operation's id, media types and path parameters (building it from the
// whole spec takes over a minute with the race detector).
func routingSpec(t testing.TB) *loads.Document {
	t.Helper()
	data, err := os.ReadFile("../swagger.json")
	if err != nil {
		t.Fatal(err)
	}
	var full struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Parameters map[string]map[string]any             `json:"parameters"`
	}
	if err := json.Unmarshal(data, &full); err != nil {
		t.Fatal(err)
	}
	paths := map[string]map[string]any{}
	for path, item := range full.Paths {
		out := map[string]any{}
		for key, raw := range item {
			if key == "parameters" {
				var params []map[string]any
				if err := json.Unmarshal(raw, &params); err != nil {
					t.Fatal(err)
				}
				var inPath []any
				for _, p := range params {
					if ref, ok := p["$ref"].(string); ok {
						p = full.Parameters[strings.TrimPrefix(ref, "#/parameters/")]
					}
					if p["in"] == "path" {
						inPath = append(inPath, p)
					}
				}
				out["parameters"] = inPath
				continue
			}
			var op struct {
				ID       string   `json:"operationId"`
				Consumes []string `json:"consumes,omitempty"`
				Produces []string `json:"produces,omitempty"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			out[key] = map[string]any{"operationId": op.ID, "consumes": op.Consumes, "produces": op.Produces,
				"responses": map[string]any{"200": map[string]any{"description": "OK"}}}
		}
		paths[path] = out
	}
	doc, err := json.Marshal(map[string]any{"swagger": "2.0", "info": map[string]any{"title": "Kubernetes", "version": "v"}, "paths": paths})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := loads.Analyzed(doc, "2.0")
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestRoutesAreGoOpenAPIsRoutes routes a request to every operation of the
// generated table, with and without a trailing slash and with every method,
// through the router built from the table (pkg/routing) and through
// go-openapi's default router built from swagger.json, as the server did
// before: both find the same operation, template and parameters, the same
// media types, and the same other methods of the path.
func TestRoutesAreGoOpenAPIsRoutes(t *testing.T) {
	rec := newRecorder(t)
	api := operations.NewKubernetesAPI(nil)
	wireOperations(api, rec)
	api.Init()
	ours, err := routing.New(api, Operations)
	if err != nil {
		t.Fatal(err)
	}
	spec := routingSpec(t)
	refAPI := operations.NewKubernetesAPI(spec)
	wireOperations(refAPI, rec)
	refAPI.Init()
	reference := middleware.DefaultRouter(spec, refAPI)

	lookup := func(r middleware.Router, method, path string) match {
		m := match{Others: slices.Sorted(slices.Values(r.OtherMethods(method, path)))}
		if route, ok := r.Lookup(method, path); ok {
			m.Found, m.Pattern, m.ID, m.Params = true, route.PathPattern, route.Operation.ID, route.Params
			// go-openapi lists media types in map order: compare them as sets.
			m.Consumes, m.Produces = slices.Sorted(slices.Values(route.Consumes)), slices.Sorted(slices.Values(route.Produces))
		}
		return m
	}
	methods := []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}
	for i := range Operations {
		op := &Operations[i]
		path, _ := requestPath(op)
		for _, p := range []string{path, path + "/"} {
			for _, method := range methods {
				got, want := lookup(ours, method, p), lookup(reference, method, p)
				if !got.Found && method == op.Method {
					t.Errorf("%s %s: got no route, want %s", method, p, op.ID)
				}
				if !got.equal(want) {
					t.Errorf("%s %s: got %+v, want %+v (go-openapi's router on swagger.json)", method, p, got, want)
				}
			}
		}
	}
}

// match is what a router found for a request, in a form to compare.
type match struct {
	Found              bool
	Pattern, ID        string
	Params             middleware.RouteParams
	Consumes, Produces []string
	Others             []string
}

func (a match) equal(b match) bool {
	return a.Found == b.Found && a.Pattern == b.Pattern && a.ID == b.ID && slices.Equal(a.Params, b.Params) &&
		slices.Equal(a.Consumes, b.Consumes) && slices.Equal(a.Produces, b.Produces) && slices.Equal(a.Others, b.Others)
}

// TestEveryOperationGetsItsArguments sends one request to every operation
// of the spec through the complete handler and checks that the operation
// is served with the path's namespace, name and path arguments, and with
// the body it was sent.
func TestEveryOperationGetsItsArguments(t *testing.T) {
	rec := newRecorder(t)
	handler, err := Configure(rec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range Operations {
		op := &Operations[i]
		path, values := requestPath(op)
		var body, contentType string
		switch op.Method {
		case http.MethodPost, http.MethodPut:
			body, contentType = `{"metadata":{"name":"from-body"}}`, "application/json"
		case http.MethodPatch:
			body, contentType = `{"metadata":{"labels":{"a":"b"}}}`, "application/merge-patch+json"
		}
		req := httptest.NewRequest(op.Method, path, strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, req)
		got, args, errs := rec.last()
		if w.Code != http.StatusOK || errs != 0 || got != op {
			t.Errorf("%s %s: got status %d, %d errors and operation %v, want 200 and %s", op.Method, path, w.Code, errs, got, op.ID)
			continue
		}
		if args.Namespace != values["namespace"] || args.Name != values["name"] || args.Path != values["path"] {
			t.Errorf("%s %s (%s): got namespace %q, name %q, path %q, want %q, %q, %q", op.Method, path, op.ID,
				args.Namespace, args.Name, args.Path, values["namespace"], values["name"], values["path"])
		}
		if op.Verb == endpoint.Patch && string(args.Patch) != body {
			t.Errorf("%s %s (%s): got patch %q, want %q", op.Method, path, op.ID, args.Patch, body)
		}
		if op.Verb == endpoint.Create || op.Verb == endpoint.Update {
			if obj, ok := args.Body.(interface{ GetName() string }); !ok || obj.GetName() != "from-body" {
				t.Errorf("%s %s (%s): got body %#v, want the object named from-body", op.Method, path, op.ID, args.Body)
			}
		}
	}
}

// BenchmarkLookup routes the requests a scheduler makes most through the
// router built from the table and through go-openapi's router built from
// the spec.
func BenchmarkLookup(b *testing.B) {
	rec := &recorder{}
	api := operations.NewKubernetesAPI(nil)
	wireOperations(api, rec)
	api.Init()
	ours, err := routing.New(api, Operations)
	if err != nil {
		b.Fatal(err)
	}
	spec := routingSpec(b)
	refAPI := operations.NewKubernetesAPI(spec)
	wireOperations(refAPI, rec)
	refAPI.Init()
	requests := []struct{ method, path string }{
		{"GET", "/api/v1/namespaces/default/pods/job-1"},
		{"GET", "/api/v1/pods"},
		{"POST", "/api/v1/namespaces/default/pods/job-1/binding"},
		{"PATCH", "/api/v1/namespaces/default/pods/job-1/status"},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"},
		{"POST", "/apis/events.k8s.io/v1/namespaces/default/events"},
	}
	for _, r := range []struct {
		name   string
		router middleware.Router
	}{{"table", ours}, {"go-openapi", middleware.DefaultRouter(spec, refAPI)}} {
		b.Run(r.name, func(b *testing.B) {
			for b.Loop() {
				for _, req := range requests {
					if _, ok := r.router.Lookup(req.method, req.path); !ok {
						b.Fatalf("%s %s: no route", req.method, req.path)
					}
				}
			}
		})
	}
}
