package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/server/servertest"
)

var widgetsGVR = schema.GroupVersionResource{Group: "example.batkube.io", Version: "v1", Resource: "widgets"}

func widget(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.batkube.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name}, "spec": spec, "status": map[string]any{"replicas": int64(7)}}}
}

// TestCustomResources: a CustomResourceDefinition created through the real
// apiextensions client is established and its resource served at once —
// discovery, the dynamic client's create, get, list with a selectable
// field, watch, update of spec and status, the scale subresource, kubectl's
// tables from the printer columns — with the schema's defaults, pruning,
// validation and CEL rule applied; deleting it deletes its objects and
// its resource answers 404.
func TestCustomResources(t *testing.T) {
	ts := servertest.StartDefault(t)
	ctx := ctxT(t) // also bounds the wait for the deletion event at the end
	def := widgetsDefinition(t)
	ext := apiextensionsclient.NewForConfigOrDie(ts.Config())
	created, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, def, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	established := false
	for _, c := range created.Status.Conditions {
		established = established || (c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue)
	}
	if !established || created.Status.AcceptedNames.Kind != "Widget" || created.Status.StoredVersions[0] != "v1" ||
		!slices.Contains(created.Finalizers, "customresourcecleanup.apiextensions.k8s.io") {
		t.Fatalf("the created definition: %+v, finalizers %v", created.Status, created.Finalizers)
	}
	bad := def.DeepCopy()
	bad.Name, bad.Spec.Names.Plural = "gadgets.example.batkube.io", "gadgets"
	bad.Spec.Versions[0].Storage = false
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a definition without storage version: %v, want Invalid", err)
	}

	disc := discovery.NewDiscoveryClientForConfigOrDie(ts.Config())
	list, err := disc.ServerResourcesForGroupVersion("example.batkube.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]metav1.APIResource{}
	for _, r := range list.APIResources {
		names[r.Name] = r
	}
	if r := names["widgets"]; r.Kind != "Widget" || !r.Namespaced || r.SingularName != "widget" || !slices.Contains(r.ShortNames, "wd") ||
		!slices.Contains(r.Verbs, "watch") || names["widgets/status"].Name == "" || names["widgets/scale"].Name == "" {
		t.Fatalf("discovery: %+v", list.APIResources)
	}

	dyn := dynamic.NewForConfigOrDie(ts.Config()).Resource(widgetsGVR).Namespace("default")
	w, err := dyn.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	a, err := dyn.Create(ctx, widget("a", map[string]any{"replicas": int64(2), "color": "blue", "unknown": "x"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.GetGeneration() != 1 || a.GetUID() == "" || a.Object["status"] != nil {
		t.Errorf("created: %v (status is the status subresource's)", a.Object)
	}
	spec := a.Object["spec"].(map[string]any)
	if spec["maxReplicas"] != int64(10) || spec["unknown"] != nil {
		t.Errorf("created spec %v: want defaults, no unknown field", spec)
	}
	if ev := <-w.ResultChan(); ev.Type != watch.Added || ev.Object.(*unstructured.Unstructured).GetName() != "a" {
		t.Errorf("watch: %v %v", ev.Type, ev.Object)
	}
	if _, err := dyn.Create(ctx, widget("b", map[string]any{"replicas": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]map[string]any{
		"enum": {"color": "purple"}, "type": {"replicas": "two"}, "CEL rule": {"replicas": int64(20), "maxReplicas": int64(5)},
	} {
		if _, err := dyn.Create(ctx, widget("bad", s), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("%s: %v, want Invalid", name, err)
		}
	}

	blue, err := dyn.List(ctx, metav1.ListOptions{FieldSelector: "spec.color=blue"})
	if err != nil || len(blue.Items) != 1 || blue.Items[0].GetName() != "a" {
		t.Errorf("field selector spec.color=blue: %v, %v", blue, err)
	}
	if _, err := dyn.List(ctx, metav1.ListOptions{FieldSelector: "spec.replicas=1"}); !apierrors.IsBadRequest(err) {
		t.Errorf("a field that is not selectable: %v, want BadRequest", err)
	}

	a.Object["spec"].(map[string]any)["replicas"] = int64(3)
	a.Object["status"] = map[string]any{"replicas": int64(9)}
	a, err = dyn.Update(ctx, a, metav1.UpdateOptions{})
	if err != nil || a.GetGeneration() != 2 || a.Object["status"] != nil {
		t.Fatalf("update of spec: %v, %v; want generation 2, status untouched", a, err)
	}
	a.Object["status"] = map[string]any{"replicas": int64(3), "selector": "app=a"}
	a.Object["spec"].(map[string]any)["replicas"] = int64(1)
	a, err = dyn.UpdateStatus(ctx, a, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(a.Object, "spec", "replicas"); r != 3 || a.GetGeneration() != 2 {
		t.Errorf("a status update changed the spec: %v", a.Object)
	}

	scale, err := dyn.Get(ctx, "a", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas"); r != 3 || scale.GetKind() != "Scale" {
		t.Errorf("scale: %v", scale.Object)
	}
	if sel, _, _ := unstructured.NestedString(scale.Object, "status", "selector"); sel != "app=a" {
		t.Errorf("scale's selector: %v", scale.Object)
	}
	if _, err := dyn.Patch(ctx, "a", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	if a, err = dyn.Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(a.Object, "spec", "replicas"); r != 5 {
		t.Errorf("replicas after scaling: %d, want 5", r)
	}
	// A PUT of the Scale, as the horizontal pod autoscaler's scale client.
	if scale, err = dyn.Get(ctx, "a", metav1.GetOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(scale.Object, int64(7), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Update(ctx, scale, metav1.UpdateOptions{}, "scale"); err != nil {
		t.Fatalf("updating the scale: %v", err)
	}
	if a, err = dyn.Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(a.Object, "spec", "replicas"); r != 7 {
		t.Errorf("replicas after a PUT of the scale: %d, want 7", r)
	}
	if _, err := dyn.Patch(ctx, "a", types.StrategicMergePatchType, []byte(`{"spec":{"color":"red"}}`), metav1.PatchOptions{}); !apierrors.IsUnsupportedMediaType(err) {
		t.Errorf("a strategic merge patch of a custom object: %v, want 415", err)
	}

	table := getTable(t, ts.URL+"/apis/example.batkube.io/v1/namespaces/default/widgets")
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if strings.Join(cols, ",") != "Name,Color,Replicas,Ready,Age" || len(table.Rows) != 2 {
		t.Fatalf("table: columns %v, %d rows", cols, len(table.Rows))
	}
	if row := table.Rows[0].Cells; row[0] != "a" || row[1] != "blue" || row[2] != float64(7) || row[3] != float64(3) {
		t.Errorf("row of a: %v", row)
	}

	if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, def.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a widget once its definition is deleted: %v, want NotFound", err)
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, def.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the definition after its deletion: %v, want NotFound", err)
	}
	if _, err := disc.ServerResourcesForGroupVersion("example.batkube.io/v1"); !apierrors.IsNotFound(err) {
		t.Errorf("discovery of the deleted definition's group: %v, want NotFound", err)
	}
	// The deletion happened above: its event is already on the watch,
	// before the watch ends.
	for {
		ev, ok := <-w.ResultChan()
		if !ok {
			t.Fatal("the watch ended without a's deletion")
		}
		if ev.Type == watch.Deleted && ev.Object.(*unstructured.Unstructured).GetName() == "a" {
			break
		}
	}
}

// widgetsDefinition is the CustomResourceDefinition of pkg/crd's tests.
func widgetsDefinition(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile("../crd/testdata/widgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	def := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, def); err != nil {
		t.Fatal(err)
	}
	return def
}

func getTable(t *testing.T, url string) *metav1.Table {
	t.Helper()
	a := send(ctxT(t), t, url, http.MethodGet, "", "", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json", nil)
	table := &metav1.Table{}
	if err := json.Unmarshal(a.body, table); err != nil || table.Kind != "Table" {
		t.Fatalf("not a table (%d): %s", a.code, a.body)
	}
	return table
}
