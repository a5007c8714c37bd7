package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubectlFails runs kubectl expecting it to fail, and returns its output.
func (c *cluster) kubectlFails(t *testing.T, args ...string) string {
	t.Helper()
	ctx := testContext(t, 60*time.Second)
	cmd := exec.CommandContext(ctx, binary(t, "kubectl"), append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+c.dir, "KUBECACHEDIR="+filepath.Join(c.dir, "cache"))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("kubectl %s succeeded, want a failure:\n%s", strings.Join(args, " "), out)
	}
	return string(out)
}

const widgetManifest = `apiVersion: example.batkube.io/v1
kind: Widget
metadata:
  name: a
spec:
  color: blue
  replicas: 2
`

// TestKubectlCustomResources: the life of a custom resource as the upstream
// kubectl 1.37 lives it against Batkube — apply a CustomResourceDefinition,
// wait for it to be established, apply objects, get them with the printer
// columns (and by short name, and with a field selector on a selectable
// field), write their status, scale them, see a schema's refusal, delete
// the definition, after which kubectl no longer knows the resource.
func TestKubectlCustomResources(t *testing.T) {
	c := startCluster(t)
	crd := abs(repoRoot(), "pkg/crd/testdata/widgets.yaml")
	file := filepath.Join(c.dir, "widget.yaml")
	if err := os.WriteFile(file, []byte(widgetManifest), 0o600); err != nil {
		t.Fatal(err)
	}
	badFile := filepath.Join(c.dir, "bad.yaml")
	if err := os.WriteFile(badFile, []byte(strings.Replace(strings.Replace(widgetManifest, "blue", "purple", 1), "name: a", "name: bad", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	ssaFile := filepath.Join(c.dir, "ssa.yaml")
	ssaOther := filepath.Join(c.dir, "ssa-other.yaml")
	ssa := strings.Replace(widgetManifest, "name: a", "name: b", 1)
	if err := os.WriteFile(ssaFile, []byte(ssa), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ssaOther, []byte(strings.Replace(ssa, "blue", "red", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args []string
		want []string
	}{
		{[]string{"apply", "-f", crd}, []string{"customresourcedefinition.apiextensions.k8s.io/widgets.example.batkube.io created"}},
		{[]string{"wait", "--for", "condition=established", "crd/widgets.example.batkube.io", "--timeout=30s"}, []string{"condition met"}},
		{[]string{"get", "crd"}, []string{"widgets.example.batkube.io"}},
		{[]string{"apply", "-f", file}, []string{"widget.example.batkube.io/a created"}},
		{[]string{"get", "widgets"}, []string{"NAME", "COLOR", "REPLICAS", "READY", "AGE", "a", "blue", "2"}},
		{[]string{"get", "wd", "a", "-o", "jsonpath={.spec.maxReplicas} {.metadata.generation}"}, []string{"10 1"}},
		{[]string{"patch", "widget", "a", "--subresource=status", "--type=merge", "-p", `{"status":{"replicas":2,"selector":"app=a"}}`}, []string{"widget.example.batkube.io/a patched"}},
		{[]string{"scale", "widget", "a", "--replicas=4"}, []string{"widget.example.batkube.io/a scaled"}},
		{[]string{"get", "widget", "a", "-o", "jsonpath={.spec.replicas} {.status.replicas} {.metadata.generation}"}, []string{"4 2 2"}},
		{[]string{"get", "widgets", "--field-selector", "spec.color=blue", "-o", "name"}, []string{"widget.example.batkube.io/a"}},
		{[]string{"apply", "--server-side", "-f", ssaFile}, []string{"widget.example.batkube.io/b serverside-applied"}},
		{[]string{"get", "widget", "b", "-o", "jsonpath={.metadata.managedFields[0].manager} {.metadata.managedFields[0].operation}"}, []string{"kubectl Apply"}},
		{[]string{"apply", "--server-side", "--force-conflicts", "--field-manager=ops", "-f", ssaOther}, []string{"widget.example.batkube.io/b serverside-applied"}},
		{[]string{"get", "widget", "b", "-o", "jsonpath={.spec.color}"}, []string{"red"}},
		{[]string{"delete", "crd", "widgets.example.batkube.io"}, []string{`customresourcedefinition.apiextensions.k8s.io "widgets.example.batkube.io" deleted`}},
	}
	for i, s := range steps {
		if strings.Contains(strings.Join(s.args, " "), "--force-conflicts") {
			// Another manager taking kubectl's field is refused unless forced.
			out := c.kubectlFails(t, "apply", "--server-side", "--field-manager=ops", "-f", ssaOther)
			if !strings.Contains(out, "conflict") || !strings.Contains(out, ".spec.color") {
				t.Errorf("a server-side apply taking another manager's field: %s", out)
			}
		}
		if i == len(steps)-1 {
			// The schema's refusal, before the definition goes.
			if out := c.kubectlFails(t, "apply", "-f", badFile); !strings.Contains(out, `Unsupported value: "purple"`) {
				t.Errorf("apply of a widget of color purple: %s", out)
			}
		}
		out := c.kubectl(t, s.args...)
		for _, w := range s.want {
			if !strings.Contains(out, w) {
				t.Errorf("kubectl %s: output lacks %q:\n%s", strings.Join(s.args, " "), w, out)
			}
		}
	}
	// kubectl's discovery cache still knows the resource: the server says
	// it is not found; with its cache renewed, kubectl knows it no more.
	if out := c.kubectlFails(t, "get", "widgets"); !strings.Contains(out, "NotFound") {
		t.Errorf("kubectl get widgets once the definition is gone: %s", out)
	}
	if err := os.RemoveAll(filepath.Join(c.dir, "cache")); err != nil {
		t.Fatal(err)
	}
	if out := c.kubectlFails(t, "get", "widgets"); !strings.Contains(out, `the server doesn't have a resource type "widgets"`) {
		t.Errorf("kubectl get widgets once the definition is gone, discovery renewed: %s", out)
	}
}
