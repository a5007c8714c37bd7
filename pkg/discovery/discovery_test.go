package discovery

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/batkube/batkube/pkg/handlertest"
)

var testVersion = version.Info{Major: "1", Minor: "37", GitVersion: "v1.37.2", Platform: "linux/amd64"}

func newTestDiscovery(t testing.TB) *Discovery {
	t.Helper()
	d, err := New(testOperations(), testVersion)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return d
}

func TestResourceEntriesMatchTheAPIServer(t *testing.T) {
	d := newTestDiscovery(t)
	tests := []struct {
		group, version, resource string
		want                     metav1.APIResource
	}{
		{"", "v1", "pods", metav1.APIResource{
			Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod",
			Verbs:      []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
			ShortNames: []string{"po"}, Categories: []string{"all"}, StorageVersionHash: "xPOwRZ+Yhw8=",
		}},
		{"", "v1", "pods/binding", metav1.APIResource{Name: "pods/binding", Namespaced: true, Kind: "Binding", Verbs: []string{"create"}}},
		{"", "v1", "pods/eviction", metav1.APIResource{Name: "pods/eviction", Namespaced: true, Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}}},
		{"", "v1", "pods/status", metav1.APIResource{Name: "pods/status", Namespaced: true, Kind: "Pod", Verbs: []string{"get", "patch", "update"}}},
		{"", "v1", "pods/exec", metav1.APIResource{Name: "pods/exec", Namespaced: true, Kind: "PodExecOptions", Verbs: []string{"create", "get"}}},
		{"", "v1", "pods/proxy", metav1.APIResource{Name: "pods/proxy", Namespaced: true, Kind: "PodProxyOptions", Verbs: []string{"create", "delete", "get", "patch", "update"}}},
		{"", "v1", "nodes", metav1.APIResource{
			Name: "nodes", SingularName: "node", Kind: "Node",
			Verbs:      []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
			ShortNames: []string{"no"}, StorageVersionHash: "XwShjMxG9Fs=",
		}},
		{"", "v1", "namespaces/finalize", metav1.APIResource{Name: "namespaces/finalize", Kind: "Namespace", Verbs: []string{"update"}}},
		{"", "v1", "serviceaccounts/token", metav1.APIResource{Name: "serviceaccounts/token", Namespaced: true, Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest", Verbs: []string{"create"}}},
		{"", "v1", "replicationcontrollers/scale", metav1.APIResource{Name: "replicationcontrollers/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}}},
		{"", "v1", "bindings", metav1.APIResource{Name: "bindings", SingularName: "binding", Namespaced: true, Kind: "Binding", Verbs: []string{"create"}}},
		{"", "v1", "componentstatuses", metav1.APIResource{Name: "componentstatuses", SingularName: "componentstatus", Kind: "ComponentStatus", Verbs: []string{"get", "list"}, ShortNames: []string{"cs"}}},
		{"apps", "v1", "deployments", metav1.APIResource{
			Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment",
			Verbs:      []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
			ShortNames: []string{"deploy"}, Categories: []string{"all"}, StorageVersionHash: "8aSe+NMegvE=",
		}},
		{"apps", "v1", "deployments/scale", metav1.APIResource{Name: "deployments/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}}},
		{"events.k8s.io", "v1", "events", metav1.APIResource{
			Name: "events", SingularName: "event", Namespaced: true, Kind: "Event",
			Verbs:      []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
			ShortNames: []string{"ev"}, StorageVersionHash: "r2yiGXH7wu8=",
		}},
		{"apiextensions.k8s.io", "v1", "customresourcedefinitions", metav1.APIResource{
			Name: "customresourcedefinitions", SingularName: "customresourcedefinition", Kind: "CustomResourceDefinition",
			Verbs:      []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
			ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"}, StorageVersionHash: storageVersionHash(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.group+"/"+tt.version+"/"+tt.resource, func(t *testing.T) {
			got, ok := d.Resource(tt.group, tt.version, tt.resource)
			if !ok {
				t.Fatalf("Resource(%q, %q, %q): not found", tt.group, tt.version, tt.resource)
			}
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(tt.want)
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("got %s\nwant %s", gotJSON, wantJSON)
			}
		})
	}
	if _, ok := d.Resource("", "v1", "widgets"); ok {
		t.Errorf("Resource(widgets): got found, want not found")
	}
}

func TestResourceReturnsACopy(t *testing.T) {
	d := newTestDiscovery(t)
	r, _ := d.Resource("", "v1", "pods")
	r.Verbs[0] = "mutated"
	r.ShortNames[0] = "mutated"
	again, _ := d.Resource("", "v1", "pods")
	if again.Verbs[0] != "create" || again.ShortNames[0] != "po" {
		t.Errorf("got %v %v after changing a returned copy, want the original", again.Verbs, again.ShortNames)
	}
}

func TestLegacyDocuments(t *testing.T) {
	d := newTestDiscovery(t)
	tests := []struct {
		path string
		want string // a prefix of the JSON body
	}{
		{"/api", `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"example.com"}]}`},
		{"/api/v1", `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"bindings","singularName":"binding","namespaced":true,"kind":"Binding","verbs":["create"]},`},
		{"/apis", `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"apiregistration.k8s.io","versions":[{"groupVersion":"apiregistration.k8s.io/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apiregistration.k8s.io/v1","version":"v1"}},{"name":"apps",`},
		{"/apis/autoscaling", `{"kind":"APIGroup","apiVersion":"v1","name":"autoscaling","versions":[{"groupVersion":"autoscaling/v2","version":"v2"},{"groupVersion":"autoscaling/v1","version":"v1"}],"preferredVersion":{"groupVersion":"autoscaling/v2","version":"v2"}}`},
		{"/apis/autoscaling/", `{"kind":"APIGroup","apiVersion":"v1","name":"autoscaling"`},
		{"/apis/apps/v1", `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps/v1","resources":[{"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["deploy"],"categories":["all"],"storageVersionHash":"8aSe+NMegvE="},{"name":"deployments/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":["get","patch","update"]},`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := handlertest.Get(d, tt.path, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("status: got %d, want 200", rec.Code)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type: got %q, want application/json", ct)
			}
			if body := rec.Body.String(); !strings.HasPrefix(body, tt.want) {
				t.Errorf("body:\ngot  %s\nwant %s...", body, tt.want)
			}
		})
	}
}

func TestGroupOrderAndPreferredVersions(t *testing.T) {
	d := newTestDiscovery(t)
	var list metav1.APIGroupList
	if err := json.Unmarshal(handlertest.Get(d, "/apis", nil).Body.Bytes(), &list); err != nil {
		t.Fatalf("decoding /apis: %v", err)
	}
	var names, preferred []string
	for _, g := range list.Groups {
		names = append(names, g.Name)
		preferred = append(preferred, g.PreferredVersion.Version)
	}
	wantNames := []string{"apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io", "autoscaling",
		"policy", "admissionregistration.k8s.io", "apiextensions.k8s.io", "coordination.k8s.io"}
	wantPreferred := []string{"v1", "v1", "v1", "v1", "v2", "v1", "v1", "v1", "v1"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("groups: got %v, want %v", names, wantNames)
	}
	if !slices.Equal(preferred, wantPreferred) {
		t.Errorf("preferred versions: got %v, want %v", preferred, wantPreferred)
	}
	coordination := list.Groups[len(list.Groups)-1]
	var versions []string
	for _, v := range coordination.Versions {
		versions = append(versions, v.Version)
	}
	if want := []string{"v1", "v1beta1", "v1alpha2"}; !slices.Equal(versions, want) {
		t.Errorf("coordination versions: got %v, want %v", versions, want)
	}
}

func TestAggregatedDocuments(t *testing.T) {
	d := newTestDiscovery(t)
	accept := map[string]string{"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"}
	rec := handlertest.Get(d, "/apis", accept)
	if ct, want := rec.Header().Get("Content-Type"), "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"; ct != want {
		t.Fatalf("Content-Type: got %q, want %q", ct, want)
	}
	var list apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	if list.Kind != "APIGroupDiscoveryList" || list.APIVersion != "apidiscovery.k8s.io/v2" {
		t.Errorf("type: got %s %s, want apidiscovery.k8s.io/v2 APIGroupDiscoveryList", list.APIVersion, list.Kind)
	}
	var apps *apidiscoveryv2.APIGroupDiscovery
	for i := range list.Items {
		if list.Items[i].Name == "" {
			t.Errorf("/apis lists the core group")
		}
		if list.Items[i].Name == "apps" {
			apps = &list.Items[i]
		}
	}
	if apps == nil {
		t.Fatalf("/apis has no apps group")
	}
	deploy := apps.Versions[0].Resources[0]
	got, _ := json.Marshal(deploy)
	want := `{"resource":"deployments","responseKind":{"group":"","version":"","kind":"Deployment"},"scope":"Namespaced","singularResource":"deployment","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["deploy"],"categories":["all"],` +
		`"subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","patch","update"]},{"subresource":"status","responseKind":{"group":"","version":"","kind":"Deployment"},"verbs":["get","patch","update"]}]}`
	if string(got) != want {
		t.Errorf("deployments:\ngot  %s\nwant %s", got, want)
	}
	if f := apps.Versions[0].Freshness; f != apidiscoveryv2.DiscoveryFreshnessCurrent {
		t.Errorf("freshness: got %q, want Current", f)
	}

	rec = handlertest.Get(d, "/api", accept)
	var core apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(rec.Body.Bytes(), &core); err != nil {
		t.Fatalf("decoding /api: %v", err)
	}
	if len(core.Items) != 1 || core.Items[0].Name != "" || core.Items[0].Versions[0].Version != "v1" {
		t.Errorf("/api: got %+v, want the core group alone at v1", core.Items)
	}
}

func TestProtobufDecodes(t *testing.T) {
	d := newTestDiscovery(t)
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	if err := apidiscoveryv2.AddToScheme(scheme); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	decoder := protobuf.NewSerializer(scheme, scheme)
	tests := []struct {
		path, accept string
		into         runtime.Object
		check        func(runtime.Object) bool
	}{
		{"/apis", "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", &apidiscoveryv2.APIGroupDiscoveryList{},
			func(o runtime.Object) bool { return o.(*apidiscoveryv2.APIGroupDiscoveryList).Items[1].Name == "apps" }},
		{"/apis", "application/vnd.kubernetes.protobuf", &metav1.APIGroupList{},
			func(o runtime.Object) bool { return o.(*metav1.APIGroupList).Groups[1].Name == "apps" }},
		{"/api", "application/vnd.kubernetes.protobuf", &metav1.APIVersions{},
			func(o runtime.Object) bool { return o.(*metav1.APIVersions).Versions[0] == "v1" }},
		{"/api/v1", "application/vnd.kubernetes.protobuf", &metav1.APIResourceList{},
			func(o runtime.Object) bool { return o.(*metav1.APIResourceList).GroupVersion == "v1" }},
		{"/apis/apps", "application/vnd.kubernetes.protobuf", &metav1.APIGroup{},
			func(o runtime.Object) bool { return o.(*metav1.APIGroup).PreferredVersion.Version == "v1" }},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.accept, func(t *testing.T) {
			rec := handlertest.Get(d, tt.path, map[string]string{"Accept": tt.accept})
			obj, _, err := decoder.Decode(rec.Body.Bytes(), nil, tt.into)
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if !tt.check(obj) {
				t.Errorf("decoded %+v, not the expected document", obj)
			}
		})
	}
}

func TestNegotiation(t *testing.T) {
	d := newTestDiscovery(t)
	handlertest.CheckNegotiation(t, d, []handlertest.Negotiation{
		{Name: "no accept", Path: "/apis", WantCode: http.StatusOK, WantType: "application/json"},
		{Name: "any", Path: "/apis", Accept: "*/*", WantCode: http.StatusOK, WantType: "application/json"},
		{Name: "kube-scheduler", Path: "/apis/apps/v1", Accept: "application/vnd.kubernetes.protobuf, */*", WantCode: http.StatusOK, WantType: "application/vnd.kubernetes.protobuf"},
		{Name: "yaml", Path: "/apis/apps", Accept: "application/yaml", WantCode: http.StatusOK, WantType: "application/yaml"},
		{Name: "quality", Path: "/apis", Accept: "application/json;q=0.5, application/vnd.kubernetes.protobuf", WantCode: http.StatusOK, WantType: "application/vnd.kubernetes.protobuf"},
		{Name: "aggregated json", Path: "/api", Accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", WantCode: http.StatusOK, WantType: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
		{Name: "aggregated protobuf", Path: "/apis", Accept: "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", WantCode: http.StatusOK, WantType: "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
		{Name: "aggregated nopeer", Path: "/apis", Accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer,application/json", WantCode: http.StatusOK, WantType: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
		{Name: "removed v2beta1 falls back", Path: "/apis", Accept: "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", WantCode: http.StatusOK, WantType: "application/json"},
		{Name: "aggregated only where served", Path: "/apis/apps", Accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", WantCode: http.StatusOK, WantType: "application/json"},
		{Name: "table not served", Path: "/api/v1", Accept: "application/json;as=Table;v=v1;g=meta.k8s.io", WantCode: http.StatusNotAcceptable, WantType: "application/json"},
		{Name: "unknown media", Path: "/apis", Accept: "text/html", WantCode: http.StatusNotAcceptable, WantType: "application/json"},
		{Name: "watch stream", Path: "/apis", Accept: "application/json;stream=watch", WantCode: http.StatusNotAcceptable, WantType: "application/json"},
	})
}

func TestConditionalRequests(t *testing.T) {
	d := newTestDiscovery(t)
	tests := []struct {
		path, accept string
	}{
		{"/api", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"},
		{"/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"},
		{"/apis", "application/json"},
		{"/apis/apps/v1", "application/vnd.kubernetes.protobuf"},
		{"/api", "application/json"},
		{"/version", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.accept, func(t *testing.T) {
			handlertest.CheckRevalidation(t, d, tt.path, map[string]string{"Accept": tt.accept})
		})
	}
	json1 := handlertest.Get(d, "/apis/apps/v1", map[string]string{"Accept": "application/json"}).Header().Get("ETag")
	proto := handlertest.Get(d, "/apis/apps/v1", map[string]string{"Accept": "application/vnd.kubernetes.protobuf"}).Header().Get("ETag")
	if json1 == proto {
		t.Errorf("JSON and protobuf share the ETag %s, want one per representation", json1)
	}
}

func TestHandles(t *testing.T) {
	handlertest.CheckHandles(t, newTestDiscovery(t).Handles, []string{
		"/api", "/api/", "/api/v1", "/api/v1/",
		"/apis", "/apis/", "/apis/apps", "/apis/apps/v1", "/apis/apps/v1/",
		"/version", "/version/",
	}, []string{
		"/api/v2", "/apis/widgets.example.com", "/apis/apps/v1beta1",
		"/api/v1/pods", "/apis/apps/v1/deployments", "/healthz", "/",
	})
}

func TestMethodsAndUnknownPaths(t *testing.T) {
	d := newTestDiscovery(t)
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/apis", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /apis: got %d, want 405", rec.Code)
	}
	if rec := handlertest.Get(d, "/apis/widgets.example.com", nil); rec.Code != http.StatusNotFound {
		t.Errorf("unknown group: got %d, want 404", rec.Code)
	}
	rec = httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/apis", nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD /apis: got %d with %d bytes, want 200, a length and no body", rec.Code, rec.Body.Len())
	}
}

// recorder counts the requests a client makes, by path and Accept header.
type recorder struct {
	mu       sync.Mutex
	requests []string
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, req.URL.Path+" "+req.Header.Get("Accept"))
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

func (r *recorder) paths() []string {
	var out []string
	for _, req := range r.all() {
		path, _, _ := strings.Cut(req, " ")
		out = append(out, path)
	}
	return out
}

func newClient(t *testing.T, d *Discovery, contentType string) (*discovery.DiscoveryClient, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(rec.wrap(d))
	t.Cleanup(srv.Close)
	client, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: contentType}})
	if err != nil {
		t.Fatalf("NewDiscoveryClientForConfig: %v", err)
	}
	return client, rec
}

