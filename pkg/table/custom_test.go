package table

import (
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A custom resource's table is kube-apiserver's (its convertor's column
// descriptions and cells: a string column prints any value, a typed column
// drops a value of another type, a date that does not parse is
// <invalid>), its dates aged at the server's clock, not the wall clock.
func TestCustomResourceTable(t *testing.T) {
	p, err := ForColumns([]apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Color", Type: "string", JSONPath: ".spec.color"},
		{Name: "Size", Type: "string", JSONPath: ".spec.size", Description: "how big"},
		{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
		{Name: "Started", Type: "date", JSONPath: ".status.started"},
		{Name: "Ended", Type: "date", JSONPath: ".status.ended"},
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.batkube.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "creationTimestamp": "2026-01-01T00:00:00Z"},
		"spec":     map[string]any{"color": "red", "size": int64(5), "replicas": "three"},
		"status":   map[string]any{"started": "2026-01-01T00:30:00Z", "ended": "soon"}}}
	tab, err := ConvertWith(obj, p, metav1.IncludeNone, now)
	if err != nil {
		t.Fatal(err)
	}
	defs := tab.ColumnDefinitions
	if len(defs) != 6 || defs[1].Description != "Custom resource definition column (in JSONPath format): .spec.color" || defs[2].Description != "how big" {
		t.Errorf("columns %+v, want Name then the five, described as the real server describes them", defs)
	}
	want := []any{"w", "red", "5", nil, "30m", "<invalid>"}
	got := tab.Rows[0].Cells
	if len(got) != len(want) {
		t.Fatalf("cells %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cell %d (%s): %#v, want %#v", i, defs[i].Name, got[i], want[i])
		}
	}
}
