package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDescribe(t *testing.T) {
	tests := []struct {
		method, path, action, kind string
		want                       opInfo
	}{
		{"GET", "/api/v1/namespaces/{name}", "get", "Namespace",
			opInfo{Verb: "Get", Version: "v1", Kind: "Namespace", Resource: "namespaces"}},
		{"GET", "/api/v1/namespaces/{name}/status", "get", "Namespace",
			opInfo{Verb: "Get", Version: "v1", Kind: "Namespace", Resource: "namespaces", Subresource: "status"}},
		{"POST", "/api/v1/namespaces/{namespace}/bindings", "post", "Binding",
			opInfo{Verb: "Create", Version: "v1", Kind: "Binding", Resource: "bindings", Namespaced: true}},
		{"POST", "/api/v1/namespaces/{namespace}/pods/{name}/binding", "post", "Binding",
			opInfo{Verb: "Create", Version: "v1", Kind: "Binding", Resource: "pods", Subresource: "binding", Namespaced: true}},
		{"GET", "/api/v1/watch/namespaces/{namespace}/pods/{name}", "watch", "Pod",
			opInfo{Verb: "Watch", Version: "v1", Kind: "Pod", Resource: "pods", Namespaced: true}},
		{"GET", "/api/v1/watch/namespaces/{namespace}/pods", "watchlist", "Pod",
			opInfo{Verb: "WatchList", Version: "v1", Kind: "Pod", Resource: "pods", Namespaced: true}},
		{"GET", "/api/v1/watch/namespaces", "watchlist", "Namespace",
			opInfo{Verb: "WatchList", Version: "v1", Kind: "Namespace", Resource: "namespaces"}},
		{"GET", "/api/v1/watch/namespaces/{name}", "watch", "Namespace",
			opInfo{Verb: "Watch", Version: "v1", Kind: "Namespace", Resource: "namespaces"}},
		{"GET", "/api/v1/nodes/{name}/proxy/{path}", "connect", "NodeProxyOptions",
			opInfo{Verb: "Connect", Version: "v1", Kind: "NodeProxyOptions", Resource: "nodes", Subresource: "proxy"}},
		{"DELETE", "/apis/apps/v1/namespaces/{namespace}/deployments", "deletecollection", "Deployment",
			opInfo{Verb: "DeleteCollection", Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespaced: true}},
		{"PUT", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", "put", "Scale",
			opInfo{Verb: "Update", Group: "apps", Version: "v1", Kind: "Scale", Resource: "deployments", Subresource: "scale", Namespaced: true}},
		{"GET", "/apis/storage.k8s.io/v1/csinodes", "list", "CSINode",
			opInfo{Verb: "List", Group: "storage.k8s.io", Version: "v1", Kind: "CSINode", Resource: "csinodes"}},
		{"GET", "/apis/storage.k8s.io/v1/", "", "", opInfo{Verb: "NonResource", Group: "storage.k8s.io", Version: "v1"}},
		{"GET", "/apis/storage.k8s.io/", "", "", opInfo{Verb: "NonResource"}},
		{"GET", "/version/", "", "", opInfo{Verb: "NonResource"}},
		{"GET", "/.well-known/openid-configuration/", "", "", opInfo{Verb: "NonResource"}},
		{"GET", "/logs/{logpath}", "", "", opInfo{Verb: "NonResource"}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			op := object{"operationId": "op"}
			if tt.action != "" {
				op["x-kubernetes-action"] = tt.action
			}
			if tt.kind != "" {
				op["x-kubernetes-group-version-kind"] = object{"kind": tt.kind}
			}
			got, err := describe(tt.method, tt.path, op)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.ID, want.Method, want.Path = "op", tt.method, tt.path
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestDescribeNeedsAnOperationID(t *testing.T) {
	if _, err := describe("GET", "/version/", object{}); err == nil {
		t.Error("got no error for an operation without operationId, want one")
	}
}

func TestRoutePath(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/", "/"}, {"/api/", "/api"}, {"/api/v1/pods", "/api/v1/pods"},
	} {
		if got := routePath(tt.in); got != tt.want {
			t.Errorf("routePath(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParamStructFields(t *testing.T) {
	dir := t.TempDir()
	src := `package core_v1

// ReadPodParams contains all the bound params.
type ReadPodParams struct {

	// HTTP Request Object
	HTTPRequest *http.Request ` + "`json:\"-\"`" + `

	/*object name
	  Required: true
	  In: path
	*/
	Name string
	Body corev1.Pod
}

type PatchPodParams struct {
	Body *endpoint.PatchBody
}
`
	if err := os.WriteFile(filepath.Join(dir, "read_pod_parameters.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ps := paramStructs{}
	tests := []struct {
		name string
		want map[string]string
	}{
		{"ReadPod", map[string]string{"HTTPRequest": "*http.Request", "Name": "string", "Body": "corev1.Pod"}},
		{"PatchPod", map[string]string{"Body": "*endpoint.PatchBody"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ps.fields(dir, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Errorf("got fields %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("field %s: got %q, want %q", k, got[k], v)
				}
			}
		})
	}
	if _, err := ps.fields(dir, "Missing"); err == nil {
		t.Error("got no error for a missing params struct, want one")
	}
}

// TestGeneratedWiringIsUpToDate regenerates the wiring from the committed
// spec and generated server and compares it with the committed file.
func TestGeneratedWiringIsUpToDate(t *testing.T) {
	root := filepath.Join("..", "..")
	out := filepath.Join(t.TempDir(), "wiring.go")
	err := runWiring([]string{
		"-spec", filepath.Join(root, "swagger.json"),
		"-restapi", filepath.Join(root, "restapi"),
		"-out", out,
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "restapi", "zz_generated_wiring.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("got a wiring of %d bytes that differs from restapi/zz_generated_wiring.go (%d bytes), want them equal: run regenerate-api.sh", len(got), len(want))
	}
}

func TestMediaTypes(t *testing.T) {
	spec := object{"consumes": []any{"application/json"}}
	tests := []struct {
		name string
		op   object
		want []string
	}{
		{"the operation's own", object{"consumes": []any{"application/yaml", "application/json-patch+json"}}, []string{"application/yaml", "application/json-patch+json"}},
		{"the spec's when it has none", object{}, []string{"application/json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mediaTypes(tt.op, spec, "consumes"); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got := mediaTypes(object{}, object{}, "produces"); got == nil || len(got) != 0 {
		t.Errorf("no media types anywhere: got %#v, want an empty list", got)
	}
}