func TestClientGoUsesAggregatedDiscovery(t *testing.T) {
	d := newTestDiscovery(t)
	client, rec := newClient(t, d, "")
	groups, lists, err := client.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("ServerGroupsAndResources: %v", err)
	}
	if got, want := rec.paths(), []string{"/api", "/apis"}; !slices.Equal(got, want) {
		t.Errorf("requests: got %v, want %v (no fallback to per-group discovery)", got, want)
	}
	if len(groups) == 0 || groups[0].Name != "" {
		t.Errorf("first group: got %+v, want the core group", groups[0])
	}
	checkResources(t, lists)
}

func TestKubectlStyleRESTMapping(t *testing.T) {
	client, _ := newClient(t, newTestDiscovery(t), "")
	cached := memory.NewMemCacheClient(client)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
	tests := []struct {
		typed string
		want  schema.GroupVersionResource
	}{
		{"po", schema.GroupVersionResource{Version: "v1", Resource: "pods"}},
		{"deploy", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
		{"hpa", schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}},
		{"crds", schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}},
		{"leases", schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}},
	}
	for _, tt := range tests {
		t.Run(tt.typed, func(t *testing.T) {
			got, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: tt.typed})
			if err != nil {
				t.Fatalf("ResourceFor(%s): %v", tt.typed, err)
			}
			if got != tt.want {
				t.Errorf("ResourceFor(%s): got %v, want %v", tt.typed, got, tt.want)
			}
		})
	}
	mapping, err := mapper.RESTMapping(schema.GroupKind{Kind: "Pod"})
	if err != nil || mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		t.Errorf("RESTMapping(Pod): got %+v, %v, want a namespaced mapping", mapping, err)
	}
}

