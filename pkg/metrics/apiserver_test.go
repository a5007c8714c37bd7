package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/endpoint"
	"github.com/batkube/batkube/restapi"
)

// operationByID finds an operation of the spec.
func operationByID(t testing.TB, id string) *endpoint.Operation {
	t.Helper()
	for i := range restapi.Operations {
		if restapi.Operations[i].ID == id {
			return &restapi.Operations[i]
		}
	}
	t.Fatalf("no operation %s in the spec", id)
	return nil
}

// TestReportedLabelsFollowKubeAPIServer checks the verbs and scope of
// operations of the spec against what kube-apiserver 1.37 reports for them
// (k8s.io/apiserver's installer and endpoints/metrics): GET of a collection
// is LIST or WATCH, creates are POST, a deletecollection is a DELETE of a
// namespace or the cluster, streaming subresources are CONNECT.
func TestReportedLabelsFollowKubeAPIServer(t *testing.T) {
	for _, c := range []struct {
		id, verb, other, scope string
	}{
		{"listCoreV1NamespacedPod", "LIST", "WATCH", "namespace"},
		{"listCoreV1PodForAllNamespaces", "LIST", "WATCH", "cluster"},
		{"listCoreV1Node", "LIST", "WATCH", "cluster"},
		{"readCoreV1NamespacedPod", "GET", "", "resource"},
		{"readCoreV1Node", "GET", "", "resource"},
		{"readCoreV1NamespacedPodLog", "CONNECT", "", "resource"},
		{"connectCoreV1GetNamespacedPodExec", "CONNECT", "", "resource"},
		{"connectCoreV1GetNodeProxyWithPath", "CONNECT", "", "resource"},
		{"createCoreV1NamespacedPod", "POST", "", "resource"},
		{"createCoreV1NamespacedPodBinding", "POST", "", "resource"},
		{"createCoreV1NamespacedBinding", "POST", "", "resource"},
		{"createCoreV1NamespacedPodEviction", "POST", "", "resource"},
		{"createAuthenticationV1TokenReview", "POST", "", "resource"},
		{"replaceCoreV1NamespacedPodStatus", "PUT", "", "resource"},
		{"patchCoreV1NamespacedPod", "PATCH", "APPLY", "resource"},
		{"deleteCoreV1NamespacedPod", "DELETE", "", "resource"},
		{"deleteCoreV1CollectionNamespacedPod", "DELETE", "", "namespace"},
		{"deleteCoreV1CollectionNode", "DELETE", "", "cluster"},
		{"watchCoreV1NamespacedPodList", "WATCH", "", "namespace"},
		{"watchCoreV1NamespacedPod", "WATCH", "", "resource"},
	} {
		op := operationByID(t, c.id)
		o := newOperation(nil, op)
		if o.verbs != [2]string{c.verb, c.other} || o.scope != c.scope {
			t.Errorf("%s: verbs %q scope %q, want [%q %q] scope %q", c.id, o.verbs, o.scope, c.verb, c.other, c.scope)
		}
	}
}

// TestInstrumentCountsRoutedRequests serves requests through Instrument with
// a handler that routes some of them, as pkg/apiserver does, behind a
// writer that wraps the instrumented one: routed requests are counted with
// their code (an implicit 200 too), and requests never routed are not.
func TestInstrumentCountsRoutedRequests(t *testing.T) {
	reg := NewRegistry()
	m, err := NewAPIServer(reg, restapi.Operations)
	if err != nil {
		t.Fatal(err)
	}
	create := operationByID(t, "createCoreV1NamespacedPod")
	get := operationByID(t, "readCoreV1NamespacedPod")
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/create":
			RequestOf(w).Route(create)
			w.WriteHeader(http.StatusCreated)
		case "/conflict":
			RequestOf(w).Route(create)
			w.WriteHeader(http.StatusConflict)
		case "/get":
			RequestOf(w).Route(get)
			_, _ = w.Write([]byte("{}"))
		default: // discovery, health checks...
			_, _ = w.Write([]byte("ok"))
		}
	})
	// A writer between the instrumented one and the handler, as the panic
	// recovery's status recorder is.
	h := m.Instrument(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(&unwrapper{w}, r)
	}))
	for _, path := range []string{"/create", "/create", "/conflict", "/get", "/healthz", "/create?dryRun=All"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	f := scrape(t, reg)
	pods := func(verb, scope, code, dry string) map[string]string {
		return map[string]string{"verb": verb, "dry_run": dry, "group": "", "version": "v1", "resource": "pods", "subresource": "",
			"scope": scope, "component": "apiserver", "code": code}
	}
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{pods("POST", "resource", "201", ""), 2},
		{pods("POST", "resource", "409", ""), 1},
		{pods("GET", "resource", "200", ""), 1},
		{pods("POST", "resource", "201", "All"), 1},
	} {
		if got := f.Sum("apiserver_request_total", c.labels); got != c.want {
			t.Errorf("apiserver_request_total%v = %g, want %g", c.labels, got, c.want)
		}
	}
	if got := f.Sum("apiserver_request_total", nil); got != 5 {
		t.Errorf("%g requests counted, want 5 (the health check is not a resource request)", got)
	}
	if h, _ := f.Histogram("apiserver_request_duration_seconds", nil); h.Count != 5 {
		t.Errorf("%g requests timed, want 5", h.Count)
	}
}

