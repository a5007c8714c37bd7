package admission

import (
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// TestWebhooksShareKeptAliveConnections: the webhooks of one server (same
// caBundle) share one client, across compilations of the configurations;
// calls made at once by several clients reuse the connections of the
// previous calls rather than opening (and handshaking) new ones. With a
// client per webhook keeping two idle connections, each round of eight
// calls at once opened six new ones.
func TestWebhooksShareKeptAliveConnections(t *testing.T) {
	var opened atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not a review", http.StatusBadRequest)
			return
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		review.Request = nil
		json.NewEncoder(w).Encode(review) //nolint:errcheck // the test's client reads it
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	rules := []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}}}}
	hook := func(name string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{Name: name, Rules: rules, SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/" + name), CABundle: ca}}
	}
	var clients Clients
	compile := func() *Webhooks {
		w, err := Compile(nil, []*admissionregistrationv1.ValidatingWebhookConfiguration{{Webhooks: []admissionregistrationv1.ValidatingWebhook{hook("a"), hook("b")}}}, nil, &clients)
		if err != nil {
			t.Fatal(err)
		}
		clients.Retain(w)
		return w
	}
	w := compile()
	if w.validating[0].client != w.validating[1].client {
		t.Error("two webhooks of one caBundle have clients of their own")
	}
	req := &Request{Operation: admissionv1.Create, Resource: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"},
		Kind: schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, Namespace: "default", Name: "j", Namespaced: true,
		Object: []byte(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"}}`)}
	const atOnce, rounds = 8, 10
	for round := range rounds {
		if round == rounds/2 {
			w = compile() // the configurations changed: the connections stay
		}
		var wg sync.WaitGroup
		errs := make(chan error, atOnce)
		for range atOnce {
			wg.Go(func() { errs <- w.Validate(t.Context(), req) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// Each Validate calls both webhooks, one after the other, on the one
	// client: about atOnce connections in all (a few more when a call
	// dials while another's connection is being put back). Clients of
	// their own, each keeping two idle, opened about 12 a round.
	if n := opened.Load(); n > 2*atOnce {
		t.Errorf("%d connections opened for %d rounds of %d calls at once, want at most %d", n, rounds, atOnce, 2*atOnce)
	}
}
