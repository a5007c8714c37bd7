package e2e

import (
	"context"
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
