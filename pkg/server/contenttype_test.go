package server_test

import (
	"testing"

	"github.com/batkube/batkube/pkg/server/servertest"
)

// TestBodyWithoutMediaTypeIsJSON: as the real server, a POST or PUT whose
// body has no Content-Type is read as JSON (kubectl create --raw sends
// none); a PATCH still needs its patch type.
func TestBodyWithoutMediaTypeIsJSON(t *testing.T) {
	ts := servertest.StartDefault(t)
	const pods = "/api/v1/namespaces/default/pods"
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"raw"},"spec":{"containers":[{"name":"c","image":"i"}]}}`
	if code, st := do(t, ts, "POST", pods, "", pod); code != 201 {
		t.Fatalf("POST without Content-Type: HTTP %d (%s), want 201", code, st.Message)
	}
	if code, st := do(t, ts, "PUT", pods+"/raw", "", pod); code != 200 {
		t.Errorf("PUT without Content-Type: HTTP %d (%s), want 200", code, st.Message)
	}
	if code, _ := do(t, ts, "PATCH", pods+"/raw", "", `{}`); code != 415 {
		t.Errorf("PATCH without Content-Type: HTTP %d, want 415", code)
	}
}
