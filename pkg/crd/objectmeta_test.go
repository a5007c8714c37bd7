package crd

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apimachinery/pkg/runtime"
)

// The metadata check walks the object only where an embedded resource can
// stand: wherever one stands (a property, list items, additional
// properties, deep or shallow) its errors are found, and each object gives
// the errors objectmeta.Validate gives walking the whole schema, as the
// real server calls it.
func TestMetadataCheckedAsTheWholeSchemaWalkChecksIt(t *testing.T) {
	embedded := "{type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true}"
	for _, c := range []struct {
		name, schema string
		walksAll     bool
		field        string
		value        any
	}{
		{"no embedded resource", "{type: object, properties: {spec: {type: object, properties: {x: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}}}", false, "x", []any{map[string]any{"metadata": map[string]any{"name": "Not_A_Name"}}}},
		{"a property", "{type: object, properties: {spec: {type: object, properties: {x: " + embedded + "}}}}", true, "x", map[string]any{"apiVersion": "v1"}},
		{"list items", "{type: object, properties: {spec: {type: object, properties: {x: {type: array, items: " + embedded + "}}}}}", true, "x", []any{map[string]any{"kind": "Pod"}}},
		{"additional properties", "{type: object, properties: {spec: {type: object, properties: {x: {type: object, additionalProperties: " + embedded + "}}}}}", true, "x", map[string]any{"a": map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"labels": map[string]any{"-": "x"}}}}},
		{"deep in lists of objects", "{type: object, properties: {spec: {type: object, properties: {x: {type: array, items: {type: object, properties: {pods: {type: array, items: " + embedded + "}}}}}}}}", true, "x", []any{map[string]any{"pods": []any{map[string]any{}}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := versionOf(t, c.schema)
			if (v.metaSchema == v.structural) != c.walksAll {
				t.Fatalf("walks the whole schema: %v, want %v", v.metaSchema == v.structural, c.walksAll)
			}
			for _, labels := range []map[string]any{nil, {"bad label!": "x"}} {
				meta := map[string]any{"name": "w", "namespace": "default"}
				if labels != nil {
					meta["labels"] = labels
				}
				obj := map[string]any{"apiVersion": "example.batkube.io/v1", "kind": "Widget", "metadata": meta,
					"spec": map[string]any{c.field: c.value}}
				want := objectmeta.Validate(context.Background(), nil, runtime.DeepCopyJSON(obj), v.structural, true)
				got := objectmeta.Validate(context.Background(), nil, runtime.DeepCopyJSON(obj), v.metaSchema, true)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("labels %v: got %v, want %v", labels, got, want)
				}
				if c.walksAll && len(want) <= len(labels) {
					t.Errorf("labels %v: the embedded resource's errors are missing: %v", labels, want)
				}
			}
		})
	}
}
