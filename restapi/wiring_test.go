package restapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/batkube/batkube/pkg/endpoint"
)

// recorder is a fake endpoint.Handler that records what the wiring hands it.
type recorder struct {
	protobuf *protobuf.Serializer

	mu     sync.Mutex
	op     *endpoint.Operation
	args   endpoint.Args
	errors int
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	scheme := k8sruntime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatalf("building the scheme: %v", err)
	}
	return &recorder{protobuf: protobuf.NewSerializer(scheme, scheme)}
}

func (r *recorder) Serve(op *endpoint.Operation, args endpoint.Args) middleware.Responder {
	r.mu.Lock()
	r.op, r.args = op, args
	r.mu.Unlock()
	return middleware.ResponderFunc(func(w http.ResponseWriter, _ runtime.Producer) { w.WriteHeader(http.StatusOK) })
}

func (r *recorder) ServeError(w http.ResponseWriter, _ *http.Request, _ error) {
	r.mu.Lock()
	r.errors++
	r.mu.Unlock()
	w.WriteHeader(http.StatusTeapot)
}

// last returns what the last served operation received, and resets it.
func (r *recorder) last() (*endpoint.Operation, endpoint.Args, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op, args, errs := r.op, r.args, r.errors
	r.op, r.args, r.errors = nil, endpoint.Args{}, 0
	return op, args, errs
}

func (r *recorder) Consumers() map[string]runtime.Consumer {
	jsonc := runtime.JSONConsumer()
	raw := runtime.ConsumerFunc(func(body io.Reader, target any) error {
		data, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		patch, ok := target.(*endpoint.PatchBody)
		if !ok {
			return fmt.Errorf("a patch body bound to %T", target)
		}
		*patch = data
		return nil
	})
	pb := runtime.ConsumerFunc(func(body io.Reader, target any) error {
		data, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		into, ok := target.(k8sruntime.Object)
		if !ok {
			return fmt.Errorf("a protobuf body bound to %T", target)
		}
		_, _, err = r.protobuf.Decode(data, nil, into)
		return err
	})
	return map[string]runtime.Consumer{
		"application/json":                       jsonc,
		"application/yaml":                       jsonc,
		"application/vnd.kubernetes.protobuf":    pb,
		"application/json-patch+json":            raw,
		"application/merge-patch+json":           raw,
		"application/strategic-merge-patch+json": raw,
		"application/apply-patch+yaml":           raw,
	}
}

func (r *recorder) Wrap(h http.Handler) http.Handler { return h }

func TestEveryOperationIsWired(t *testing.T) {
	data, err := os.ReadFile("../swagger.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, item := range spec.Paths {
		for method := range item {
			if method != "parameters" {
				want++
			}
		}
	}
	if len(Operations) != want {
		t.Errorf("got %d wired operations, want %d (every operation of swagger.json)", len(Operations), want)
	}
	ids := map[string]bool{}
	for _, op := range Operations {
		if ids[op.ID] {
			t.Errorf("operation %s is described twice", op.ID)
		}
		ids[op.ID] = true
		if op.Verb == "" || (op.Verb != endpoint.NonResource && (op.Resource == "" || op.Version == "")) {
			t.Errorf("operation %s: got incomplete descriptor %+v, want a verb, and a resource and version unless non-resource", op.ID, op)
		}
	}
}

