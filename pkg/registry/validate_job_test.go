package registry

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// indexedJob is a valid Indexed Job with a volume, as batkube-campaign
// --emit-job writes them.
func indexedJob() *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "sweep"},
		Spec: batchv1.JobSpec{
			CompletionMode:       ptr.To(batchv1.IndexedCompletion),
			Completions:          ptr.To(int32(12)),
			Parallelism:          ptr.To(int32(4)),
			BackoffLimitPerIndex: ptr.To(int32(1)),
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "run", Image: "batkube",
					VolumeMounts: []corev1.VolumeMount{{Name: "out", MountPath: "/out"}}}},
				Volumes: []corev1.Volume{{Name: "out", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			}},
		},
	}
}

// TestValidateJob: what a broken Job manifest gets wrong is refused, with
// the field the real server names.
func TestValidateJob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*batchv1.Job)
		want   string // the field of the first error, "" for valid
	}{
		{"valid", func(*batchv1.Job) {}, ""},
		{"non-indexed, OnFailure", func(j *batchv1.Job) {
			j.Spec.CompletionMode, j.Spec.BackoffLimitPerIndex = nil, nil
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}, ""},
		{"no containers", func(j *batchv1.Job) { j.Spec.Template.Spec.Containers = nil }, "spec.template.spec.containers"},
		{"no image", func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "" }, "spec.template.spec.containers[0].image"},
		{"restartPolicy Always", func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways }, "spec.template.spec.restartPolicy"},
		{"no restartPolicy", func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = "" }, "spec.template.spec.restartPolicy"},
		{"a mount of no volume", func(j *batchv1.Job) { j.Spec.Template.Spec.Volumes[0].Name = "output" }, "spec.template.spec.containers[0].volumeMounts[0].name"},
		{"a mount without a path", func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].VolumeMounts[0].MountPath = "" }, "volumeMounts[0].mountPath"},
		{"two volumes of one name", func(j *batchv1.Job) {
			j.Spec.Template.Spec.Volumes = append(j.Spec.Template.Spec.Volumes, j.Spec.Template.Spec.Volumes[0])
		}, "spec.template.spec.volumes[1].name"},
		{"indexed without completions", func(j *batchv1.Job) { j.Spec.Completions = nil }, "spec.completions"},
		{"negative parallelism", func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To(int32(-1)) }, "spec.parallelism"},
		{"unknown completion mode", func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.CompletionMode("Sharded")) }, "spec.completionMode"},
		{"per-index back-off, not indexed", func(j *batchv1.Job) { j.Spec.CompletionMode = nil }, "spec.backoffLimitPerIndex"},
		{"maxFailedIndexes above completions", func(j *batchv1.Job) { j.Spec.MaxFailedIndexes = ptr.To(int32(13)) }, "spec.maxFailedIndexes"},
		{"name too long for its pods' hostnames", func(j *batchv1.Job) { j.Name = strings.Repeat("j", 62) }, "metadata.name"},
		{"name not a DNS subdomain", func(j *batchv1.Job) { j.Name = "Sweep" }, "metadata.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := indexedJob()
			tc.change(j)
			errs := ValidateCreate(j)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("got %v, want valid", errs)
			case tc.want != "" && (len(errs) == 0 || !strings.Contains(errs[0].Error(), tc.want)):
				t.Errorf("got %v, want an error on %s", errs, tc.want)
			}
		})
	}
}

// TestValidateJobUpdate: an update may unsuspend a Job and change its
// parallelism; its selector and completion mode are immutable.
func TestValidateJobUpdate(t *testing.T) {
	old := indexedJob()
	old.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "u1"}}
	old.Spec.Suspend = ptr.To(true)
	for _, tc := range []struct {
		name   string
		change func(*batchv1.Job)
		want   string
	}{
		{"unsuspended", func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(false) }, ""},
		{"parallelism", func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To(int32(2)) }, ""},
		{"selector", func(j *batchv1.Job) { j.Spec.Selector.MatchLabels = map[string]string{"a": "b"} }, "spec.selector"},
		{"completion mode", func(j *batchv1.Job) {
			j.Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
			j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = nil, nil
		}, "spec.completionMode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := old.DeepCopy()
			tc.change(j)
			errs := ValidateUpdate(j, old)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("got %v, want valid", errs)
			case tc.want != "" && (len(errs) == 0 || !strings.Contains(errs[0].Error(), tc.want)):
				t.Errorf("got %v, want an error on %s", errs, tc.want)
			}
			if errs := ValidateCreate(j); tc.want != "" && len(errs) > 0 {
				t.Errorf("ValidateCreate refuses the updated Job: %v", errs)
			}
		})
	}
}
