package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/batkube/batkube/pkg/metrics"
	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
)

// scrape reads the server's /metrics with a plain HTTP client and the
// Prometheus text parser.
func scrape(t *testing.T, ts *servertest.Server) metrics.Families {
	t.Helper()
	resp, err := http.Get(ts.URL + metrics.Path)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: Content-Type %q, want the Prometheus text format", ct)
	}
	f, err := metrics.Parse(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// requestLabels are apiserver_request_total's labels for a request to the
// core group's v1.
func requestLabels(verb, resource, subresource, scope, code string) map[string]string {
	return map[string]string{"verb": verb, "dry_run": "", "group": "", "version": "v1", "resource": resource,
		"subresource": subresource, "scope": scope, "component": "apiserver", "code": code}
}

// TestMetricsCountRequestsAsKubeAPIServer makes a request of every verb with
// client-go and checks /metrics counts each under the labels kube-apiserver
// gives it: LIST vs GET by scope, POST for creates and bindings, PUT,
// PATCH vs APPLY, DELETE for a deletecollection too, the dry_run label, the
// response code; and that every counted request was timed.
func TestMetricsCountRequestsAsKubeAPIServer(t *testing.T) {
	ts := servertest.StartDefault(t)
	cs := ts.Clientset()
	ctx := ctxT(t)
	pods := cs.CoreV1().Pods("default")
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err := pods.Create(ctx, newPod("p"), metav1.CreateOptions{})
	must("create", err)
	if _, err := pods.Create(ctx, newPod("p"), metav1.CreateOptions{}); err == nil {
		t.Fatal("creating p twice succeeded")
	}
	_, err = pods.Create(ctx, newPod("dry"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	must("dry-run create", err)
	p, err := pods.Get(ctx, "p", metav1.GetOptions{})
	must("get", err)
	if _, err := pods.Get(ctx, "missing", metav1.GetOptions{}); err == nil {
		t.Fatal("getting a missing pod succeeded")
	}
	_, err = pods.List(ctx, metav1.ListOptions{})
	must("list", err)
	_, err = cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	must("list all namespaces", err)
	p.Labels["updated"] = "yes"
	p, err = pods.Update(ctx, p, metav1.UpdateOptions{})
	must("update", err)
	p.Status.Message = "status"
	_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	must("update status", err)
	_, err = pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"yes"}}}`), metav1.PatchOptions{})
	must("patch", err)
	_, err = cs.CoreV1().ConfigMaps("default").Apply(ctx, corev1apply.ConfigMap("applied", "default").WithData(map[string]string{"k": "v"}),
		metav1.ApplyOptions{FieldManager: "test"})
	must("apply", err)
	must("bind", pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{}))
	must("delete", pods.Delete(ctx, "p", metav1.DeleteOptions{}))
	must("deletecollection", cs.CoreV1().ConfigMaps("default").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))

	f := scrape(t, ts)
	for _, c := range []struct {
		what   string
		labels map[string]string
	}{
		{"create", requestLabels("POST", "pods", "", "resource", "201")},
		{"create conflict", requestLabels("POST", "pods", "", "resource", "409")},
		{"get", requestLabels("GET", "pods", "", "resource", "200")},
		{"get missing", requestLabels("GET", "pods", "", "resource", "404")},
		{"list in a namespace", requestLabels("LIST", "pods", "", "namespace", "200")},
		{"list in all namespaces", requestLabels("LIST", "pods", "", "cluster", "200")},
		{"update", requestLabels("PUT", "pods", "", "resource", "200")},
		{"update status", requestLabels("PUT", "pods", "status", "resource", "200")},
		{"patch", requestLabels("PATCH", "pods", "", "resource", "200")},
		{"bind", requestLabels("POST", "pods", "binding", "resource", "201")},
		{"delete", requestLabels("DELETE", "pods", "", "resource", "200")},
		{"deletecollection", requestLabels("DELETE", "configmaps", "", "namespace", "200")},
	} {
		if got := f.Sum("apiserver_request_total", c.labels); got != 1 {
			t.Errorf("%s: apiserver_request_total%v = %g, want 1", c.what, c.labels, got)
		}
	}
	dry := requestLabels("POST", "pods", "", "resource", "201")
	dry["dry_run"] = "All"
	if got := f.Sum("apiserver_request_total", dry); got != 1 {
		t.Errorf("dry-run create: apiserver_request_total%v = %g, want 1", dry, got)
	}
	apply := requestLabels("APPLY", "configmaps", "", "resource", "")
	delete(apply, "code")
	if got := f.Sum("apiserver_request_total", apply); got != 1 {
		t.Errorf("apply: apiserver_request_total%v = %g, want 1", apply, got)
	}
	const requests = 14 // every request above
	if got := f.Sum("apiserver_request_total", nil); got != requests {
		t.Errorf("apiserver_request_total = %g in all, want %d: %v", got, requests, f.SumBy("apiserver_request_total", "verb", nil))
	}
	h, ok := f.Histogram("apiserver_request_duration_seconds", nil)
	if !ok || h.Count != requests || !(h.Sum > 0) {
		t.Errorf("apiserver_request_duration_seconds: %d observations summing to %g s (found: %v), want %d timed requests", int(h.Count), h.Sum, ok, requests)
	}
}

// TestMetricsOpenWatches opens a client-go watch, checks that
// apiserver_longrunning_requests and apiserver_registered_watchers count it
// while it is open and that its events are counted, then stops it and
// checks the gauges come back to 0 and the watch is counted as one WATCH
// request.
func TestMetricsOpenWatches(t *testing.T) {
	ts := servertest.StartDefault(t)
	cs := ts.ProtobufClientset()
	ctx := ctxT(t)
	cms := cs.CoreV1().ConfigMaps("default")
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	const created = 3
	for i := range created {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for range created {
		select {
		case <-w.ResultChan():
		case <-ctx.Done():
			t.Fatal("the watch did not deliver the creations")
		}
	}
	watch := map[string]string{"verb": "WATCH", "group": "", "version": "v1", "resource": "configmaps", "subresource": "",
		"scope": "namespace", "component": "apiserver"}
	watchers := map[string]string{"group": "", "version": "v1", "kind": "ConfigMap"}
	f := scrape(t, ts)
	if got := f.Sum("apiserver_longrunning_requests", watch); got != 1 {
		t.Errorf("open watch: apiserver_longrunning_requests%v = %g, want 1", watch, got)
	}
	if got := f.Sum("apiserver_registered_watchers", watchers); got != 1 {
		t.Errorf("open watch: apiserver_registered_watchers%v = %g, want 1", watchers, got)
	}
	// The events were flushed before the client read them.
	if got := f.Sum("apiserver_watch_events_total", map[string]string{"resource": "configmaps"}); got != created {
		t.Errorf("apiserver_watch_events_total{resource=configmaps} = %g, want %d", got, created)
	}
	if got := f.Sum("apiserver_request_total", map[string]string{"verb": "WATCH"}); got != 0 {
		t.Errorf("an open watch is counted in apiserver_request_total (%g): kube-apiserver counts it when it ends", got)
	}

	w.Stop()
	// The server notices the closed connection on its own time.
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		f = scrape(t, ts)
		return f.Sum("apiserver_request_total", map[string]string{"verb": "WATCH"}) == 1, nil
	})
	if err != nil {
		t.Fatalf("the stopped watch was never counted as a finished WATCH request: %v", err)
	}
	if got := f.Sum("apiserver_longrunning_requests", watch); got != 0 {
		t.Errorf("closed watch: apiserver_longrunning_requests%v = %g, want 0", watch, got)
	}
	if got := f.Sum("apiserver_registered_watchers", watchers); got != 0 {
		t.Errorf("closed watch: apiserver_registered_watchers%v = %g, want 0", watchers, got)
	}
	done := requestLabels("WATCH", "configmaps", "", "namespace", "200")
	if got := f.Sum("apiserver_request_total", done); got != 1 {
		t.Errorf("closed watch: apiserver_request_total%v = %g, want 1", done, got)
	}
}

// TestMetricsFormats: /metrics answers OpenMetrics to a scraper that asks
// for it, carries the Go runtime's and the process's metrics, and is not
// served with NoMetrics.
func TestMetricsFormats(t *testing.T) {
	ts := servertest.StartDefault(t)
	a := send(ctxT(t), t, ts.URL, http.MethodGet, metrics.Path, "", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5", nil)
	if !strings.HasPrefix(a.contentType, "application/openmetrics-text") || !strings.HasSuffix(strings.TrimSpace(string(a.body)), "# EOF") {
		t.Errorf("OpenMetrics asked: Content-Type %q, body ending %q", a.contentType, tail(string(a.body), 20))
	}
	f := scrape(t, ts)
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if !f.Has(name) {
			t.Errorf("/metrics has no %s", name)
		}
	}

	off := servertest.Start(t, server.Options{NoMetrics: true})
	if code, status := do(t, off, http.MethodGet, metrics.Path, "", ""); code != http.StatusNotFound || status.Code != http.StatusNotFound {
		t.Errorf("NoMetrics: GET /metrics answered %d, Status code %d, want 404 as a Status", code, status.Code)
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// BenchmarkRequestMetrics measures the request metrics' cost on the whole
// request path: a GET of one pod over HTTP (the cheapest request), with
// and without the metrics, side by side. cpu_us/op is the process's CPU
// time (server and client) per request, less sensitive than the wall
// time to what else runs on the machine.
func BenchmarkRequestMetrics(b *testing.B) {
	for _, c := range []struct {
		name string
		off  bool
	}{{"off", true}, {"on", false}} {
		b.Run(c.name, func(b *testing.B) {
			ts := servertest.Start(b, server.Options{NoMetrics: c.off})
			p := newPod("p")
			p.Namespace = "default"
			if _, err := ts.API.Create(context.Background(), corev1.SchemeGroupVersion.WithResource("pods"), p); err != nil {
				b.Fatal(err)
			}
			client := &http.Client{}
			url := ts.URL + "/api/v1/namespaces/default/pods/p"
			b.ReportAllocs()
			var before, after syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			for b.Loop() {
				resp, err := client.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatal(resp.Status)
				}
			}
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu_us/op")
		})
	}
}
