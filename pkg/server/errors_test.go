package server_test

import (
	"context"
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/server/servertest"
)

// TestMistakesGetTheRealStatusCodes sends the malformed requests of
// apiserver-behaviour.md and checks each answer is a metav1.Status with the
// code a real kube-apiserver 1.37 gives.
func TestMistakesGetTheRealStatusCodes(t *testing.T) {
	ts := servertest.StartDefault(t)
	const pods = "/api/v1/namespaces/default/pods"
	const validPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ok"},"spec":{"containers":[{"name":"c","image":"i"}]}}`
	do(t, ts, "POST", pods, "application/json", validPod)
	tests := []struct {
		name, method, path, contentType, body string
		want                                  int32
		reason                                metav1.StatusReason
	}{
		{"malformed JSON", "POST", pods, "application/json", `{"kind":`, 400, metav1.StatusReasonBadRequest},
		{"unknown resource", "GET", "/api/v1/namespaces/default/widgets", "", "", 404, metav1.StatusReasonNotFound},
		{"missing object", "GET", pods + "/nope", "", "", 404, metav1.StatusReasonNotFound},
		{"invalid name", "POST", pods, "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"Bad_Name"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, 422, metav1.StatusReasonInvalid},
		{"no containers", "POST", pods, "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"empty"},"spec":{}}`, 422, metav1.StatusReasonInvalid},
		{"namespace mismatch", "POST", pods, "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","namespace":"other"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, 400, metav1.StatusReasonBadRequest},
		{"name mismatch", "PUT", pods + "/ok", "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"other"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, 400, metav1.StatusReasonBadRequest},
		{"wrong kind", "POST", pods, "application/json", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"x"}}`, 400, metav1.StatusReasonBadRequest},
		{"already exists", "POST", pods, "application/json", validPod, 409, metav1.StatusReasonAlreadyExists},
		{"unsupported media type", "POST", pods, "text/plain", `hello`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"unsupported patch type", "PATCH", pods + "/ok", "application/json", `{}`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"bad label selector", "GET", pods + "?labelSelector=a%20in%20(", "", "", 400, metav1.StatusReasonBadRequest},
		{"unknown field selector", "GET", pods + "?fieldSelector=spec.color%3Dred", "", "", 400, metav1.StatusReasonBadRequest},
		{"bad continue token", "GET", pods + "?limit=1&continue=bm90LWEtdG9rZW4", "", "", 400, metav1.StatusReasonBadRequest},
		{"PUT on a collection", "PUT", pods, "application/json", validPod, 405, metav1.StatusReasonMethodNotAllowed},
		{"failing JSON patch test", "PATCH", pods + "/ok", "application/json-patch+json", `[{"op":"test","path":"/metadata/name","value":"nope"}]`, 422, metav1.StatusReasonInvalid},
		{"malformed JSON patch", "PATCH", pods + "/ok", "application/json-patch+json", `{"op":1}`, 400, metav1.StatusReasonBadRequest},
		{"malformed timeoutSeconds", "GET", pods + "?watch=true&timeoutSeconds=5s", "", "", 400, metav1.StatusReasonBadRequest},
		{"delete a system namespace", "DELETE", "/api/v1/namespaces/kube-system", "", "", 403, metav1.StatusReasonForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, st := do(t, ts, tt.method, tt.path, tt.contentType, tt.body)
			if int32(code) != tt.want || st.Code != tt.want || st.Reason != tt.reason || st.Kind != "Status" {
				t.Errorf("got HTTP %d, Status{code %d, reason %q, kind %q, message %q}; want %d %q",
					code, st.Code, st.Reason, st.Kind, st.Message, tt.want, tt.reason)
			}
		})
	}
}

// do sends a request with a body and returns its status code and the
// metav1.Status it answered, if any.
func do(t *testing.T, ts *servertest.Server, method, path, contentType, body string) (int, metav1.Status) {
	t.Helper()
	a := send(context.Background(), t, ts.URL, method, path, contentType, "", []byte(body))
	var st metav1.Status
	_ = json.Unmarshal(a.body, &st)
	return a.code, st
}
