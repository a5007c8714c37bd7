package crd

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

func widgets(t testing.TB) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile("testdata/widgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatal(err)
	}
	PrepareDefinition(crd, nil)
	return crd
}

func compiled(t testing.TB) *Version {
	t.Helper()
	crd := widgets(t)
	Accept(crd, func(string) bool { return false }, metav1.Now())
	vs, err := Compile(crd)
	if err != nil || len(vs) != 1 {
		t.Fatalf("Compile: %v, %v", vs, err)
	}
	return vs[0]
}

func TestValidDefinitionIsAcceptedAndCompiled(t *testing.T) {
	crd := widgets(t)
	if errs, err := ValidateDefinition(context.Background(), crd, nil); err != nil || len(errs) > 0 {
		t.Fatalf("a valid definition: %v, %v", errs, err)
	}
	Accept(crd, func(string) bool { return false }, metav1.Now())
	if !Established(crd) || crd.Status.AcceptedNames.ListKind != "WidgetList" || crd.Status.StoredVersions[0] != "v1" {
		t.Fatalf("status: %+v", crd.Status)
	}
	v := compiled(t)
	if v.GVR.String() != "example.batkube.io/v1, Resource=widgets" || v.Kind != "Widget" || !v.Namespaced || !v.Status ||
		v.Scale == nil || len(v.Columns) != 4 || v.SelectableFields[0] != "spec.color" || v.ShortNames[0] != "wd" {
		t.Fatalf("version: %+v", v)
	}
}