func TestClientGoLegacyDiscovery(t *testing.T) {
	d := newTestDiscovery(t)
	for _, contentType := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		t.Run(contentType, func(t *testing.T) {
			client, rec := newClient(t, d, contentType)
			client.UseLegacyDiscovery = true
			_, lists, err := client.ServerGroupsAndResources()
			if err != nil {
				t.Fatalf("ServerGroupsAndResources: %v", err)
			}
			if n := len(rec.paths()); n < 10 {
				t.Errorf("requests: got %d, want one per group version", n)
			}
			// The per-version documents are served in the client's content type.
			for _, req := range rec.all() {
				path, accept, _ := strings.Cut(req, " ")
				if path != "/api/v1" && path != "/apis/apps/v1" {
					continue
				}
				if c, _ := negotiate(accept, false); c.media != contentType {
					t.Errorf("%s with Accept %q: served %s, want %s", path, accept, c.media, contentType)
				}
			}
			checkResources(t, lists)
			events, err := client.ServerResourcesForGroupVersion("events.k8s.io/v1")
			if err != nil {
				t.Fatalf("ServerResourcesForGroupVersion(events.k8s.io/v1): %v", err)
			}
			if len(events.APIResources) != 1 || events.APIResources[0].Name != "events" {
				t.Errorf("events.k8s.io/v1: got %+v, want events", events.APIResources)
			}
		})
	}
}

