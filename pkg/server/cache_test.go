package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/server/servertest"
	"github.com/batkube/batkube/pkg/store"
)

// The encodings of a stored object are memoised and shared by every list,
// GET and watch event (pkg/store Stored.Encoded, pkg/apiserver
// storedBytes), its field selector values too (store: fieldSet), and the
// hot operations take a fast path: TestEveryClientSeesEveryChange checks
// that each change of a pod, whatever path made it (a PUT, a binding and a
// status patch on the fast path, an in-process write as the broker makes),
// reaches every client in every encoding, right after each client has read
// (and so memoised) the previous state.

// cacheAccepts are the Accept headers of the clients: every media type and
// shape the server encodes a pod in.
var cacheAccepts = map[string]string{
	"json":                    "application/json",
	"yaml":                    "application/yaml",
	"protobuf":                "application/vnd.kubernetes.protobuf",
	"table":                   "application/json;as=Table;v=v1;g=meta.k8s.io",
	"metadata json":           "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
	"metadata protobuf":       "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
	"metadata list json":      "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
	"metadata list protobuf":  "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
	"table, then json":        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
	"protobuf, then anything": "application/vnd.kubernetes.protobuf, */*",
}

// streamRecorder keeps what a watch stream has sent so far.
type streamRecorder struct {
	mu   sync.Mutex
	data []byte
	more chan struct{} // closed and replaced at every read
	done bool
}

func (r *streamRecorder) record(body io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		r.mu.Lock()
		r.data = append(r.data, buf[:n]...)
		close(r.more)
		r.more = make(chan struct{})
		if err != nil {
			r.done = true
		}
		r.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// waitFor waits until the stream has sent want, or fails.
func (r *streamRecorder) waitFor(ctx context.Context, t *testing.T, name string, want string) {
	t.Helper()
	for {
		r.mu.Lock()
		found, done, more := bytes.Contains(r.data, []byte(want)), r.done, r.more
		r.mu.Unlock()
		if found {
			return
		}
		if done {
			t.Fatalf("watch %s ended without sending %q", name, want)
		}
		select {
		case <-more:
		case <-ctx.Done():
			t.Fatalf("watch %s did not send %q", name, want)
		}
	}
}

func openWatch(ctx context.Context, t *testing.T, url, accept string) *streamRecorder {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch %s: %s", url, resp.Status)
	}
	r := &streamRecorder{more: make(chan struct{})}
	go func() {
		defer resp.Body.Close()
		r.record(bufio.NewReader(resp.Body))
	}()
	return r
}

