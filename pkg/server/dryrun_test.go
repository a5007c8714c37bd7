package server_test

import (
	"net/http"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/batkube/batkube/pkg/server/servertest"
)

// TestDryRunAllStoresNothing: with dryRun=All, create, update, patch and
// delete validate and answer as they would, and store nothing — as the
// real server does (kubectl --dry-run=server).
func TestDryRunAllStoresNothing(t *testing.T) {
	ts := servertest.StartDefault(t)
	ctx := ctxT(t)
	cs := clients(t, ts)["json"]
	cms := cs.CoreV1().ConfigMaps("default")
	dry := []string{metav1.DryRunAll}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "campaign"}, Data: map[string]string{"a": "1"}}
	got, err := cms.Create(ctx, cm, metav1.CreateOptions{DryRun: dry})
	if err != nil || got.Name != "campaign" || got.UID == "" || got.Data["a"] != "1" {
		t.Fatalf("dry-run create: %+v, %v; want the object as it would be created", got, err)
	}
	if _, err := cms.Get(ctx, "campaign", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after a dry-run create: %v, want not found", err)
	}

	stored, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{DryRun: dry}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("dry-run create of an existing object: %v, want already exists", err)
	}
	changed := stored.DeepCopy()
	changed.Data["a"] = "2"
	if got, err := cms.Update(ctx, changed, metav1.UpdateOptions{DryRun: dry}); err != nil || got.Data["a"] != "2" {
		t.Errorf("dry-run update: %v, %v", got, err)
	}
	if got, err := cms.Patch(ctx, "campaign", types.MergePatchType, []byte(`{"data":{"a":"3"}}`), metav1.PatchOptions{DryRun: dry}); err != nil || got.Data["a"] != "3" {
		t.Errorf("dry-run patch: %v, %v", got, err)
	}
	if err := cms.Delete(ctx, "campaign", metav1.DeleteOptions{DryRun: dry}); err != nil {
		t.Errorf("dry-run delete: %v", err)
	}
	now, err := cms.Get(ctx, "campaign", metav1.GetOptions{})
	if err != nil || now.Data["a"] != "1" || now.ResourceVersion != stored.ResourceVersion {
		t.Errorf("after dry-run update, patch and delete: %+v, %v; want the stored object unchanged", now, err)
	}

	// Validation still answers: a Job without containers is refused.
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "sweep"}, Spec: batchv1.JobSpec{
		CompletionMode: ptr.To(batchv1.IndexedCompletion), Completions: ptr.To(int32(3)),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}},
	}}
	_, err = cs.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{DryRun: dry})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template.spec.containers") {
		t.Errorf("dry-run create of a Job without containers: %v, want 422 naming spec.template.spec.containers", err)
	}
}

// TestDryRunOtherValuesRefused: a dryRun other than All is refused with
// 422, as the real server does, and nothing is written.
func TestDryRunOtherValuesRefused(t *testing.T) {
	ts := servertest.StartDefault(t)
	for _, tc := range []struct {
		method, path, body, options string
	}{
		{http.MethodPost, "/api/v1/namespaces/default/configmaps?dryRun=all", `{"metadata":{"name":"x"}}`, "CreateOptions"},
		{http.MethodPut, "/api/v1/namespaces/default/configmaps/x?dryRun=true", `{"metadata":{"name":"x"}}`, "UpdateOptions"},
		{http.MethodDelete, "/api/v1/namespaces/default/configmaps/x?dryRun=Everything", "", "DeleteOptions"},
	} {
		code, status := do(t, ts, tc.method, tc.path, "application/json", tc.body)
		if code != http.StatusUnprocessableEntity || status.Details == nil || status.Details.Kind != tc.options ||
			!strings.Contains(status.Message, `supported values: "All"`) {
			t.Errorf("%s %s: %d %+v; want 422 about %s's dryRun", tc.method, tc.path, code, status, tc.options)
		}
	}
	if _, err := clients(t, ts)["json"].CoreV1().ConfigMaps("default").Get(ctxT(t), "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after refused dry runs: %v, want not found", err)
	}
}
