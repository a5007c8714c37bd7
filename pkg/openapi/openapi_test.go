package openapi

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"

	"github.com/batkube/batkube/pkg/handlertest"
)

// testV2 is a small swagger document shaped like the Kubernetes root spec.
const testV2 = `{"swagger":"2.0","info":{"title":"Kubernetes","version":"v1.37.2"},"paths":{"/api/v1/namespaces/{namespace}/pods/{name}":{"get":{"operationId":"readCoreV1NamespacedPod","responses":{"200":{"description":"OK","schema":{"$ref":"#/definitions/io.k8s.api.core.v1.Pod"}}}}}},"definitions":{"io.k8s.api.core.v1.Pod":{"description":"Pod is a collection of containers that can run on a host.","type":"object","properties":{"kind":{"type":"string"}},"x-kubernetes-group-version-kind":[{"group":"","kind":"Pod","version":"v1"}]}}}`

func newTestOpenAPI(t testing.TB) *OpenAPI {
	t.Helper()
	o, err := New([]byte(testV2))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return o
}

func newDiscoveryClient(t *testing.T, o *OpenAPI) *discovery.DiscoveryClient {
	t.Helper()
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	client, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatalf("NewDiscoveryClientForConfig: %v", err)
	}
	return client
}

func TestInvalidV2IsAnErrorWhenServed(t *testing.T) {
	o, err := New([]byte("{not json"))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rec := handlertest.Get(o, "/openapi/v2", nil)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "not valid JSON") {
		t.Errorf("got %d %q, want 500 saying the spec is not valid JSON", rec.Code, rec.Body.String())
	}
}

