package requestfuzz_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/server"
)

// startServer serves a Batkube API with the default options on a loopback
// port until the fuzz test ends. It does what servertest.StartDefault does
// without servertest's client-go helpers (see the package's doc).
func startServer(f *testing.F) *httptest.Server {
	f.Helper()
	srv, err := server.New(server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		f.Fatalf("starting the server: %v", err)
	}
	ts := httptest.NewServer(srv.Handler())
	f.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts
}

// FuzzRequests sends arbitrary bodies, selectors, patches and continue tokens
// to the real server: whatever comes in, the answer is never a 5xx, and every
// error is a metav1.Status.
func FuzzRequests(f *testing.F) {
	ts := startServer(f)
	const pod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`
	seed := func(method uint8, query, contentType, body string) { f.Add(method, query, contentType, body) }
	seed(0, "labelSelector=a%3Db,c!%3Dd", "", "")
	seed(0, "fieldSelector=status.phase!%3DSucceeded,spec.nodeName%3D", "", "")
	seed(0, "limit=2&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhIn0", "", "")
	seed(1, "", "application/json", pod)
	seed(1, "", "application/yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec: {containers: [{name: c, image: i}]}")
	seed(1, "", "application/vnd.kubernetes.protobuf", "k8s\x00\x0a\x00")
	seed(2, "", "application/json-patch+json", `[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]`)
	seed(2, "", "application/merge-patch+json", `{"metadata":{"labels":null}}`)
	seed(2, "", "application/strategic-merge-patch+json", `{"spec":{"containers":[{"name":"c","$patch":"delete"}]}}`)
	seed(2, "", "application/apply-patch+yaml", "metadata: {labels: {x: y}}")
	seed(3, "", "application/json", `{"kind":"DeleteOptions","gracePeriodSeconds":-5}`)
	seed(0, "watch=true&timeoutSeconds=0&resourceVersion=99999999", "", "")
	methods := []string{"GET", "POST", "PATCH", "DELETE", "PUT"}
	f.Fuzz(func(t *testing.T, method uint8, query, contentType, body string) {
		m := methods[int(method)%len(methods)]
		path := "/api/v1/namespaces/default/pods"
		if m != "POST" && m != "GET" {
			path += "/p"
		}
		if _, err := url.ParseQuery(query); err != nil {
			t.Skip() // not a request a client can send
		}
		if strings.Contains(query, "watch") {
			query += "&timeoutSeconds=1"
		}
		req, err := http.NewRequest(m, ts.URL+path+"?"+query, strings.NewReader(body))
		if err != nil {
			t.Skip()
		}
		for _, c := range query + contentType {
			if c <= ' ' || c > '~' {
				t.Skip() // a request line or header net/http itself refuses
			}
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", m, query, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		// A list or watch from a resourceVersion the server has not
		// reached is the one 5xx the real server answers too (504,
		// reason Timeout, "Too large resource version").
		tooLarge := resp.StatusCode == http.StatusGatewayTimeout && strings.Contains(string(data), "Too large resource version")
		if resp.StatusCode >= 500 && !tooLarge {
			t.Fatalf("%s ?%s (%s) %q: got %d %s", m, query, contentType, body, resp.StatusCode, data)
		}
		if resp.StatusCode >= 400 {
			var st metav1.Status
			if err := json.Unmarshal(data, &st); err != nil || st.Kind != "Status" || int(st.Code) != resp.StatusCode {
				t.Fatalf("%s ?%s: got %d with a body that is not its Status: %s", m, query, resp.StatusCode, data)
			}
		}
	})
}