// TestInstrumentCountsCustomResources: a custom resource's requests are
// routed to an operation made per request (custom resources are not in the
// spec), and counted as kube-apiserver counts them: one series per verb,
// resource, subresource and scope, whatever the request's operation value.
func TestInstrumentCountsCustomResources(t *testing.T) {
	reg := NewRegistry()
	m, err := NewAPIServer(reg, restapi.Operations)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Instrument(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := &endpoint.Operation{Method: r.Method, Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads",
			Kind: "Workload", Namespaced: true}
		switch r.URL.Path {
		case "/status":
			op.Verb, op.Subresource = endpoint.Patch, "status"
		case "/list":
			op.Verb = endpoint.List
		}
		RequestOf(w).Route(op)
	}))
	apply := httptest.NewRequest(http.MethodPatch, "/status", nil)
	apply.Header.Set("Content-Type", "application/apply-patch+yaml")
	for _, r := range []*http.Request{apply, apply.Clone(apply.Context()), httptest.NewRequest(http.MethodPatch, "/status", nil),
		httptest.NewRequest(http.MethodGet, "/list", nil)} {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	f := scrape(t, reg)
	workloads := func(verb, subresource, scope string) map[string]string {
		return map[string]string{"verb": verb, "group": "kueue.x-k8s.io", "version": "v1beta2", "resource": "workloads",
			"subresource": subresource, "scope": scope, "code": "200"}
	}
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{workloads("APPLY", "status", "resource"), 2},
		{workloads("PATCH", "status", "resource"), 1},
		{workloads("LIST", "", "namespace"), 1},
	} {
		if got := f.Sum("apiserver_request_total", c.labels); got != c.want {
			t.Errorf("apiserver_request_total%v = %g, want %g", c.labels, got, c.want)
		}
	}
}

// TestUninstrumentedRequests: without Instrument, the hooks find nothing and
// do nothing.
func TestUninstrumentedRequests(t *testing.T) {
	w := &unwrapper{httptest.NewRecorder()}
	r := RequestOf(w)
	if r != nil {
		t.Fatalf("RequestOf found %v in an uninstrumented writer", r)
	}
	r.Route(operationByID(t, "readCoreV1NamespacedPod"))
	r.Watching()
	watch := r.WatchOpened()
	watch.Sent(3)
	watch.Close(4)
}

type unwrapper struct{ http.ResponseWriter }

func (u *unwrapper) Unwrap() http.ResponseWriter { return u.ResponseWriter }

// BenchmarkInstrument measures what the instrumentation adds to a request
// routed to an operation (allocations included), against the bare handler.
func BenchmarkInstrument(b *testing.B) {
	m, err := NewAPIServer(NewRegistry(), restapi.Operations)
	if err != nil {
		b.Fatal(err)
	}
	get := operationByID(b, "readCoreV1NamespacedPod")
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		RequestOf(w).Route(get)
		w.WriteHeader(http.StatusOK)
	})
	req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/pods/p", nil)
	w := &discard{header: http.Header{}}
	for name, h := range map[string]http.Handler{"bare": handler, "instrumented": m.Instrument(handler)} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		})
	}
}

type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// scrape parses what reg exposes.
func scrape(t *testing.T, reg *Registry) Families {
	t.Helper()
	text, err := reg.Text()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(strings.NewReader(string(text)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}
