package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
)

func TestBearerTokenIsRequiredWhenSet(t *testing.T) {
	ts := servertest.Start(t, server.Options{BearerToken: "s3cret"})
	for _, tt := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer wrong", 401}, {"Bearer s3cret", 200}} {
		req, _ := http.NewRequest("GET", ts.URL+"/api/v1/namespaces", nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want || (tt.want == 401 && !strings.Contains(string(body), `"kind":"Status"`)) {
			t.Errorf("Authorization %q: got %d %s, want %d", tt.auth, resp.StatusCode, body, tt.want)
		}
	}
}

func TestYAMLInAndOut(t *testing.T) {
	ts := servertest.StartDefault(t)
	body := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  key: value\n"
	a := send(ctxT(t), t, ts.URL, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/yaml", "application/yaml", []byte(body))
	if a.code != 201 || a.contentType != "application/yaml" || !strings.Contains(string(a.body), "key: value") || !strings.Contains(string(a.body), "resourceVersion:") {
		t.Errorf("got %d %s:\n%s", a.code, a.contentType, a.body)
	}
}
