package server_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/server/servertest"
)

// The group versions served to old clients only (policy/v1beta1;
// events.k8s.io/v1beta1's Events, like every Event, have no managed fields)
// have no OpenAPI v3 document: their kinds' types, for managed fields, come
// from the Swagger 2.0 spec. A write is stored with its manager's fields,
// as one of a current group version is.
func TestLegacyGroupVersionsHaveManagedFields(t *testing.T) {
	ts := servertest.StartDefault(t)
	cfg := ts.Config()
	cfg.UserAgent = "legacy-client"
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		gvr schema.GroupVersionResource
		obj map[string]any
	}{
		{schema.GroupVersionResource{Group: "policy", Version: "v1beta1", Resource: "poddisruptionbudgets"}, map[string]any{
			"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget",
			"metadata": map[string]any{"name": "pdb", "namespace": "default"},
			"spec":     map[string]any{"minAvailable": 1, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}}}},
		{schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, map[string]any{
			"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
			"metadata": map[string]any{"name": "pdb-v1", "namespace": "default"},
			"spec":     map[string]any{"minAvailable": 1, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}}}},
	} {
		got, err := dc.Resource(c.gvr).Namespace("default").Create(t.Context(), &unstructured.Unstructured{Object: c.obj}, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("%s: %v", c.gvr, err)
			continue
		}
		if m := got.GetManagedFields(); len(m) != 1 || m[0].Manager != "legacy-client" || m[0].FieldsV1 == nil {
			t.Errorf("%s: managed fields %+v, want legacy-client's", c.gvr, m)
		}
	}
}
