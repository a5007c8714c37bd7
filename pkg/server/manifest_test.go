package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/server/servertest"
)

// TestCreateManifestMakesObjectsClientsSee: the objects of a multi-document
// YAML manifest (a List among them) are created and served; a pod that names
// a created PriorityClass then gets its priority.
func TestCreateManifestMakesObjectsClientsSee(t *testing.T) {
	ts := servertest.StartDefault(t)
	ctx := context.Background()
	manifest := `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: team-a}
- {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "team-a"}, "data": {"k": "v"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  priorityClassName: high
  containers: [{name: c, image: i}]
`
	created, err := ts.API.CreateManifest(ctx, []byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"priorityclasses/high", "namespaces/team-a", "configmaps/settings", "pods/p"}; !slices.Equal(created, want) {
		t.Fatalf("created %v, want %v", created, want)
	}
	cs := ts.Clientset()
	if cm, err := cs.CoreV1().ConfigMaps("team-a").Get(ctx, "settings", metav1.GetOptions{}); err != nil || cm.Data["k"] != "v" {
		t.Errorf("configmap: %v %v", cm, err)
	}
	pod, err := cs.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if err != nil || pod.Spec.Priority == nil || *pod.Spec.Priority != 1000 {
		t.Errorf("pod in the default namespace with the priority of its class: %v, %v", pod, err)
	}

	for doc, want := range map[string]string{
		"apiVersion: v1\nkind: Gadget\nmetadata: {name: x}\n":              "not served",
		"kind: Namespace\nmetadata: {name: y}\n":                           "apiVersion and kind are required",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n":      "already exists",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec: {}\n":       "is invalid",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: z}\ndata: [1\n": "document 1",
	} {
		if _, err := ts.API.CreateManifest(ctx, []byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("manifest %q: %v, want an error with %q", doc, err, want)
		}
	}
}
