package server_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	appsv1apply "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/batkube/batkube/pkg/server/servertest"
)

func managers(m metav1.Object) map[string]metav1.ManagedFieldsOperationType {
	out := map[string]metav1.ManagedFieldsOperationType{}
	for _, e := range m.GetManagedFields() {
		out[e.Manager] = e.Operation
	}
	return out
}

// TestServerSideApply: server-side apply as kube-apiserver does it, through
// client-go's apply configurations — managed fields recorded for applies and
// updates, a conflict with another manager's field refused (409, naming
// the manager and the field) unless forced, fields a manager stops
// applying removed, list items merged by their keys (a Deployment's
// containers by name), and a custom resource's fields typed by its
// definition's schema.
func TestServerSideApply(t *testing.T) {
	ts := servertest.StartDefault(t)
	ctx := context.Background()
	cs := ts.Clientset()
	cms := cs.CoreV1().ConfigMaps("default")

	cm, err := cms.Apply(ctx, corev1apply.ConfigMap("settings", "default").WithData(map[string]string{"x": "1", "y": "1"}),
		metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if m := managers(cm); m["alice"] != metav1.ManagedFieldsOperationApply || len(m) != 1 {
		t.Fatalf("managers after the first apply: %v", m)
	}
	cm.Data["x"] = "2"
	if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "bob"}); err != nil {
		t.Fatal(err)
	}
	if m := managers(cm); m["bob"] != metav1.ManagedFieldsOperationUpdate {
		t.Fatalf("managers after bob's update: %v", m)
	}
	_, err = cms.Apply(ctx, corev1apply.ConfigMap("settings", "default").WithData(map[string]string{"x": "3", "y": "1"}),
		metav1.ApplyOptions{FieldManager: "alice"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "bob"`) || !strings.Contains(err.Error(), ".data.x") {
		t.Fatalf("alice applying bob's field: %v, want a conflict with bob on .data.x", err)
	}
	if cm, err = cms.Apply(ctx, corev1apply.ConfigMap("settings", "default").WithData(map[string]string{"x": "3"}),
		metav1.ApplyOptions{FieldManager: "alice", Force: true}); err != nil {
		t.Fatal(err)
	}
	if cm.Data["x"] != "3" {
		t.Errorf("forced apply: data %v, want x=3", cm.Data)
	}
	if _, ok := cm.Data["y"]; ok {
		t.Errorf("a field alice stopped applying, owned by her alone, is still there: %v", cm.Data)
	}
	_, err = cs.CoreV1().RESTClient().Patch(types.ApplyPatchType).Namespace("default").Resource("configmaps").Name("settings").
		Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"z":"1"}}`)).Do(ctx).Get()
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "fieldManager") {
		t.Errorf("an apply without fieldManager: %v, want Invalid", err)
	}

	// A Deployment's containers merge by name: each manager keeps its own.
	deploy := func(manager, container string) *appsv1.Deployment {
		t.Helper()
		d, err := cs.AppsV1().Deployments("default").Apply(ctx, appsv1apply.Deployment("web", "default").WithSpec(appsv1apply.DeploymentSpec().
			WithSelector(metav1apply.LabelSelector().WithMatchLabels(map[string]string{"app": "web"})).WithTemplate(corev1apply.PodTemplateSpec().
			WithLabels(map[string]string{"app": "web"}).WithSpec(corev1apply.PodSpec().
			WithContainers(corev1apply.Container().WithName(container).WithImage(container))))), metav1.ApplyOptions{FieldManager: manager})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	deploy("alice", "web")
	d := deploy("bob", "sidecar")
	var names []string
	for _, c := range d.Spec.Template.Spec.Containers {
		names = append(names, c.Name)
	}
	if len(names) != 2 {
		t.Errorf("containers after two managers applied one each: %v, want both", names)
	}

	// A custom resource: its fields typed by its schema.
	def := widgetsDefinition(t)
	if _, err := apiextensionsclient.NewForConfigOrDie(ts.Config()).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, def, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	widgets := dynamic.NewForConfigOrDie(ts.Config()).Resource(widgetsGVR).Namespace("default")
	apply := func(manager string, spec map[string]any, force bool) (*unstructured.Unstructured, error) {
		return widgets.Apply(ctx, "w", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.batkube.io/v1",
			"kind": "Widget", "metadata": map[string]any{"name": "w"}, "spec": spec}}, metav1.ApplyOptions{FieldManager: manager, Force: force})
	}
	if _, err := apply("alice", map[string]any{"color": "blue", "replicas": int64(2)}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := apply("bob", map[string]any{"color": "green"}, false); !apierrors.IsConflict(err) || !strings.Contains(err.Error(), ".spec.color") {
		t.Errorf("bob applying alice's color: %v, want a conflict on .spec.color", err)
	}
	w, err := apply("bob", map[string]any{"color": "green"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if c, _, _ := unstructured.NestedString(w.Object, "spec", "color"); c != "green" {
		t.Errorf("color after bob's forced apply: %q", c)
	}
	if _, err := apply("carol", map[string]any{"undeclared": "x"}, false); err == nil || !strings.Contains(err.Error(), "field not declared in schema") {
		t.Errorf("applying a field the schema does not declare: %v, want refused", err)
	}
}
