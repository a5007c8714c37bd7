package crd

import (
	"context"
	"maps"
	"slices"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiserver/pkg/cel/common"
)

// TestSchemaTreeAnswersAsModel: walked node by node, the tree answers
// what model.Structural answers, and a property lookup allocates nothing.
func TestSchemaTreeAnswersAsModel(t *testing.T) {
	v := compiled(t)
	var walk func(path string, got, want common.Schema)
	walk = func(path string, got, want common.Schema) {
		if (got == nil) != (want == nil) {
			t.Fatalf("%s: schema %v, model's %v", path, got, want)
		}
		if got == nil {
			return
		}
		if got.Type() != want.Type() || got.Format() != want.Format() || got.XListType() != want.XListType() ||
			!slices.Equal(got.XListMapKeys(), want.XListMapKeys()) || !slices.Equal(got.Required(), want.Required()) {
			t.Errorf("%s: type %q format %q list %q keys %v required %v; model's %q %q %q %v %v", path,
				got.Type(), got.Format(), got.XListType(), got.XListMapKeys(), got.Required(),
				want.Type(), want.Format(), want.XListType(), want.XListMapKeys(), want.Required())
		}
		gp, wp := got.Properties(), want.Properties()
		if !slices.Equal(slices.Sorted(maps.Keys(gp)), slices.Sorted(maps.Keys(wp))) {
			t.Errorf("%s: properties %v, model's %v", path, slices.Sorted(maps.Keys(gp)), slices.Sorted(maps.Keys(wp)))
		}
		for name := range wp {
			walk(path+"."+name, gp[name], wp[name])
		}
		walk(path+"[]", got.Items(), want.Items())
		ga, wa := got.AdditionalProperties(), want.AdditionalProperties()
		if (ga == nil) != (wa == nil) {
			t.Fatalf("%s: additionalProperties %v, model's %v", path, ga, wa)
		}
		if ga != nil {
			if ga.Allows() != wa.Allows() {
				t.Errorf("%s: additionalProperties allows %v, model's %v", path, ga.Allows(), wa.Allows())
			}
			walk(path+"{}", ga.Schema(), wa.Schema())
		}
	}
	walk("", v.tree, &model.Structural{Structural: v.structural})
	if len(v.tree.Properties()) == 0 {
		t.Fatal("the test schema has no properties: the walk checked nothing")
	}
	if n := testing.AllocsPerRun(100, func() { _ = v.tree.Properties()["spec"].Properties() }); n != 0 {
		t.Errorf("a property lookup allocates %v times, want none", n)
	}
}

// BenchmarkValidateRatchetedUpdate: a spec update validated against the
// old object, ratcheting on.
func BenchmarkValidateRatchetedUpdate(b *testing.B) {
	v := compiled(b)
	obj := func(replicas int64) map[string]any {
		return map[string]any{"apiVersion": "example.batkube.io/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "a", "namespace": "default"},
			"spec":     map[string]any{"color": "red", "replicas": replicas, "maxReplicas": int64(5)},
			"status":   map[string]any{"replicas": int64(1)}}
	}
	old, cur := obj(1), obj(2)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if errs := v.Validate(ctx, cur, old, false); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