// checkResources checks what client-go made of the documents.
func checkResources(t *testing.T, lists []*metav1.APIResourceList) {
	t.Helper()
	found := map[string]metav1.APIResource{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			found[l.GroupVersion+" "+r.Name] = r
		}
	}
	tests := []struct {
		key       string
		wantVerbs []string
		wantKind  string
	}{
		{"v1 pods", []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}, "Pod"},
		{"v1 pods/binding", []string{"create"}, "Binding"},
		{"v1 pods/eviction", []string{"create"}, "Eviction"},
		{"apps/v1 deployments/scale", []string{"get", "patch", "update"}, "Scale"},
		{"events.k8s.io/v1 events", []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}, "Event"},
		{"autoscaling/v1 horizontalpodautoscalers", []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}, "HorizontalPodAutoscaler"},
		{"authentication.k8s.io/v1 tokenreviews", []string{"create"}, "TokenReview"},
	}
	for _, tt := range tests {
		r, ok := found[tt.key]
		if !ok {
			t.Errorf("%s: missing", tt.key)
			continue
		}
		if !slices.Equal(r.Verbs, tt.wantVerbs) || r.Kind != tt.wantKind {
			t.Errorf("%s: got %s %v, want %s %v", tt.key, r.Kind, r.Verbs, tt.wantKind, tt.wantVerbs)
		}
	}
}