func TestGroupVersionKey(t *testing.T) {
	tests := []struct {
		file, want string
		ok         bool
	}{
		{"api__v1_openapi.json", "api/v1", true},
		{"apis__apps__v1_openapi.json", "apis/apps/v1", true},
		{"apis__apps_openapi.json", "apis/apps", true},
		{".well-known__openid-configuration_openapi.json", ".well-known/openid-configuration", true},
		{"version_openapi.json", "version", true},
		{"README.md", "", false},
		{"_openapi.json", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, ok := groupVersionKey(tt.file)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %q %v, want %q %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestV3IndexListsEveryGroupVersion(t *testing.T) {
	o := newTestOpenAPI(t)
	rec := handlertest.Get(o, "/openapi/v3", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status: got %d, want 200", rec.Code)
	}
	var index v3Discovery
	if err := json.Unmarshal(rec.Body.Bytes(), &index); err != nil {
		t.Fatalf("decoding the index: %v", err)
	}
	for _, key := range []string{"api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1", "apis", "version"} {
		item, ok := index.Paths[key]
		if !ok {
			t.Errorf("index: %s missing", key)
			continue
		}
		u, err := url.Parse(item.ServerRelativeURL)
		if err != nil || u.Path != "/openapi/v3/"+key || len(u.Query().Get("hash")) != 128 {
			t.Errorf("%s: got URL %q, want /openapi/v3/%s?hash=<128 hex digits>", key, item.ServerRelativeURL, key)
		}
	}
	if got, want := len(index.Paths), len(o.GroupVersions()); got != want {
		t.Errorf("index: got %d paths, want %d", got, want)
	}
}

func TestClientGoOpenAPIV3(t *testing.T) {
	client := newDiscoveryClient(t, newTestOpenAPI(t))
	root := openapi3.NewRoot(client.OpenAPIV3())
	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatalf("GroupVersions: %v", err)
	}
	if !slices.Contains(gvs, schema.GroupVersion{Version: "v1"}) || !slices.Contains(gvs, schema.GroupVersion{Group: "apps", Version: "v1"}) {
		t.Errorf("GroupVersions: got %v, want v1 and apps/v1 among them", gvs)
	}
	tests := []struct {
		gv         schema.GroupVersion
		definition string
	}{
		{schema.GroupVersion{Version: "v1"}, "io.k8s.api.core.v1.Pod"},
		{schema.GroupVersion{Group: "apps", Version: "v1"}, "io.k8s.api.apps.v1.Deployment"},
		{schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}, "io.k8s.api.coordination.v1.Lease"},
	}
	for _, tt := range tests {
		t.Run(tt.gv.String(), func(t *testing.T) {
			spec, err := root.GVSpec(tt.gv)
			if err != nil {
				t.Fatalf("GVSpec: %v", err)
			}
			if spec.Components == nil || spec.Components.Schemas[tt.definition] == nil {
				t.Errorf("GVSpec(%s): no schema %s", tt.gv, tt.definition)
			}
		})
	}
}

func TestClientGoOpenAPIV3Protobuf(t *testing.T) {
	client := newDiscoveryClient(t, newTestOpenAPI(t))
	paths, err := client.OpenAPIV3().Paths()
	if err != nil {
		t.Fatalf("Paths: %v", err)
	}
	b, err := paths["apis/coordination.k8s.io/v1"].Schema(openapi.ContentTypeOpenAPIV3PB)
	if err != nil {
		t.Fatalf("Schema(protobuf): %v", err)
	}
	var doc openapiv3.Document
	if err := proto.Unmarshal(b, &doc); err != nil {
		t.Fatalf("decoding the protobuf document: %v", err)
	}
	if doc.GetInfo().GetTitle() != "Kubernetes" {
		t.Errorf("title: got %q, want Kubernetes", doc.GetInfo().GetTitle())
	}
}

func TestClientGoOpenAPIV2Protobuf(t *testing.T) {
	client := newDiscoveryClient(t, newTestOpenAPI(t))
	doc, err := client.OpenAPISchema()
	if err != nil {
		t.Fatalf("OpenAPISchema: %v", err)
	}
	if doc.GetInfo().GetVersion() != "v1.37.2" {
		t.Errorf("version: got %q, want v1.37.2", doc.GetInfo().GetVersion())
	}
	if len(doc.GetDefinitions().GetAdditionalProperties()) != 1 {
		t.Errorf("definitions: got %d, want 1", len(doc.GetDefinitions().GetAdditionalProperties()))
	}
}

func TestNegotiation(t *testing.T) {
	o := newTestOpenAPI(t)
	handlertest.CheckNegotiation(t, o, []handlertest.Negotiation{
		{Name: "v2 no accept", Path: "/openapi/v2", WantCode: http.StatusOK, WantType: "application/json"},
		{Name: "v2 json", Path: "/openapi/v2", Accept: "application/json", WantCode: http.StatusOK, WantType: "application/json"},
		{Name: "v2 client-go protobuf", Path: "/openapi/v2", Accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", WantCode: http.StatusOK, WantType: "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"},
		{Name: "v2 protobuf", Path: "/openapi/v2", Accept: "application/com.github.proto-openapi.spec.v2.v1.0+protobuf, application/json", WantCode: http.StatusOK, WantType: "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"},
		{Name: "v2 kubernetes protobuf", Path: "/openapi/v2", Accept: "application/vnd.kubernetes.protobuf", WantCode: http.StatusNotAcceptable, WantType: ""},
		{Name: "v2 kube-scheduler", Path: "/openapi/v2", Accept: "application/vnd.kubernetes.protobuf, */*", WantCode: http.StatusOK, WantType: "application/json"},
		{Name: "v3 json", Path: "/openapi/v3/api/v1", Accept: "application/json", WantCode: http.StatusOK, WantType: "application/json"},
		{Name: "v3 protobuf", Path: "/openapi/v3/version", Accept: "application/com.github.proto-openapi.spec.v3@v1.0+protobuf", WantCode: http.StatusOK, WantType: "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"},
		{Name: "v3 html", Path: "/openapi/v3/api/v1", Accept: "text/html", WantCode: http.StatusNotAcceptable, WantType: ""},
		{Name: "v3 unknown", Path: "/openapi/v3/apis/widgets.example.com/v1", WantCode: http.StatusNotFound, WantType: "text/plain; charset=utf-8"},
		{Name: "index", Path: "/openapi/v3", WantCode: http.StatusOK, WantType: "application/json"},
	})
}

func TestHashQuery(t *testing.T) {
	o := newTestOpenAPI(t)
	current := coreV1(t, o).hash
	rec := handlertest.Get(o, "/openapi/v3/api/v1?hash="+current, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("current hash: got %d, want 200", rec.Code)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "public, immutable" {
		t.Errorf("Cache-Control: got %q, want public, immutable", cc)
	}
	if _, err := http.ParseTime(rec.Header().Get("Expires")); err != nil {
		t.Errorf("Expires: got %q, want an HTTP date: %v", rec.Header().Get("Expires"), err)
	}
	rec = handlertest.Get(o, "/openapi/v3/api/v1?hash=OLD", nil)
	if rec.Code != http.StatusMovedPermanently {
		t.Fatalf("stale hash: got %d, want 301", rec.Code)
	}
	if loc, want := rec.Header().Get("Location"), "/openapi/v3/api/v1?hash="+current; loc != want {
		t.Errorf("Location: got %q, want %q", loc, want)
	}
	rec = handlertest.Get(o, "/openapi/v3/api/v1", nil)
	if cc := rec.Header().Get("Cache-Control"); cc != "" {
		t.Errorf("no hash: got Cache-Control %q, want none", cc)
	}
}

func TestConditionalRequests(t *testing.T) {
	o := newTestOpenAPI(t)
	for _, path := range []string{"/openapi/v2", "/openapi/v3", "/openapi/v3/apis/apps/v1"} {
		t.Run(path, func(t *testing.T) {
			handlertest.CheckRevalidation(t, o, path, nil)
		})
	}
}

func TestHandles(t *testing.T) {
	handlertest.CheckHandles(t, newTestOpenAPI(t).Handles, []string{
		"/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1", "/openapi/v3/apis/apps/v1",
	}, []string{
		"/openapi/v3/apis/widgets.example.com/v1", "/openapi/v3/", "/openapi", "/swagger.json",
	})
}

func TestMethodNotAllowed(t *testing.T) {
	rec := httptest.NewRecorder()
	newTestOpenAPI(t).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/openapi/v2", strings.NewReader("{}")))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: got %d, want 405", rec.Code)
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New([]byte(testV2)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkV3ProtobufCoreV1(b *testing.B) {
	o := newTestOpenAPI(b)
	body := coreV1(b, o).json
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := v3ToProto(body); err != nil {
			b.Fatal(err)
		}
	}
}

func TestConcurrentProtobufRequests(t *testing.T) {
	o := newTestOpenAPI(t)
	const clients = 8
	bodies := make(chan string, clients)
	for range clients {
		go func() {
			rec := handlertest.Get(o, "/openapi/v2", map[string]string{"Accept": mediaV2ProtobufLegacy})
			bodies <- rec.Body.String()
		}()
	}
	first := <-bodies
	for range clients - 1 {
		if got := <-bodies; got != first || got == "" {
			t.Fatalf("concurrent requests: got different or empty bodies (%d and %d bytes)", len(got), len(first))
		}
	}
}

func FuzzAccept(f *testing.F) {
	o := newTestOpenAPI(f)
	for _, seed := range []string{"", "*/*", "application/json", mediaV3ProtobufLegacy + ";q=0.9, */*;q=0.1", "a/b/c;;q=", ",,,"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		rec := handlertest.Get(o, "/openapi/v3/version", map[string]string{"Accept": accept})
		if rec.Code != http.StatusOK && rec.Code != http.StatusNotAcceptable {
			t.Errorf("Accept %q: got %d, want 200 or 406", accept, rec.Code)
		}
	})
}

// TestFirstRequestsGetTheEagerAnswers checks that documents read and hashed
// on first request answer what reading and hashing them all at start
// answered: every v3 document's bytes and ETag, and the index listing
// each at its current hash. Eight clients make the first requests at once.
func TestFirstRequestsGetTheEagerAnswers(t *testing.T) {
	entries, err := fs.ReadDir(v3Files, "v3")
	if err != nil {
		t.Fatal(err)
	}
	type answer struct{ body, etag string }
	want := map[string]answer{"/openapi/v2": {testV2, strconv.Quote(hashOf([]byte(testV2)))}}
	wantIndex := v3Discovery{Paths: map[string]v3GroupVersion{}}
	for _, e := range entries {
		key, ok := groupVersionKey(e.Name())
		if !ok {
			continue
		}
		body, err := v3Files.ReadFile("v3/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		want[v3Prefix+key] = answer{string(body), strconv.Quote(hashOf(body))}
		wantIndex.Paths[key] = v3GroupVersion{ServerRelativeURL: serverRelativeURL(key, hashOf(body))}
	}
	index, err := json.Marshal(wantIndex)
	if err != nil {
		t.Fatal(err)
	}
	want[v3Path] = answer{string(index), strconv.Quote(hashOf(index))}

	o := newTestOpenAPI(t)
	paths := slices.Sorted(maps.Keys(want))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, p := range paths {
				rec := handlertest.Get(o, p, nil)
				if got, w := (answer{rec.Body.String(), rec.Header().Get("ETag")}), want[p]; rec.Code != http.StatusOK || got != w {
					t.Errorf("%s: got %d with %d bytes and ETag %s, want 200 with the %d bytes (ETag %s) read at start",
						p, rec.Code, len(got.body), got.etag, len(w.body), w.etag)
				}
			}
		})
	}
	wg.Wait()
}

// V3Document reads a group version's document, the core group's under
// api/; a group version not served is an error.
func TestV3Document(t *testing.T) {
	for _, gv := range [][2]string{{"", "v1"}, {"apps", "v1"}, {"apiextensions.k8s.io", "v1"}} {
		data, err := V3Document(gv[0], gv[1])
		if err != nil || !bytes.Contains(data, []byte(`"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"`)) {
			t.Errorf("%s/%s: %d bytes, %v; want a document with ObjectMeta", gv[0], gv[1], len(data), err)
		}
	}
	if _, err := V3Document("widgets.example.com", "v1"); err == nil {
		t.Error("a group version not served: no error")
	}
}

// coreV1 returns the content of o's v3 document of the core group.
func coreV1(t testing.TB, o *OpenAPI) content {
	t.Helper()
	c, err := o.v3["api/v1"].content()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
