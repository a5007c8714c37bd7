package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
)

// TestFastPathAnswersAsTheRouter sends the same requests for the hot
// operations to two servers in the same state: to one as they are (the
// plain ones take the fast path), to the other with an extra query
// parameter the generated router ignores and the fast path does not take.
// Both must answer the same status, media type and bytes (uids aside, which
// are random), and only the plain requests may have taken the fast path.
func TestFastPathAnswersAsTheRouter(t *testing.T) {
	ctx := ctxT(t)
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fast := servertest.Start(t, server.Options{Clock: clock})
	routed := servertest.Start(t, server.Options{Clock: clock})
	for _, ts := range []*servertest.Server{fast, routed} {
		for _, name := range []string{"p-proto", "p-json", "p-status", "p-put", "p-bound"} {
			p := newPod(name)
			p.Namespace = "default"
			if _, err := ts.API.Create(ctx, corev1.SchemeGroupVersion.WithResource("pods"), p); err != nil {
				t.Fatal(err)
			}
		}
		holder := "a"
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler", Namespace: "kube-system"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
		if _, err := ts.API.Create(ctx, coordinationv1.SchemeGroupVersion.WithResource("leases"), lease); err != nil {
			t.Fatal(err)
		}
	}
	leaseRV := func(ts *servertest.Server) string {
		st, err := ts.Store.Get(coordinationv1.SchemeGroupVersion.WithResource("leases").GroupResource(), "kube-system", "kube-scheduler")
		if err != nil {
			t.Fatal(err)
		}
		return st.Object().GetResourceVersion()
	}
	if leaseRV(fast) != leaseRV(routed) {
		t.Fatalf("the two servers are not in the same state")
	}
	binding := func(name string) *corev1.Binding {
		return &corev1.Binding{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"}, ObjectMeta: metav1.ObjectMeta{Name: name},
			Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}
	}
	event := func(name string) *eventsv1.Event {
		return &eventsv1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, EventTime: metav1.NewMicroTime(clock.Now()),
			ReportingController: "default-scheduler", ReportingInstance: "i", Action: "Binding", Reason: "Scheduled", Type: "Normal",
			Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p-proto"}}
	}
	coreEvent := &corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{Name: "core-ev", Namespace: "default"}, Reason: "Scheduled", Message: "m", Type: "Normal",
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p-proto"}}
	lease := func(ts *servertest.Server, rv string) *coordinationv1.Lease {
		holder := "b"
		return &coordinationv1.Lease{TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
			ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler", Namespace: "kube-system", ResourceVersion: rv}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	}
	podStatus := func(ts *servertest.Server) *corev1.Pod {
		st, err := ts.Store.Get(corev1.SchemeGroupVersion.WithResource("pods").GroupResource(), "default", "p-put")
		if err != nil {
			t.Fatal(err)
		}
		p := st.Copy().(*corev1.Pod)
		p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"})
		return p
	}
	const (
		proto = "application/vnd.kubernetes.protobuf"
		js    = "application/json"
		smp   = "application/strategic-merge-patch+json"
		table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
	)
	type request struct {
		name, method, path, contentType, accept string
		body                                    func(ts *servertest.Server) []byte
		fast                                    bool // served on the fast path when sent as is
	}
	fixed := func(b []byte) func(*servertest.Server) []byte { return func(*servertest.Server) []byte { return b } }
	requests := []request{
		{"binding protobuf", "POST", "/api/v1/namespaces/default/pods/p-proto/binding", proto, proto + ", */*", fixed(encode(t, proto, binding("p-proto"))), true},
		{"binding JSON", "POST", "/api/v1/namespaces/default/pods/p-json/binding?timeout=5s", js, js, fixed(encode(t, js, binding("p-json"))), true},
		{"binding a bound pod", "POST", "/api/v1/namespaces/default/pods/p-proto/binding", proto, proto + ", */*", fixed(encode(t, proto, binding("p-proto"))), true},
		{"binding a missing pod", "POST", "/api/v1/namespaces/default/pods/nope/binding", proto, proto, fixed(encode(t, proto, binding("nope"))), true},
		{"binding another pod's name", "POST", "/api/v1/namespaces/default/pods/p-bound/binding", js, js, fixed(encode(t, js, binding("p-json"))), true},
		{"binding dry run", "POST", "/api/v1/namespaces/default/pods/p-bound/binding?dryRun=All", js, js, fixed(encode(t, js, binding("p-bound"))), true},
		{"binding, malformed protobuf", "POST", "/api/v1/namespaces/default/pods/p-bound/binding", proto, proto, fixed([]byte("k8s\x00garbage")), false},
		{"binding, malformed JSON", "POST", "/api/v1/namespaces/default/pods/p-bound/binding", js, js, fixed([]byte(`{"target":`)), false},
		{"binding, no body", "POST", "/api/v1/namespaces/default/pods/p-bound/binding", proto, proto, fixed(nil), false},
		{"binding, YAML", "POST", "/api/v1/namespaces/default/pods/p-bound/binding", "application/yaml", js, fixed([]byte("target: {kind: Node, name: n1}\nmetadata: {name: p-bound}\n")), false},
		{"binding, media type with a parameter", "POST", "/api/v1/namespaces/default/pods/p-bound/binding", js + "; charset=utf-8", js, fixed(encode(t, js, binding("p-bound"))), false},
		{"binding, unsupported media type", "POST", "/api/v1/namespaces/default/pods/p-bound/binding", "text/plain", js, fixed([]byte("x")), false},
		{"binding, not acceptable", "POST", "/api/v1/namespaces/default/pods/p-bound/binding", js, "text/html", fixed(encode(t, js, binding("p-bound"))), true},
		{"binding, empty namespace segment", "POST", "/api/v1/namespaces//pods/p-bound/binding", js, js, fixed(encode(t, js, binding("p-bound"))), false},
		{"event protobuf", "POST", "/apis/events.k8s.io/v1/namespaces/default/events", proto, proto + ", */*", fixed(encode(t, proto, event("ev-1"))), true},
		{"event JSON, answered in YAML", "POST", "/apis/events.k8s.io/v1/namespaces/default/events?fieldManager=x", js, "application/yaml", fixed(encode(t, js, event("ev-2"))), true},
		{"event again", "POST", "/apis/events.k8s.io/v1/namespaces/default/events", proto, proto, fixed(encode(t, proto, event("ev-1"))), true},
		{"event in another namespace than the URL's", "POST", "/apis/events.k8s.io/v1/namespaces/kube-system/events", js, js, fixed(encode(t, js, event("ev-3"))), true},
		{"event patch", "PATCH", "/apis/events.k8s.io/v1/namespaces/default/events/ev-1", "application/merge-patch+json", proto, fixed([]byte(`{"series":{"count":2,"lastObservedTime":"2026-01-01T00:00:00.000000Z"}}`)), true},
		{"event patch, force", "PATCH", "/apis/events.k8s.io/v1/namespaces/default/events/ev-1?force=maybe", "application/merge-patch+json", proto, fixed([]byte(`{"note":"x"}`)), false},
		{"core event", "POST", "/api/v1/namespaces/default/events", js, js, fixed(encode(t, js, coreEvent)), true},
		{"core event patch", "PATCH", "/api/v1/namespaces/default/events/core-ev", smp, js, fixed([]byte(`{"count":3}`)), true},
		{"pod status patch", "PATCH", "/api/v1/namespaces/default/pods/p-status/status", smp, proto + ", */*", fixed([]byte(`{"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes"}]}}`)), true},
		{"pod status JSON patch, failing test", "PATCH", "/api/v1/namespaces/default/pods/p-status/status", "application/json-patch+json", js, fixed([]byte(`[{"op":"test","path":"/status/phase","value":"Running"}]`)), true},
		{"pod status patch, not a patch type", "PATCH", "/api/v1/namespaces/default/pods/p-status/status", js, js, fixed([]byte(`{}`)), false},
		{"pod status update", "PUT", "/api/v1/namespaces/default/pods/p-put/status", proto, proto, func(ts *servertest.Server) []byte { return encode(t, proto, podStatus(ts)) }, true},
		{"lease get", "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler", "", proto + ", */*", nil, true},
		{"lease get as a table", "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler?pretty=true", "", table, nil, true},
		{"lease get, missing", "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/other", "", js, nil, true},
		{"lease renew", "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler", proto, proto, func(ts *servertest.Server) []byte { return encode(t, proto, lease(ts, leaseRV(ts))) }, true},
		{"lease renew, stale", "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler", js, js, fixed(encode(t, js, lease(nil, "1"))), true},
		{"lease get, escaped path", "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube%2Dscheduler", "", js, nil, false},
	}
	uid := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	wantFast := uint64(0)
	for _, rq := range requests {
		before := fast.API.FastPathRequests()
		var answers [2]answer
		for i, ts := range []*servertest.Server{fast, routed} {
			path := rq.path
			if ts == routed {
				path += map[bool]string{true: "&", false: "?"}[strings.Contains(path, "?")] + "batkube-test-router=1"
			}
			var body []byte
			if rq.body != nil {
				body = rq.body(ts)
			}
			answers[i] = send(ctx, t, ts.URL, rq.method, path, rq.contentType, rq.accept, body)
			answers[i].body = uid.ReplaceAll(answers[i].body, []byte("00000000-0000-0000-0000-000000000000"))
		}
		if got := fast.API.FastPathRequests() - before; got != map[bool]uint64{true: 1, false: 0}[rq.fast] {
			t.Errorf("%s: %d requests on the fast path, want fast=%v", rq.name, got, rq.fast)
		}
		if rq.fast {
			wantFast++
		}
		if answers[0].code != answers[1].code || answers[0].contentType != answers[1].contentType || !bytes.Equal(answers[0].body, answers[1].body) {
			t.Errorf("%s: the fast path answered %d %q %q, the router %d %q %q", rq.name,
				answers[0].code, answers[0].contentType, answers[0].body, answers[1].code, answers[1].contentType, answers[1].body)
		}
	}
	if got := routed.API.FastPathRequests(); got != 0 {
		t.Errorf("%d requests with an unknown parameter took the fast path", got)
	}
	if got := fast.API.FastPathRequests(); got != wantFast {
		t.Errorf("%d requests on the fast path, want %d", got, wantFast)
	}
}

type answer struct {
	code        int
	contentType string
	body        []byte
}

// send sends a request to the server at base, with a Content-Type and an
// Accept header if not empty, and returns the answer.
func send(ctx context.Context, t *testing.T, base, method, path, contentType, accept string, body []byte) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{code: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: data}
}

// encode encodes obj as a request body of the media type.
func encode(t *testing.T, media string, obj runtime.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch media {
	case "application/vnd.kubernetes.protobuf":
		if err := protoSerializer.Encode(obj, &buf); err != nil {
			t.Fatal(err)
		}
	default:
		if err := jsonSerializer.Encode(obj, &buf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}
