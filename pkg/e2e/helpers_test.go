package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/server/servertest"
)

// cluster is a Batkube server with a kubeconfig pointing at it.
type cluster struct {
	*servertest.Server
	kubeconfig string
	client     kubernetes.Interface
	dir        string
}

func startCluster(t testing.TB) *cluster {
	t.Helper()
	ts := servertest.StartDefault(t)
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	content := launch.Kubeconfig(ts.URL)
	writeFile(t, kubeconfig, []byte(content))
	return &cluster{Server: ts, kubeconfig: kubeconfig, client: ts.Clientset(), dir: dir}
}

// testContext returns a context that ends with the test or after d.
func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// command prepares an upstream binary with its output kept in a log file.
func command(ctx context.Context, t testing.TB, logPath, bin string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cmd.Stdout, cmd.Stderr = f, f
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// writeJSON writes v to path as JSON, or fails t.
func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, data)
}

// readFile returns the content of path, or fails t.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// writeFile writes data to path, or fails t.
func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// schedulerConfig is a minimal KubeSchedulerConfiguration for an upstream
// binary (kube-scheduler or kube-scheduler-1.18): the cluster's kubeconfig,
// client limits raised, leader election on.
func schedulerConfig(binary, kubeconfig string) []byte {
	apiVersion := "kubescheduler.config.k8s.io/v1"
	if binary == "kube-scheduler-1.18" {
		apiVersion = "kubescheduler.config.k8s.io/v1alpha2"
	}
	return fmt.Appendf(nil, `apiVersion: %s
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: 5000
  burst: 5000
leaderElection:
  leaderElect: true
`, apiVersion, kubeconfig)
}
