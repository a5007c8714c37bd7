package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	"github.com/batkube/batkube/pkg/server"
)

// The requests kube-scheduler makes for every pod it places, served by the
// whole handler (outer layer, generated router, REST logic, store) without
// a network or a client: what the server spends per request.

const protobufMedia = "application/vnd.kubernetes.protobuf"

var (
	protoSerializer = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	jsonSerializer  = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, kjson.SerializerOptions{})
)

// protoBody encodes obj as a Kubernetes protobuf document.
func protoBody(b *testing.B, obj runtime.Object) []byte {
	var buf bytes.Buffer
	if err := protoSerializer.Encode(obj, &buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func quietServer(b *testing.B) *server.Server {
	srv, err := server.New(server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return srv
}

// serve runs one request through the handler and checks its status code.
func serve(b *testing.B, h http.Handler, method, url, contentType string, body []byte, want int) {
	r := httptest.NewRequest(method, url, bytes.NewReader(body))
	r.Header.Set("Accept", protobufMedia+", */*")
	r.Header.Set("User-Agent", "kube-scheduler/v1.37.1 (linux/amd64) kubernetes/abcdef/scheduler")
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != want {
		b.Fatalf("%s %s: %d, want %d: %s", method, url, w.Code, want, w.Body.String())
	}
}

// BenchmarkServeBinding: POST pods/{name}/binding in protobuf (each
// iteration binds a pod created, untimed, for it).
func BenchmarkServeBinding(b *testing.B) {
	srv := quietServer(b)
	h := srv.Handler()
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		name := fmt.Sprintf("p-%d", i)
		p := newPod(name)
		p.Namespace = "default"
		if _, err := srv.API.Create(ctx, corev1.SchemeGroupVersion.WithResource("pods"), p); err != nil {
			b.Fatal(err)
		}
		body := protoBody(b, &corev1.Binding{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "n1"}})
		b.StartTimer()
		serve(b, h, http.MethodPost, "/api/v1/namespaces/default/pods/"+name+"/binding", protobufMedia, body, http.StatusCreated)
		i++
	}
}

// BenchmarkServeEventCreate: POST an events.k8s.io/v1 Event in protobuf.
func BenchmarkServeEventCreate(b *testing.B) {
	h := quietServer(b).Handler()
	b.ReportAllocs()
	i := 0
	now := metav1.NewMicroTime(time.Now())
	for b.Loop() {
		b.StopTimer() // the client's work: building and encoding the event
		ev := &eventsv1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d.18a2b3c4d5e6f7a8", i), Namespace: "default"},
			EventTime:  now, ReportingController: "default-scheduler", ReportingInstance: "default-scheduler-host",
			Action: "Binding", Reason: "Scheduled", Note: fmt.Sprintf("Successfully assigned default/p-%d to n1", i), Type: "Normal",
			Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: fmt.Sprintf("p-%d", i), APIVersion: "v1"}}
		body := protoBody(b, ev)
		b.StartTimer()
		serve(b, h, http.MethodPost, "/apis/events.k8s.io/v1/namespaces/default/events", protobufMedia, body, http.StatusCreated)
		i++
	}
}

// BenchmarkServeLeaseRenew: GET then PUT the scheduler's lease (leader
// election), in protobuf.
func BenchmarkServeLeaseRenew(b *testing.B) {
	srv := quietServer(b)
	h := srv.Handler()
	holder := "scheduler-1"
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler", Namespace: "kube-system"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	if _, err := srv.API.Create(context.Background(), coordinationv1.SchemeGroupVersion.WithResource("leases"), lease); err != nil {
		b.Fatal(err)
	}
	const url = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer() // the client's work: its copy of the lease, renewed and encoded
		st, err := srv.Store.Get(coordinationv1.SchemeGroupVersion.WithResource("leases").GroupResource(), "kube-system", "kube-scheduler")
		if err != nil {
			b.Fatal(err)
		}
		cur := st.Copy().(*coordinationv1.Lease)
		renew := metav1.NewMicroTime(time.Now())
		cur.Spec.RenewTime = &renew
		cur.TypeMeta = metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}
		body := protoBody(b, cur)
		b.StartTimer()
		serve(b, h, http.MethodGet, url, "", nil, http.StatusOK)
		serve(b, h, http.MethodPut, url, protobufMedia, body, http.StatusOK)
	}
}

// BenchmarkServePodStatusPatch: the strategic-merge patch kube-scheduler
// sends to mark a pod unschedulable; with webhooks=jobs, beside admission
// webhooks for batch Jobs only (as Kueue's), which the patch must not pay
// for.
func BenchmarkServePodStatusPatch(b *testing.B) {
	b.Run("webhooks=none", func(b *testing.B) { benchmarkPodStatusPatch(b, false) })
	b.Run("webhooks=jobs", func(b *testing.B) { benchmarkPodStatusPatch(b, true) })
}

func benchmarkPodStatusPatch(b *testing.B, jobWebhooks bool) {
	srv := quietServer(b)
	h := srv.Handler()
	if jobWebhooks {
		config := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "jobs"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "jobs.example.com", SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"}, ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/")},
				Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}}}}}}}
		if _, err := srv.API.Create(context.Background(), admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"), config); err != nil {
			b.Fatal(err)
		}
	}
	p := newPod("p")
	p.Namespace = "default"
	if _, err := srv.API.Create(context.Background(), corev1.SchemeGroupVersion.WithResource("pods"), p); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/%d nodes are available","lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, i)
		serve(b, h, http.MethodPatch, "/api/v1/namespaces/default/pods/p/status", "application/strategic-merge-patch+json", []byte(patch), http.StatusOK)
		i++
	}
}