func TestClientGoServerVersion(t *testing.T) {
	client, _ := newClient(t, newTestDiscovery(t), "application/vnd.kubernetes.protobuf")
	got, err := client.ServerVersion()
	if err != nil {
		t.Fatalf("ServerVersion: %v", err)
	}
	if *got != testVersion {
		t.Errorf("got %+v, want %+v", *got, testVersion)
	}
}

func TestVersionIsIndentedJSON(t *testing.T) {
	rec := handlertest.Get(newTestDiscovery(t), "/version", nil)
	body, _ := io.ReadAll(rec.Body)
	if !strings.HasPrefix(string(body), "{\n  \"major\": \"1\",\n  \"minor\": \"37\",") {
		t.Errorf("got %q, want indented JSON", body)
	}
}

func TestNewRejectsOperationsWithoutVersion(t *testing.T) {
	ops := testOperations()
	ops[len(ops)-1].Version = ""
	if _, err := New(ops, testVersion); err == nil {
		t.Errorf("New: got no error for an operation without version, want one")
	}
}

func FuzzNegotiate(f *testing.F) {
	for _, seed := range []string{
		"", "*/*", "application/vnd.kubernetes.protobuf, */*",
		"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
		"application/json;q=0.2;as=Table", ";;,,/", "text/*;q=abc",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		c, ok := negotiate(accept, true)
		if ok && !slices.Contains(offeredMedia, c.media) {
			t.Errorf("negotiate(%q): got media %q, want one of %v", accept, c.media, offeredMedia)
		}
	})
}

func BenchmarkNew(b *testing.B) {
	ops := testOperations()
	for b.Loop() {
		if _, err := New(ops, testVersion); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServe measures the discovery documents kube-scheduler and
// client-go ask for: the aggregated one, and a group version's legacy one in
// protobuf.
func BenchmarkServe(b *testing.B) {
	for _, bc := range []struct{ name, path, accept string }{
		{"Aggregated", "/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"},
		{"LegacyProtobuf", "/apis/apps/v1", "application/vnd.kubernetes.protobuf, */*"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			d := newTestDiscovery(b)
			req := httptest.NewRequest(http.MethodGet, bc.path, nil)
			req.Header.Set("Accept", bc.accept)
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				d.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("got %d", rec.Code)
				}
			}
		})
	}
}
