package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

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
	writeFile(t, file, []byte(widgetManifest))
	badFile := filepath.Join(c.dir, "bad.yaml")
	writeFile(t, badFile, []byte(strings.Replace(strings.Replace(widgetManifest, "blue", "purple", 1), "name: a", "name: bad", 1)))
	ssaFile := filepath.Join(c.dir, "ssa.yaml")
	ssaOther := filepath.Join(c.dir, "ssa-other.yaml")
	ssa := strings.Replace(widgetManifest, "name: a", "name: b", 1)
	writeFile(t, ssaFile, []byte(ssa))
	writeFile(t, ssaOther, []byte(strings.Replace(ssa, "blue", "red", 1)))
	steps := []struct {
		args         []string
		want, absent []string
		// row: the first cells of the row of the first cell row[0]
		row []string
	}{
		{args: []string{"apply", "-f", crd}, want: []string{"customresourcedefinition.apiextensions.k8s.io/widgets.example.batkube.io created"}},
		{args: []string{"wait", "--for", "condition=established", "crd/widgets.example.batkube.io", "--timeout=30s"}, want: []string{"condition met"}},
		{args: []string{"get", "crd"}, want: []string{"widgets.example.batkube.io"}},
		{args: []string{"apply", "-f", file}, want: []string{"widget.example.batkube.io/a created"}},
		{args: []string{"get", "widgets"}, want: []string{"NAME", "COLOR", "REPLICAS", "READY", "AGE"}, row: []string{"a", "blue", "2"}},
		{args: []string{"get", "wd", "a", "-o", "jsonpath={.spec.maxReplicas} {.metadata.generation}"}, want: []string{"10 1"}},
		{args: []string{"patch", "widget", "a", "--subresource=status", "--type=merge", "-p", `{"status":{"replicas":2,"selector":"app=a"}}`}, want: []string{"widget.example.batkube.io/a patched"}},
		{args: []string{"scale", "widget", "a", "--replicas=4"}, want: []string{"widget.example.batkube.io/a scaled"}},
		{args: []string{"get", "widget", "a", "-o", "jsonpath={.spec.replicas} {.status.replicas} {.metadata.generation}"}, want: []string{"4 2 2"}},
		{args: []string{"apply", "--server-side", "-f", ssaFile}, want: []string{"widget.example.batkube.io/b serverside-applied"}},
		{args: []string{"get", "widget", "b", "-o", "jsonpath={.metadata.managedFields[0].manager} {.metadata.managedFields[0].operation}"}, want: []string{"kubectl Apply"}},
		{args: []string{"apply", "--server-side", "--force-conflicts", "--field-manager=ops", "-f", ssaOther}, want: []string{"widget.example.batkube.io/b serverside-applied"}},
		{args: []string{"get", "widget", "b", "-o", "jsonpath={.spec.color}"}, want: []string{"red"}},
		{args: []string{"get", "widgets", "--field-selector", "spec.color=red", "-o", "name"}, want: []string{"widget.example.batkube.io/b"}, absent: []string{"/a"}},
		{args: []string{"get", "widgets", "--field-selector", "spec.color=blue", "-o", "name"}, want: []string{"widget.example.batkube.io/a"}, absent: []string{"/b"}},
		{args: []string{"delete", "crd", "widgets.example.batkube.io"}, want: []string{`customresourcedefinition.apiextensions.k8s.io "widgets.example.batkube.io" deleted`}},
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
		for _, a := range s.absent {
			if strings.Contains(out, a) {
				t.Errorf("kubectl %s: output has %q:\n%s", strings.Join(s.args, " "), a, out)
			}
		}
		if s.row != nil && !slices.ContainsFunc(strings.Split(out, "\n"), func(line string) bool {
			cells := strings.Fields(line)
			return len(cells) >= len(s.row) && slices.Equal(cells[:len(s.row)], s.row)
		}) {
			t.Errorf("kubectl %s: no row starting %v:\n%s", strings.Join(s.args, " "), s.row, out)
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
