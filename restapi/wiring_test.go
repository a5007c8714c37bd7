package restapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-openapi/loads"
	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"
	corev1 "k8s.io/api/core/v1"

	"github.com/batkube/batkube/pkg/endpoint"
	"github.com/batkube/batkube/restapi/operations"
)

// recorder is a fake endpoint.Handler that records what the wiring hands it.
type recorder struct {
	mu     sync.Mutex
	op     *endpoint.Operation
	args   endpoint.Args
	errors int
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

func (r *recorder) Consumers() map[string]runtime.Consumer {
	jsonc := runtime.JSONConsumer()
	raw := runtime.ConsumerFunc(func(r io.Reader, target any) error {
		data, err := io.ReadAll(r)
		*target.(*endpoint.PatchBody) = data
		return err
	})
	return map[string]runtime.Consumer{
		"application/json": jsonc, "application/yaml": jsonc, "application/vnd.kubernetes.protobuf": jsonc,
		"application/strategic-merge-patch+json": raw,
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
	for _, op := range Operations {
		if op.Verb == "" || (op.Verb != endpoint.NonResource && (op.Resource == "" || op.Version == "")) {
			t.Errorf("operation %s: incomplete descriptor %+v", op.ID, op)
		}
	}
}

func TestRequestsReachTheirOperation(t *testing.T) {
	spec, err := loads.Embedded(SwaggerJSON, FlatSwaggerJSON)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	srv := httptest.NewServer(Configure(operations.NewKubernetesAPI(spec), rec))
	defer srv.Close()
	tests := []struct {
		method, path, contentType, body string
		wantOp, wantNS, wantName        string
		check                           func(t *testing.T, a endpoint.Args)
	}{
		{"GET", "/api/v1/namespaces/default/pods/p1", "", "", "readCoreV1NamespacedPod", "default", "p1", nil},
		{"POST", "/api/v1/namespaces/ns/pods", "application/json", `{"metadata":{"name":"x"}}`, "createCoreV1NamespacedPod", "ns", "", func(t *testing.T, a endpoint.Args) {
			if p, ok := a.Body.(*corev1.Pod); !ok || p.Name != "x" {
				t.Errorf("body: got %#v, want the pod x", a.Body)
			}
		}},
		{"POST", "/api/v1/namespaces/ns/pods/p1/binding", "application/json", `{"target":{"name":"n1"}}`, "createCoreV1NamespacedPodBinding", "ns", "p1", func(t *testing.T, a endpoint.Args) {
			if b, ok := a.Body.(*corev1.Binding); !ok || b.Target.Name != "n1" {
				t.Errorf("body: got %#v, want a binding to n1", a.Body)
			}
		}},
		{"PATCH", "/api/v1/namespaces/ns/pods/p1", "application/strategic-merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`, "patchCoreV1NamespacedPod", "ns", "p1", func(t *testing.T, a endpoint.Args) {
			if !strings.Contains(string(a.Patch), `"labels"`) {
				t.Errorf("patch: got %q", a.Patch)
			}
		}},
		{"DELETE", "/api/v1/namespaces/ns/pods/p1", "", "", "deleteCoreV1NamespacedPod", "ns", "p1", func(t *testing.T, a endpoint.Args) {
			if a.Body != nil {
				t.Errorf("a delete without a body got body %#v", a.Body)
			}
		}},
		{"GET", "/apis/policy/v1beta1/poddisruptionbudgets", "", "", "listPolicyV1beta1PodDisruptionBudgetForAllNamespaces", "", "", nil},
		{"GET", "/api/v1/namespaces/n1", "", "", "readCoreV1Namespace", "", "n1", nil},
	}
	for _, tt := range tests {
		rec.op = nil
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		if tt.contentType != "" {
			req.Header.Set("Content-Type", tt.contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if rec.op == nil || rec.op.ID != tt.wantOp || rec.args.Namespace != tt.wantNS || rec.args.Name != tt.wantName {
			t.Errorf("%s %s: got op %v args %+v, want %s %s/%s", tt.method, tt.path, rec.op, rec.args, tt.wantOp, tt.wantNS, tt.wantName)
			continue
		}
		if tt.check != nil {
			tt.check(t, rec.args)
		}
	}
	resp, err := http.Get(srv.URL + "/api/v1/widgets")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if rec.errors == 0 {
		t.Error("an unknown path did not reach ServeError")
	}
}