func TestEveryClientSeesEveryChange(t *testing.T) {
	ctx := ctxT(t)
	ts := servertest.StartDefault(t)
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	p := newPod("cached")
	p.Namespace = "default"
	p.Labels["marker"] = "m0"
	created, err := ts.API.Create(ctx, pods, p)
	if err != nil {
		t.Fatal(err)
	}
	start := created.Object().GetResourceVersion()
	const (
		get  = "/api/v1/namespaces/default/pods/cached"
		list = "/api/v1/namespaces/default/pods"
	)
	// Watches of every encoding, from before the changes; one that selects
	// the pod by a field its changes set (it matches only once bound).
	watches := map[string]*streamRecorder{}
	for name, accept := range cacheAccepts {
		if strings.Contains(accept, "PartialObjectMetadataList") {
			continue // a list shape: watches send PartialObjectMetadata
		}
		watches[name] = openWatch(ctx, t, ts.URL+list+"?watch=true&resourceVersion="+start, accept)
		watches[name+", all namespaces"] = openWatch(ctx, t, ts.URL+"/api/v1/pods?watch=true&resourceVersion="+start, accept)
	}
	watches["json, on node-b"] = openWatch(ctx, t, ts.URL+"/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dnode-b&resourceVersion="+start, "application/json")
	watches["protobuf, still running"] = openWatch(ctx, t, ts.URL+"/api/v1/pods?watch=true&fieldSelector=status.phase!%3DSucceeded&resourceVersion="+start, "application/vnd.kubernetes.protobuf")

	// readAll reads the pod through every list and GET in every encoding,
	// memoising whatever the server memoises, and checks each answer shows
	// want and not the markers before it.
	readAll := func(want, metaWant, rowWant string, stale []string) {
		t.Helper()
		for name, accept := range cacheAccepts {
			want := want
			switch {
			case strings.Contains(accept, "PartialObjectMetadata"):
				want = metaWant
			case strings.HasPrefix(name, "table"):
				want = rowWant
			}
			for _, path := range []string{get, list, "/api/v1/pods", list + "?limit=1", list + "?labelSelector=app%3Dtest", list + "?fieldSelector=metadata.name%3Dcached"} {
				if strings.Contains(accept, "PartialObjectMetadataList") && path == get {
					continue // not an answer for one object
				}
				a := send(ctx, t, ts.URL, http.MethodGet, path, "", accept, nil)
				if a.code != http.StatusOK {
					t.Fatalf("%s %s: %d %s", name, path, a.code, a.body)
				}
				if !bytes.Contains(a.body, []byte(want)) {
					t.Errorf("%s %s: the answer does not show %q:\n%q", name, path, want, a.body)
				}
				for _, old := range stale {
					if bytes.Contains(a.body, []byte(old)) {
						t.Errorf("%s %s: the answer still shows %q", name, path, old)
					}
				}
			}
		}
	}
	readAll("m0", "m0", "m0", nil)

	changes := []struct {
		name   string
		marker string // what the new state shows, and no earlier state did
		inMeta bool   // the marker is in the metadata (else metadata shows the new resourceVersion)
		inRow  bool   // the marker is in a table's row (else the row's metadata shows the new resourceVersion)
		change func(rv string)
	}{
		{"a PUT through the router", "m1", true, true, func(rv string) {
			cur, err := ts.Store.Get(pods.GroupResource(), "default", "cached")
			if err != nil {
				t.Fatal(err)
			}
			next := cur.Copy().(*corev1.Pod)
			next.Labels["marker"] = "m1"
			a := send(ctx, t, ts.URL, http.MethodPut, get, "application/json", "application/json", encode(t, "application/json", typed(next)))
			if a.code != http.StatusOK {
				t.Fatalf("PUT: %d %s", a.code, a.body)
			}
		}},
		{"a binding on the fast path", "node-b", false, true, func(string) {
			before := ts.API.FastPathRequests()
			b := &corev1.Binding{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"}, ObjectMeta: metav1.ObjectMeta{Name: "cached"},
				Target: corev1.ObjectReference{Kind: "Node", Name: "node-b"}}
			a := send(ctx, t, ts.URL, http.MethodPost, get+"/binding", "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf", encode(t, "application/vnd.kubernetes.protobuf", b))
			if a.code != http.StatusCreated || ts.API.FastPathRequests() != before+1 {
				t.Fatalf("binding: %d %s (fast path: %d requests)", a.code, a.body, ts.API.FastPathRequests()-before)
			}
		}},
		{"a status patch on the fast path", "m3-message", false, false, func(string) {
			a := send(ctx, t, ts.URL, http.MethodPatch, get+"/status", "application/strategic-merge-patch+json", "application/json",
				[]byte(`{"status":{"conditions":[{"type":"Ready","status":"False","message":"m3-message"}]}}`))
			if a.code != http.StatusOK {
				t.Fatalf("patch: %d %s", a.code, a.body)
			}
		}},
		{"an in-process write, as the broker's", "m4", true, true, func(string) {
			if _, err := ts.Store.Change(ctx, pods.GroupResource(), "default", "cached", func(cur store.Object) (store.Object, error) {
				cur.SetLabels(map[string]string{"app": "test", "marker": "m4"})
				return cur, nil
			}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	var stale []string
	previous := "m0"
	for _, c := range changes {
		before := ts.Store.CurrentRV()
		c.change(fmt.Sprint(before))
		rv := ts.Store.CurrentRV()
		for name, w := range watches {
			if name == "json, on node-b" && c.marker == "m1" {
				continue // not bound yet: the pod is not selected
			}
			want := c.marker
			if (strings.HasPrefix(name, "metadata") && !c.inMeta) || (strings.HasPrefix(name, "table") && !c.inRow) {
				want = rvMarker(name, rv)
			}
			w.waitFor(ctx, t, name+" after "+c.name, want)
		}
		if c.marker != "node-b" && c.marker != "m3-message" { // these stay in later states
			stale = append(stale, previous)
			previous = c.marker
		}
		metaWant, rowWant := c.marker, c.marker
		if !c.inMeta {
			metaWant = fmt.Sprint(rv) // the object's RV, as text in both encodings
		}
		if !c.inRow {
			rowWant = rvMarker("table", rv)
		}
		readAll(c.marker, metaWant, rowWant, stale)
		// The state before the change, as an exact-RV list shows it, is
		// not the new one.
		a := send(ctx, t, ts.URL, http.MethodGet, fmt.Sprintf("%s?resourceVersion=%d&resourceVersionMatch=Exact", list, before), "", "application/vnd.kubernetes.protobuf", nil)
		if a.code != http.StatusOK || bytes.Contains(a.body, []byte(c.marker)) {
			t.Errorf("after %s, the list at RV %d: %d, shows %q: %t", c.name, before, a.code, c.marker, bytes.Contains(a.body, []byte(c.marker)))
		}
	}
}

// rvMarker is how an object's metadata shows resourceVersion rv in the
// encoding of the named client: as a JSON field, or as field 6 of
// ObjectMeta in protobuf.
func rvMarker(client string, rv uint64) string {
	v := fmt.Sprint(rv)
	if strings.Contains(client, "protobuf") {
		return string([]byte{0x32, byte(len(v))}) + v
	}
	return `"resourceVersion":"` + v + `"`
}

// typed sets the kind of a pod for encoding it as a request body.
func typed(p *corev1.Pod) *corev1.Pod {
	p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	return p
}
