package server_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/batkube/batkube/pkg/server/servertest"
)

// TestAgentVersionReadsTheClientsUserAgent: the version a client states in
// its User-Agent is known while it watches, the lowest of several.
func TestAgentVersionReadsTheClientsUserAgent(t *testing.T) {
	ts := servertest.StartDefault(t)
	if v := ts.API.AgentVersion("kube-scheduler"); v != "" {
		t.Fatalf("before any client: %q, want none", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, agent := range []string{"kube-scheduler/v1.37.1 (linux/amd64) kubernetes/$Format/scheduler", "kube-scheduler/v1.18.19 (linux/amd64) kubernetes/$Format", "kubectl/v1.9.0"} {
		cfg := ts.Config()
		cfg.UserAgent = agent
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		w, err := cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
	}
	// A watch is counted before its response headers are sent, so before
	// Watch returns.
	if v := ts.API.AgentVersion("kube-scheduler"); v != "v1.18.19" {
		t.Fatalf("AgentVersion = %q, want v1.18.19 (the lowest kube-scheduler watching)", v)
	}
}