func TestOperationDescriptors(t *testing.T) {
	byID := map[string]endpoint.Operation{}
	for _, op := range Operations {
		byID[op.ID] = op
	}
	tests := []endpoint.Operation{
		{ID: "readCoreV1Namespace", Verb: endpoint.Get, Version: "v1", Kind: "Namespace", Resource: "namespaces"},
		{ID: "createCoreV1NamespacedBinding", Verb: endpoint.Create, Version: "v1", Kind: "Binding", Resource: "bindings", Namespaced: true},
		{ID: "createCoreV1NamespacedPodBinding", Verb: endpoint.Create, Version: "v1", Kind: "Binding", Resource: "pods", Subresource: "binding", Namespaced: true},
		{ID: "watchCoreV1NamespacedPodList", Verb: endpoint.WatchList, Version: "v1", Kind: "Pod", Resource: "pods", Namespaced: true},
		{ID: "connectCoreV1GetNodeProxyWithPath", Verb: endpoint.Connect, Version: "v1", Kind: "NodeProxyOptions", Resource: "nodes", Subresource: "proxy"},
		{ID: "patchPolicyV1beta1NamespacedPodDisruptionBudgetStatus", Verb: endpoint.Patch, Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget", Resource: "poddisruptionbudgets", Subresource: "status", Namespaced: true},
		{ID: "listEventsV1beta1EventForAllNamespaces", Verb: endpoint.List, Group: "events.k8s.io", Version: "v1beta1", Kind: "Event", Resource: "events"},
		{ID: "getCodeVersion", Verb: endpoint.NonResource},
		{ID: "getCoreV1APIResources", Verb: endpoint.NonResource, Version: "v1"},
	}
	for _, want := range tests {
		t.Run(want.ID, func(t *testing.T) {
			got, ok := byID[want.ID]
			if !ok {
				t.Fatalf("got no operation %s, want one", want.ID)
			}
			got.Method, got.Path, got.Consumes, got.Produces = "", "", nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestRequestsReachTheirOperation(t *testing.T) {
	rec := newRecorder(t)
	handler, err := Configure(rec)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()

	var pod bytes.Buffer
	if err := rec.protobuf.Encode(&corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "pb"},
	}, &pod); err != nil {
		t.Fatalf("encoding a protobuf pod: %v", err)
	}
	wantPod := func(name string) func(*testing.T, endpoint.Args) {
		return func(t *testing.T, a endpoint.Args) {
			if p, ok := a.Body.(*corev1.Pod); !ok || p.Name != name {
				t.Errorf("got body %#v, want the pod %s", a.Body, name)
			}
		}
	}
	noBody := func(t *testing.T, a endpoint.Args) {
		if a.Body != nil || a.Patch != nil {
			t.Errorf("got body %#v and patch %q, want neither", a.Body, a.Patch)
		}
	}
	tests := []struct {
		name, method, path, contentType, body string
		wantOp, wantNS, wantName              string
		check                                 func(*testing.T, endpoint.Args)
	}{
		{"get", "GET", "/api/v1/namespaces/default/pods/p1", "", "", "readCoreV1NamespacedPod", "default", "p1", noBody},
		{"create JSON", "POST", "/api/v1/namespaces/ns/pods", "application/json", `{"metadata":{"name":"x"}}`, "createCoreV1NamespacedPod", "ns", "", wantPod("x")},
		{"create protobuf", "POST", "/api/v1/namespaces/ns/pods", "application/vnd.kubernetes.protobuf", pod.String(), "createCoreV1NamespacedPod", "ns", "", wantPod("pb")},
		{"binding", "POST", "/api/v1/namespaces/ns/pods/p1/binding", "application/json", `{"target":{"name":"n1"}}`, "createCoreV1NamespacedPodBinding", "ns", "p1", func(t *testing.T, a endpoint.Args) {
			if b, ok := a.Body.(*corev1.Binding); !ok || b.Target.Name != "n1" {
				t.Errorf("got body %#v, want a binding to n1", a.Body)
			}
		}},
		{"strategic merge patch", "PATCH", "/api/v1/namespaces/ns/pods/p1", "application/strategic-merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`, "patchCoreV1NamespacedPod", "ns", "p1", func(t *testing.T, a endpoint.Args) {
			if want := `{"metadata":{"labels":{"a":"b"}}}`; string(a.Patch) != want || a.Body != nil {
				t.Errorf("got patch %q and body %#v, want patch %q and no body", a.Patch, a.Body, want)
			}
		}},
		{"JSON patch of a status", "PATCH", "/api/v1/nodes/n1/status", "application/json-patch+json", `[{"op":"add","path":"/metadata/labels/a","value":"b"}]`, "patchCoreV1NodeStatus", "", "n1", func(t *testing.T, a endpoint.Args) {
			if !strings.HasPrefix(string(a.Patch), `[{"op"`) {
				t.Errorf("got patch %q, want the JSON patch", a.Patch)
			}
		}},
		{"delete without a body", "DELETE", "/api/v1/namespaces/ns/pods/p1", "", "", "deleteCoreV1NamespacedPod", "ns", "p1", noBody},
		{"delete with options", "DELETE", "/api/v1/namespaces/ns/pods/p1", "application/json", `{"gracePeriodSeconds":0}`, "deleteCoreV1NamespacedPod", "ns", "p1", func(t *testing.T, a endpoint.Args) {
			if o, ok := a.Body.(*metav1.DeleteOptions); !ok || o.GracePeriodSeconds == nil || *o.GracePeriodSeconds != 0 {
				t.Errorf("got body %#v, want DeleteOptions with a zero grace period", a.Body)
			}
		}},
		{"legacy group version", "GET", "/apis/policy/v1beta1/poddisruptionbudgets", "", "", "listPolicyV1beta1PodDisruptionBudgetForAllNamespaces", "", "", nil},
		{"namespace", "GET", "/api/v1/namespaces/n1", "", "", "readCoreV1Namespace", "", "n1", nil},
		{"watch path", "GET", "/api/v1/watch/namespaces/ns/pods", "", "", "watchCoreV1NamespacedPodList", "ns", "", nil},
		{"discovery", "GET", "/apis/", "", "", "getAPIVersions", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			op, args, errs := rec.last()
			if resp.StatusCode != http.StatusOK || errs != 0 {
				t.Fatalf("got status %d and %d errors, want 200 and none", resp.StatusCode, errs)
			}
			if op == nil || op.ID != tt.wantOp || args.Namespace != tt.wantNS || args.Name != tt.wantName {
				t.Fatalf("got op %v with namespace %q name %q, want %s with %q %q", op, args.Namespace, args.Name, tt.wantOp, tt.wantNS, tt.wantName)
			}
			if args.Request == nil {
				t.Error("got no request in the arguments, want it")
			}
			if tt.check != nil {
				tt.check(t, args)
			}
		})
	}

	t.Run("unknown path", func(t *testing.T) {
		resp, err := http.Get(srv.URL + "/api/v1/widgets")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		op, _, errs := rec.last()
		if op != nil || errs != 1 {
			t.Errorf("got op %v and %d ServeError calls, want no op and one call", op, errs)
		}
	})
}
