package e2e

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
	"github.com/batkube/batkube/pkg/store"
)

// TestMetricsAuthDelegatedByKubeScheduler starts an unmodified kube-scheduler
// 1.37 whose secure port delegates authentication and authorisation to
// Batkube, and checks its /metrics answers as Batkube's reviews decide: a
// reader's token (authenticated by a TokenReview, allowed by a
// SubjectAccessReview: not in system:masters, which the scheduler would
// allow without asking) gets the metrics; an unknown token is refused (401),
// and a known user or an anonymous client that the policy does not allow is
// forbidden (403). The scheduler itself reaches Batkube without credentials:
// client-go sends a kubeconfig's token only over TLS, and Batkube serves
// plain HTTP.
func TestMetricsAuthDelegatedByKubeScheduler(t *testing.T) {
	bin := binary(t, "kube-scheduler")
	const reader, intruder = "reader-token", "intruder-token"
	ts := servertest.Start(t, server.Options{
		Authenticator: apiserver.StaticTokens{
			reader:   {Username: "metrics-reader", Groups: []string{"metrics-readers"}},
			intruder: {Username: "intruder"},
		},
		Authorizer: apiserver.AllowGroups{apiserver.SystemMasters, "metrics-readers"},
	})
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeFile(t, kubeconfig, []byte(launch.Kubeconfig(ts.URL)))
	port := freePort(t)
	ctx := testContext(t, 2*time.Minute)
	logPath := filepath.Join(dir, "kube-scheduler.log")
	cmd := command(ctx, t, logPath, bin, "--kubeconfig", kubeconfig, "--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig, "--secure-port", strconv.Itoa(port), "--bind-address", "127.0.0.1", "--v", "2")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Cancel()
		<-exited
	})
	fail := func(format string, args ...any) {
		t.Helper()
		log, _ := os.ReadFile(logPath)
		t.Fatalf(format+"\nkube-scheduler log:\n%s", append(args, tail(string(log), 40))...)
	}

	// The scheduler's certificate is self-signed, in memory.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer client.CloseIdleConnections()
	base := fmt.Sprintf("https://127.0.0.1:%d", port)
	get := func(path, token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	// until polls f until it reports done, failing at the deadline or when
	// the scheduler exits.
	until := func(what string, f func() (done bool, last string)) {
		t.Helper()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			done, last := f()
			if done {
				return
			}
			select {
			case err := <-exited:
				exited <- err
				fail("kube-scheduler exited (%v) before %s; last: %s", err, what, last)
			case <-ctx.Done():
				fail("no %s before the deadline; last: %s", what, last)
			case <-tick.C:
			}
		}
	}
	until("secure port serving /healthz", func() (bool, string) {
		code, body, err := get("/healthz", "")
		return err == nil && code == http.StatusOK, fmt.Sprintf("%d %q %v", code, body, err)
	})
	until("metrics for the reader", func() (bool, string) {
		code, body, err := get("/metrics", reader)
		if err == nil && code != http.StatusOK {
			fail("GET /metrics with the reader's token: %d %s", code, tail(body, 5))
		}
		return err == nil && strings.Contains(body, "scheduler_pending_pods"), fmt.Sprintf("%d %s %v", code, tail(body, 3), err)
	})
	for _, tt := range []struct {
		who, token string
		want       int
	}{
		{"an unknown token", "wrong-token", http.StatusUnauthorized},
		{"a user the policy refuses", intruder, http.StatusForbidden},
		{"no token (system:anonymous)", "", http.StatusForbidden},
	} {
		code, body, err := get("/metrics", tt.token)
		if err != nil || code != tt.want {
			fail("GET /metrics with %s: got %d %s %v, want %d", tt.who, code, tail(body, 5), err, tt.want)
		}
	}

	// The scheduler asked Batkube, and Batkube stored none of it.
	seen := map[string]bool{}
	for _, r := range ts.Requests() {
		if r.Method == "POST" && r.Code == http.StatusCreated {
			seen[strings.Split(r.URI, "?")[0]] = true
		}
	}
	for _, path := range []string{"/apis/authentication.k8s.io/v1/tokenreviews", "/apis/authorization.k8s.io/v1/subjectaccessreviews"} {
		if !seen[path] {
			t.Errorf("kube-scheduler did not POST %s", path)
		}
	}
	for _, gr := range []schema.GroupResource{{Group: "authentication.k8s.io", Resource: "tokenreviews"}, {Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}} {
		if res, err := ts.Store.List(gr, store.ListOptions{}); err != nil || len(res.Items) > 0 {
			t.Errorf("%s in the store: %d (%v)", gr, len(res.Items), err)
		}
	}
}
