package server_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"k8s.io/client-go/discovery"

	"github.com/batkube/batkube"
	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
)

// TestOpenAPIV2IsTheSpec checks that /openapi/v2 serves swagger.json, the
// spec the server is generated from, as JSON and as the protobuf client-go
// reads, and that go-swagger's own /swagger.json and /docs pages are not
// served (the real API server has neither).
func TestOpenAPIV2IsTheSpec(t *testing.T) {
	ts := servertest.StartDefault(t)
	resp, err := http.Get(ts.URL + "/openapi/v2")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, batkube.SwaggerJSON) {
		t.Errorf("/openapi/v2: got %d with %d bytes, want 200 with swagger.json's %d bytes", resp.StatusCode, len(body), len(batkube.SwaggerJSON))
	}

	client, err := discovery.NewDiscoveryClientForConfig(ts.Config())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := client.OpenAPISchema()
	if err != nil {
		t.Fatalf("client-go's OpenAPISchema: %v", err)
	}
	found := false
	for _, def := range doc.GetDefinitions().GetAdditionalProperties() {
		found = found || def.GetName() == "io.k8s.api.core.v1.Pod"
	}
	if got := doc.GetInfo().GetVersion(); got != server.KubernetesVersion.GitVersion {
		t.Errorf("client-go's OpenAPISchema: got version %q, want %s", got, server.KubernetesVersion.GitVersion)
	}
	if !found {
		t.Error("client-go's OpenAPISchema: got no io.k8s.api.core.v1.Pod definition, want one")
	}

	for _, path := range []string{"/swagger.json", "/docs"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: got %d, want 404", path, resp.StatusCode)
		}
	}
}
