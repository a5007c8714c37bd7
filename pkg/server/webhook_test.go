package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/batkube/batkube/pkg/server/servertest"
)

// webhookServer is an HTTPS admission webhook: answer decides what it
// says to each review; calls counts them.
type webhookServer struct {
	*httptest.Server
	calls atomic.Int64
}

func newWebhook(t *testing.T, answer func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) *webhookServer {
	t.Helper()
	w := newWebhookUnstarted(answer)
	w.StartTLS()
	t.Cleanup(w.Close)
	return w
}

func newWebhookUnstarted(answer func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) *webhookServer {
	w := &webhookServer{}
	w.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
			http.Error(rw, "not a review", http.StatusBadRequest)
			return
		}
		resp := answer(review.Request)
		resp.UID = review.Request.UID
		out, _ := json.Marshal(admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write(out)
	}))
	w.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes a test refuses on purpose
	return w
}

// newServiceWebhook is newWebhook with a certificate for the DNS name of a
// Service (name.namespace.svc), as a webhook behind a Service has.
func newServiceWebhook(t *testing.T, dnsName string, answer func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) *webhookServer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	w := newWebhookUnstarted(answer)
	w.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	w.StartTLS()
	t.Cleanup(w.Close)
	return w
}

// clientConfig reaches the webhook at path with its certificate as caBundle.
func (w *webhookServer) clientConfig(path string) admissionregistrationv1.WebhookClientConfig {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.Certificate().Raw})
	return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(w.URL + path), CABundle: ca}
}

// TestAdmissionWebhooks: Mutating- and ValidatingWebhookConfigurations
// written through client-go are called over HTTPS for the requests their
// rules and selectors match — a mutating webhook suspends the Jobs of a
// queue (as Kueue's does), a validating one refuses a name, one that
// cannot be reached fails the request under failurePolicy Fail and is
// skipped under Ignore, and a webhook with side effects refuses a dry run.
func TestAdmissionWebhooks(t *testing.T) {
	ts := servertest.StartDefault(t)
	ctx := context.Background()
	cs := ts.Clientset()
	suspend := newWebhook(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		patch := []byte(`[{"op":"add","path":"/spec/suspend","value":true}]`)
		return &admissionv1.AdmissionResponse{Allowed: true, Patch: patch, PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)}
	})
	refuse := newWebhook(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		if req.Name == "forbidden" {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "no Job may be called forbidden"}}
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	jobs := []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}}}}
	none := ptr.To(admissionregistrationv1.SideEffectClassNone)
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "queue"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "suspend.example.io", ClientConfig: suspend.clientConfig("/mutate"),
			Rules: jobs, SideEffects: none, AdmissionReviewVersions: []string{"v1"},
			ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "queue-name", Operator: metav1.LabelSelectorOpExists}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "names"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "names.example.io", ClientConfig: refuse.clientConfig("/validate"),
			Rules: jobs, SideEffects: none, AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job := func(name string, labels map[string]string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	}
	queued, err := cs.BatchV1().Jobs("default").Create(ctx, job("queued", map[string]string{"queue-name": "q"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if queued.Spec.Suspend == nil || !*queued.Spec.Suspend {
		t.Errorf("a Job of a queue: suspend %v, want true (the mutating webhook)", queued.Spec.Suspend)
	}
	plain, err := cs.BatchV1().Jobs("default").Create(ctx, job("plain", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Spec.Suspend != nil && *plain.Spec.Suspend {
		t.Error("a Job outside the webhook's objectSelector was suspended")
	}
	if calls := suspend.calls.Load(); calls != 1 {
		t.Errorf("the mutating webhook was called %d times, want once (its objectSelector)", calls)
	}
	_, err = cs.BatchV1().Jobs("default").Create(ctx, job("forbidden", nil), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `admission webhook "names.example.io" denied the request: no Job may be called forbidden`) {
		t.Errorf("a Job the validating webhook refuses: %v", err)
	}

	// A webhook that cannot be reached: Fail fails the request, Ignore
	// lets it through.
	gone := newWebhook(t, nil)
	goneConfig := gone.clientConfig("/gone")
	gone.Close()
	cfg, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "unreachable"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "gone.example.io", ClientConfig: goneConfig,
			Rules: jobs, SideEffects: none, AdmissionReviewVersions: []string{"v1"}, FailurePolicy: ptr.To(admissionregistrationv1.Fail)}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.BatchV1().Jobs("default").Create(ctx, job("any", nil), metav1.CreateOptions{})
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), `failed calling webhook "gone.example.io"`) {
		t.Errorf("an unreachable webhook under Fail: %v, want 500 failed calling webhook", err)
	}
	cfg.Webhooks[0].FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
	cfg.Webhooks[0].SideEffects = ptr.To(admissionregistrationv1.SideEffectClassSome)
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, cfg, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.BatchV1().Jobs("default").Create(ctx, job("any", nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("an unreachable webhook under Ignore: %v", err)
	}
	_, err = cs.BatchV1().Jobs("default").Create(ctx, job("dry", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "has side effects and does not support dry run") {
		t.Errorf("a dry run with a webhook with side effects: %v", err)
	}
	if err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "unreachable", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// A webhook behind a Service: reached at its EndpointSlice's address,
	// its certificate checked against the Service's DNS name.
	labelled := newServiceWebhook(t, "labeller.webhooks.svc", func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		patch := []byte(`[{"op":"add","path":"/metadata/labels","value":{"labelled":"yes"}}]`)
		return &admissionv1.AdmissionResponse{Allowed: true, Patch: patch, PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)}
	})
	host, portText, _ := net.SplitHostPort(strings.TrimPrefix(labelled.URL, "https://"))
	port, _ := strconv.Atoi(portText)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "webhooks"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Services("webhooks").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "labeller"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(int32(port))}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.DiscoveryV1().EndpointSlices("webhooks").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "labeller-1", Labels: map[string]string{discoveryv1.LabelServiceName: "labeller"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{host}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port))}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: labelled.TLS.Certificates[0].Certificate[0]})
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "labels"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "labeller.example.io", SideEffects: none, AdmissionReviewVersions: []string{"v1"},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: ca,
				Service: &admissionregistrationv1.ServiceReference{Namespace: "webhooks", Name: "labeller", Path: ptr.To("/label")}},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	if err != nil || cm.Labels["labelled"] != "yes" {
		t.Errorf("a ConfigMap through a webhook behind a Service: %v, labels %v", err, cm.Labels)
	}
}