func TestInvalidDefinitionsAreRefused(t *testing.T) {
	for name, change := range map[string]func(*apiextensionsv1.CustomResourceDefinition){
		"name not plural.group": func(c *apiextensionsv1.CustomResourceDefinition) { c.Name = "widgets" },
		"no storage version":    func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Storage = false },
		"not structural": func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = apiextensionsv1.JSONSchemaProps{}
		},
		"bad CEL": func(c *apiextensionsv1.CustomResourceDefinition) {
			s := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			s.XValidations[0].Rule = "self.nothing >"
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = s
		},
	} {
		crd := widgets(t)
		change(crd)
		PrepareDefinition(crd, nil)
		if errs, err := ValidateDefinition(context.Background(), crd, nil); err != nil || len(errs) == 0 {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
}

func TestNamesInUseAreNotAccepted(t *testing.T) {
	crd := widgets(t)
	Accept(crd, func(n string) bool { return n == "wd" }, metav1.Now())
	if Established(crd) || crd.Status.AcceptedNames.Plural != "" {
		t.Fatalf("a definition whose short name is taken: %+v", crd.Status)
	}
}

func TestNormalizePrunesAndDefaults(t *testing.T) {
	v := compiled(t)
	obj := map[string]any{"apiVersion": "example.batkube.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "a", "namespace": "default"},
		"spec":     map[string]any{"replicas": int64(3), "unknown": "dropped"}, "extra": true}
	if err := v.Normalize(obj); err != nil {
		t.Fatal(err)
	}
	spec := obj["spec"].(map[string]any)
	if _, ok := spec["unknown"]; ok || obj["extra"] != nil {
		t.Errorf("unknown fields kept: %v", obj)
	}
	if spec["color"] != "red" || spec["maxReplicas"] != int64(10) || spec["replicas"] != int64(3) {
		t.Errorf("defaults: %v", spec)
	}
}

func TestValidate(t *testing.T) {
	v := compiled(t)
	ctx := context.Background()
	obj := func(spec map[string]any) map[string]any {
		o := map[string]any{"apiVersion": "example.batkube.io/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "a", "namespace": "default"}, "spec": spec}
		if err := v.Normalize(o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	if errs := v.Validate(ctx, obj(map[string]any{"replicas": int64(2)}), nil, false); len(errs) > 0 {
		t.Errorf("a valid object: %v", errs)
	}
	for name, spec := range map[string]map[string]any{
		"enum":     {"color": "purple"},
		"minimum":  {"replicas": int64(-1)},
		"type":     {"replicas": "two"},
		"CEL rule": {"replicas": int64(20), "maxReplicas": int64(5)},
	} {
		errs := v.Validate(ctx, obj(spec), nil, false)
		if len(errs) == 0 {
			t.Errorf("%s: no error", name)
		}
		if name == "CEL rule" && !strings.Contains(errs.ToAggregate().Error(), "must not exceed maxReplicas") {
			t.Errorf("CEL rule: %v", errs)
		}
	}
}

func TestGenerationAndStatus(t *testing.T) {
	v := compiled(t)
	old := map[string]any{"metadata": map[string]any{"name": "a", "generation": int64(1)},
		"spec": map[string]any{"replicas": int64(1)}, "status": map[string]any{"replicas": int64(1)}}
	create := map[string]any{"metadata": map[string]any{"name": "a"}, "status": map[string]any{"replicas": int64(5)}}
	v.PrepareCreate(create)
	if _, ok := create["status"]; ok || generation(create) != 1 {
		t.Errorf("create: %v", create)
	}
	labels := map[string]any{"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "y"}},
		"spec": map[string]any{"replicas": int64(1)}, "status": map[string]any{"replicas": int64(9)}}
	v.PrepareUpdate(labels, old)
	if generation(labels) != 1 || labels["status"].(map[string]any)["replicas"] != int64(1) {
		t.Errorf("an update of labels: %v", labels)
	}
	spec := map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"replicas": int64(2)}}
	v.PrepareUpdate(spec, old)
	if generation(spec) != 2 {
		t.Errorf("an update of spec: generation %d, want 2", generation(spec))
	}
	st := v.PrepareStatusUpdate(map[string]any{"spec": map[string]any{"replicas": int64(7)}, "status": map[string]any{"replicas": int64(3)}}, old)
	if st["spec"].(map[string]any)["replicas"] != int64(1) || st["status"].(map[string]any)["replicas"] != int64(3) {
		t.Errorf("a status update: %v", st)
	}
	var fields []string
	v.FieldValues(map[string]any{"spec": map[string]any{"color": "blue"}}, func(n, val string) { fields = append(fields, n+"="+val) })
	if len(fields) != 1 || fields[0] != "spec.color=blue" {
		t.Errorf("selectable fields: %v", fields)
	}
}

// Updates are validated with ratcheting, as kube-apiserver's: an invalid
// value left as it was (a stored object the schema or a CEL rule refuses
// now) does not fail an update, a new invalid value does; a status update
// validates the status against the status schema alone; a value of the
// wrong type skips the CEL rules, said so.
func TestValidateUpdatesRatchet(t *testing.T) {
	v := compiled(t)
	ctx := context.Background()
	obj := func(spec, status map[string]any) map[string]any {
		o := map[string]any{"apiVersion": "example.batkube.io/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "a", "namespace": "default"}, "spec": spec}
		if status != nil {
			o["status"] = status
		}
		return o
	}
	// Stored before a stricter schema: a colour out of the enum, more
	// replicas than maxReplicas.
	old := obj(map[string]any{"color": "purple", "replicas": int64(20), "maxReplicas": int64(5)}, map[string]any{"replicas": int64(1)})
	labelled := obj(map[string]any{"color": "purple", "replicas": int64(20), "maxReplicas": int64(5)}, map[string]any{"replicas": int64(1)})
	labelled["metadata"].(map[string]any)["labels"] = map[string]any{"team": "a"}
	if errs := v.Validate(ctx, labelled, old, false); len(errs) > 0 {
		t.Errorf("an update leaving the invalid values as they were: %v", errs)
	}
	more := obj(map[string]any{"color": "purple", "replicas": int64(21), "maxReplicas": int64(5)}, map[string]any{"replicas": int64(1)})
	if errs := v.Validate(ctx, more, old, false); len(errs) != 1 || !strings.Contains(errs[0].Detail, "must not exceed maxReplicas") {
		t.Errorf("more replicas, still above maxReplicas: %v, want the CEL rule refusing them", errs)
	}
	pink := obj(map[string]any{"color": "pink", "replicas": int64(20), "maxReplicas": int64(5)}, map[string]any{"replicas": int64(1)})
	if errs := v.Validate(ctx, pink, old, false); len(errs) == 0 || errs[0].Field != "spec.color" {
		t.Errorf("a new colour out of the enum: %v, want spec.color refused", errs)
	}
	status := obj(map[string]any{"color": "purple", "replicas": int64(20), "maxReplicas": int64(5)}, map[string]any{"replicas": int64(2)})
	if errs := v.Validate(ctx, status, old, true); len(errs) > 0 {
		t.Errorf("a status update of an object with an invalid spec: %v", errs)
	}
	status["status"] = map[string]any{"replicas": "two"}
	if errs := v.Validate(ctx, status, old, true); len(errs) == 0 || errs[0].Field != "status.replicas" {
		t.Errorf("a status of the wrong type: %v, want status.replicas refused", errs)
	}
	wrong := obj(map[string]any{"replicas": "many", "maxReplicas": int64(5)}, nil)
	if errs := v.Validate(ctx, wrong, nil, false); !strings.Contains(errs.ToAggregate().Error(), "some validation rules were not checked") {
		t.Errorf("a value of the wrong type: %v, want the CEL rules skipped, said so", errs)
	}
}

// The metadata of the object a status update stores is already as
// coercion leaves it (NormalizeStatus does not coerce it again): the
// stored object's, coerced when it was stored, with managed fields set as
// the field manager sets them.
func TestStatusUpdateMetadataIsCoerced(t *testing.T) {
	v := compiled(t)
	stored := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.batkube.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "a", "namespace": "default", "uid": "u1", "resourceVersion": "7", "generation": int64(2),
			"creationTimestamp": "2026-01-01T00:00:00Z", "labels": map[string]any{"team": "a"}, "annotations": map[string]any{"note": "x"},
			"finalizers":      []any{"example.batkube.io/hold"},
			"ownerReferences": []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u0", "controller": true}}},
		"spec": map[string]any{"replicas": int64(1)}}}
	if err := v.Normalize(stored.Object); err != nil {
		t.Fatal(err)
	}
	applied := stored.DeepCopy()
	applied.Object["status"] = map[string]any{"replicas": int64(3)}
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 9, 0, time.UTC))
	applied.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "kueue-admission", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "example.batkube.io/v1", Time: &at,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:replicas":{}}}`)}, Subresource: "status"},
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "example.batkube.io/v1", Time: &at,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}},
	})
	st := v.PrepareStatusUpdate(applied.Object, stored.Object)
	if err := v.NormalizeStatus(st); err != nil {
		t.Fatal(err)
	}
	coerced := runtime.DeepCopyJSON(st)
	if err := objectmeta.Coerce(nil, coerced, v.structural, true, false); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st["metadata"], coerced["metadata"]) {
		t.Errorf("a status update's metadata, coerced again:\n%v\nwas\n%v", coerced["metadata"], st["metadata"])
	}
}
