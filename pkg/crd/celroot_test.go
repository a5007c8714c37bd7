package crd

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/warning"
	"sigs.k8s.io/yaml"
)

// gadgetSchema has CEL rules at its root of every kind the validator
// distinguishes (plain, transition, optional oldSelf, with a message
// expression, one that can fail to evaluate, one reading an embedded
// resource), and rules below the root that they must not hide.
const gadgetSchema = `
type: object
x-kubernetes-validations:
- rule: "!has(self.spec.limit) || self.spec.size <= self.spec.limit"
  message: size over the limit
- rule: "self.spec.mode == oldSelf.spec.mode"
  messageExpression: "'mode is immutable, was ' + oldSelf.spec.mode"
- rule: "oldSelf.hasValue() || self.metadata.name.startsWith('g')"
  optionalOldSelf: true
- rule: "!has(self.status) || !has(self.status.items) || self.status.items.all(i, i.count >= 0)"
  reason: FieldValueForbidden
- rule: "!has(self.spec.divisor) || 100 / self.spec.divisor > 1"
- rule: "!has(self.spec.embedded) || self.spec.embedded.kind != 'Bad'"
properties:
  spec:
    type: object
    x-kubernetes-validations:
    - rule: "self.size >= 0"
    properties:
      size: {type: integer}
      limit: {type: integer}
      divisor: {type: integer}
      mode: {type: string}
      tags:
        type: array
        x-kubernetes-list-type: set
        items: {type: string}
      embedded:
        type: object
        x-kubernetes-embedded-resource: true
        x-kubernetes-preserve-unknown-fields: true
  status:
    type: object
    properties:
      items:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items:
          type: object
          required: [name]
          x-kubernetes-validations:
          - rule: "self.count < 100"
          properties:
            name: {type: string}
            count: {type: integer}
`

func gadgets(t *testing.T) *Version {
	t.Helper()
	v := versionOf(t, gadgetSchema)
	if v.root == nil || v.root.below == nil {
		t.Fatal("the root rules are not run on their own")
	}
	if v.root.schema.Properties()["spec"] != v.tree.properties["spec"] {
		t.Error("the root rules' schema tree does not share the version's tree below its root")
	}
	return v
}

// versionOf compiles the widgets' definition with schema (YAML) as its
// version's schema, without its selectable fields and printer columns.
func versionOf(t *testing.T, schema string) *Version {
	t.Helper()
	props := &apiextensionsv1.JSONSchemaProps{}
	if err := yaml.UnmarshalStrict([]byte(schema), props); err != nil {
		t.Fatal(err)
	}
	crd := widgets(t)
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema = props
	crd.Spec.Versions[0].SelectableFields = nil
	crd.Spec.Versions[0].AdditionalPrinterColumns = nil
	Accept(crd, func(string) bool { return false }, crd.CreationTimestamp)
	vs, err := Compile(crd)
	if err != nil || len(vs) != 1 {
		t.Fatalf("Compile: %v, %v", vs, err)
	}
	return vs[0]
}

type warnings []string

func (w *warnings) AddWarning(agent, text string) { *w = append(*w, agent+": "+text) }