// TestWebhookConnectionsAreChecked: as kube-apiserver, Batkube refuses a
// webhook configuration whose url is not https (the webhook would be
// called in clear), and a webhook whose certificate its caBundle does not
// sign, or that does not name the Service it is reached through, fails
// the request it is called for (failurePolicy Fail): it is never trusted.
func TestWebhookConnectionsAreChecked(t *testing.T) {
	ts := servertest.StartDefault(t)
	cs := ts.Clientset()
	ctx := ctxT(t)
	none := ptr.To(admissionregistrationv1.SideEffectClassNone)
	allow := func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	onConfigMaps := []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
	config := func(name string, cc admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.ValidatingWebhookConfiguration {
		return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: name + ".example.io", SideEffects: none, AdmissionReviewVersions: []string{"v1"},
				ClientConfig: cc, Rules: onConfigMaps}}}
	}
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	for _, bad := range []string{plain.URL + "/check", "https://user:pw@127.0.0.1:1/", "https://127.0.0.1:1/?a=b", "https://127.0.0.1:1/#f"} {
		_, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, config("bad", admissionregistrationv1.WebhookClientConfig{URL: ptr.To(bad)}), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("a webhook at %s: %v, want Invalid", bad, err)
		}
	}

	// Signed by another CA: its caBundle names a certificate that is not
	// the server's.
	hook := newWebhook(t, allow)
	other := newServiceWebhook(t, "other.webhooks.svc", allow) // a certificate of its own
	cc := hook.clientConfig("/check")
	cc.CABundle = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: other.TLS.Certificates[0].Certificate[0]})
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, config("unsigned", cc), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "certificate") || hook.calls.Load() != 0 {
		t.Errorf("a webhook whose caBundle does not sign its certificate: %v, %d calls; want the request refused, no call", err, hook.calls.Load())
	}
	if err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "unsigned", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// Behind a Service whose DNS name its certificate does not hold.
	wrong := newServiceWebhook(t, "someone-else.webhooks.svc", allow)
	host, portText, _ := net.SplitHostPort(strings.TrimPrefix(wrong.URL, "https://"))
	port, _ := strconv.Atoi(portText)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "webhooks"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.DiscoveryV1().EndpointSlices("webhooks").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "checker-1", Labels: map[string]string{discoveryv1.LabelServiceName: "checker"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{host}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port))}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Services("webhooks").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "checker"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(int32(port))}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: wrong.TLS.Certificates[0].Certificate[0]})
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, config("misnamed", admissionregistrationv1.WebhookClientConfig{CABundle: ca,
		Service: &admissionregistrationv1.ServiceReference{Namespace: "webhooks", Name: "checker", Path: ptr.To("/check")}}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "checker.webhooks.svc") || wrong.calls.Load() != 0 {
		t.Errorf("a webhook whose certificate names another Service: %v, %d calls; want the request refused, naming checker.webhooks.svc, no call", err, wrong.calls.Load())
	}
}
