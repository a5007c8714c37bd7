package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectl runs the upstream kubectl against the cluster and returns its output.
func (c *cluster) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.runKubectl(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// kubectlFails runs kubectl expecting it to fail, and returns its output.
func (c *cluster) kubectlFails(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.runKubectl(t, args...)
	if err == nil {
		t.Fatalf("kubectl %s succeeded, want a failure:\n%s", strings.Join(args, " "), out)
	}
	return out
}

// runKubectl runs kubectl with the cluster's kubeconfig, its home and
// discovery cache in the cluster's folder.
func (c *cluster) runKubectl(t *testing.T, args ...string) (string, error) {
	ctx := testContext(t, 60*time.Second)
	cmd := exec.CommandContext(ctx, binary(t, "kubectl"), append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+c.dir, "KUBECACHEDIR="+filepath.Join(c.dir, "cache"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

const manifest = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  containers:
  - name: nginx
    image: nginx:1.27
    resources:
      requests:
        cpu: 250m
        memory: 64Mi
`

func TestKubectl(t *testing.T) {
	c := startCluster(t)
	file := filepath.Join(c.dir, "pod.yaml")
	writeFile(t, file, []byte(manifest))
	steps := []struct {
		args []string
		want []string
	}{
		{[]string{"apply", "-f", file}, []string{"pod/web created"}},
		{[]string{"get", "pods"}, []string{"NAME", "STATUS", "web", "Pending"}},
		{[]string{"get", "pod", "web", "-o", "yaml"}, []string{"name: web", "cpu: 250m", "phase: Pending", "schedulerName: default-scheduler"}},
		{[]string{"describe", "pod", "web"}, []string{"Name:", "web", "nginx:1.27", "Status:", "Pending"}},
		{[]string{"get", "namespaces"}, []string{"default", "kube-system", "Active"}},
		{[]string{"api-resources"}, []string{"pods", "po", "nodes", "leases", "coordination.k8s.io/v1", "deployments"}},
		{[]string{"explain", "pod.spec.schedulerName"}, []string{"schedulerName", "string"}},
	}
	for _, s := range steps {
		out := c.kubectl(t, s.args...)
		for _, w := range s.want {
			if !strings.Contains(out, w) {
				t.Errorf("kubectl %s: output lacks %q:\n%s", strings.Join(s.args, " "), w, out)
			}
		}
	}

	// A second apply is a strategic merge patch.
	changed := strings.Replace(manifest, "app: web", "app: web\n    tier: front", 1)
	writeFile(t, file, []byte(changed))
	if out := c.kubectl(t, "apply", "-f", file); !strings.Contains(out, "pod/web configured") {
		t.Errorf("second apply: %s", out)
	}
	pod, err := c.client.CoreV1().Pods("default").Get(testContext(t, 10*time.Second), "web", metav1.GetOptions{})
	if err != nil || pod.Labels["tier"] != "front" {
		t.Fatalf("after the second apply: %v, labels %v", err, pod.Labels)
	}

	// get -w prints the pods that appear.
	ctx := testContext(t, 60*time.Second)
	watch := exec.CommandContext(ctx, binary(t, "kubectl"), "--kubeconfig", c.kubeconfig, "get", "pods", "-w")
	watch.Env = append(os.Environ(), "HOME="+c.dir)
	stdout, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.Contains(lines.Text(), "NAME") {
		t.Fatalf("get -w: first line %q, want the header", lines.Text())
	}
	if !lines.Scan() || !strings.Contains(lines.Text(), "web") {
		t.Fatalf("get -w: second line %q, want web", lines.Text())
	}
	second := strings.Replace(manifest, "name: web", "name: late", 1)
	writeFile(t, file, []byte(second))
	c.kubectl(t, "apply", "-f", file)
	if !lines.Scan() || !strings.Contains(lines.Text(), "late") {
		t.Fatalf("get -w: got %q, want the new pod late", lines.Text())
	}
	_ = watch.Process.Kill()
	_ = watch.Wait()

	if out := c.kubectl(t, "delete", "pod", "web"); !strings.Contains(out, `pod "web" deleted`) {
		t.Errorf("delete: %s", out)
	}
	if _, err := c.client.CoreV1().Pods("default").Get(testContext(t, 10*time.Second), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after kubectl delete: got %v, want 404", err)
	}
}