// The root rules run on their own give the upstream validator's answer,
// errors and warnings alike, on objects that pass and objects that each
// break one rule (at the root or below it), created or updated; and they
// run on their own only when they all hold.
func TestRootRulesAnswerAsTheValidator(t *testing.T) {
	v := gadgets(t)
	upstream := gadgets(t)
	upstream.root = nil
	gadget := func(name string, spec map[string]any, status ...map[string]any) map[string]any {
		o := map[string]any{"apiVersion": v.GVR.GroupVersion().String(), "kind": v.Kind,
			"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": spec}
		if len(status) > 0 {
			o["status"] = status[0]
		}
		return o
	}
	spec := func(kv ...any) map[string]any {
		s := map[string]any{"size": int64(3), "limit": int64(5), "mode": "fast"}
		for i := 0; i < len(kv); i += 2 {
			s[kv[i].(string)] = kv[i+1]
		}
		return s
	}
	items := func(counts ...int64) map[string]any {
		var l []any
		for i, c := range counts {
			l = append(l, map[string]any{"name": fmt.Sprint("i", i), "count": c})
		}
		return map[string]any{"items": l}
	}
	good := gadget("g1", spec(), items(1, 2))
	negative := gadget("g1", spec("size", int64(-1)), items(1, 2)) // stored before the rule, say
	cases := []struct {
		name     string
		obj, old map[string]any
		holds    bool // every root rule holds
		refused  bool
	}{
		{"create", good, nil, true, false},
		{"create over the limit", gadget("g1", spec("size", int64(9))), nil, false, true},
		{"create named otherwise", gadget("x1", spec()), nil, false, true},
		{"create, a rule failing to evaluate", gadget("g1", spec("divisor", int64(0))), nil, false, true},
		{"create, an embedded resource of a refused kind", gadget("g1", spec("embedded", map[string]any{"apiVersion": "v1", "kind": "Bad",
			"metadata": map[string]any{"name": "e"}})), nil, false, true},
		{"create, an embedded resource", gadget("g1", spec("embedded", map[string]any{"apiVersion": "v1", "kind": "Good",
			"metadata": map[string]any{"name": "e"}})), nil, true, false},
		{"create, a rule below the root broken", gadget("g1", spec("size", int64(-1))), nil, true, true},
		{"create, a list item's rule broken", gadget("g1", spec(), items(1, 100)), nil, true, true},
		{"update", gadget("g1", spec("tags", []any{"a"}), items(1, 3)), good, true, false},
		{"update renamed otherwise (optional oldSelf)", gadget("x1", spec()), gadget("x1", spec()), true, false},
		{"update of the mode", gadget("g1", spec("mode", "slow"), items(1, 2)), good, false, true},
		{"update over the limit", gadget("g1", spec("size", int64(9)), items(1, 2)), good, false, true},
		{"update of a negative count", gadget("g1", spec(), items(-1, 2)), good, false, true},
		// A rule below the root broken by a stored object, whose spec is
		// left as it was: ratcheted, a warning.
		{"update of the status, the spec left below zero (ratcheted)", gadget("g1", spec("size", int64(-1)), items(1, 3)), negative, true, false},
		{"update of a list item's rule broken", gadget("g1", spec(), items(1, 200)), good, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, holds := v.root.hold(context.Background(), c.obj, c.old, celCostBudget); holds != c.holds {
				t.Errorf("the root rules hold: %v, want %v", holds, c.holds)
			}
			var gotWarnings, wantWarnings warnings
			got := v.Validate(warning.WithWarningRecorder(context.Background(), &gotWarnings), runtime.DeepCopyJSON(c.obj), copyOrNil(c.old), false)
			want := upstream.Validate(warning.WithWarningRecorder(context.Background(), &wantWarnings), runtime.DeepCopyJSON(c.obj), copyOrNil(c.old), false)
			if !reflect.DeepEqual(got, want) || !slices.Equal(gotWarnings, wantWarnings) {
				t.Errorf("errors %v, warnings %q; the validator's: %v, %q", got, gotWarnings, want, wantWarnings)
			}
			if (len(want) > 0) != c.refused {
				t.Errorf("the validator's errors: %v, want refused %v", want, c.refused)
			}
		})
	}
	if ratcheted := cases[len(cases)-2]; true {
		var w warnings
		upstream.Validate(warning.WithWarningRecorder(context.Background(), &w), ratcheted.obj, ratcheted.old, false)
		if len(w) == 0 {
			t.Errorf("%s: no warning from the validator; the case does not test warnings", ratcheted.name)
		}
	}
}

func copyOrNil(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return runtime.DeepCopyJSON(m)
}
