package registry

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxIndexedParallelism is the real server's bound on an Indexed Job's
// parallelism.
const maxIndexedParallelism = 100000

// validateJob checks what makes a Job that a real API server refuses and
// that a manifest writer gets wrong: the counts, the completion mode and
// what it needs, the pod template (containers, volumes) and its restart
// policy. It leaves out the check of the selector against the template's
// labels (defaultJob generates both), the failure and success policies'
// rules, and (but for the selector and completion mode:
// validateJobUpdate) updates' immutability.
func validateJob(job *batchv1.Job) field.ErrorList {
	spec := &job.Spec
	path := field.NewPath("spec")
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		v    *int32
	}{
		{"parallelism", spec.Parallelism}, {"completions", spec.Completions}, {"backoffLimit", spec.BackoffLimit},
		{"backoffLimitPerIndex", spec.BackoffLimitPerIndex}, {"maxFailedIndexes", spec.MaxFailedIndexes},
		{"ttlSecondsAfterFinished", spec.TTLSecondsAfterFinished},
	} {
		if f.v != nil && *f.v < 0 {
			errs = append(errs, field.Invalid(path.Child(f.name), *f.v, "must be greater than or equal to 0"))
		}
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && *d < 0 {
		errs = append(errs, field.Invalid(path.Child("activeDeadlineSeconds"), *d, "must be greater than or equal to 0"))
	}
	indexed := spec.CompletionMode != nil && *spec.CompletionMode == batchv1.IndexedCompletion
	if m := spec.CompletionMode; m != nil && *m != batchv1.NonIndexedCompletion && *m != batchv1.IndexedCompletion {
		errs = append(errs, field.NotSupported(path.Child("completionMode"), *m, []batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
	}
	switch {
	case indexed:
		if spec.Completions == nil {
			errs = append(errs, field.Required(path.Child("completions"), "when completion mode is Indexed"))
		} else if *spec.Completions > 0 {
			// The controller names its pods' hostnames <job>-<index>.
			if msgs := validation.IsDNS1123Label(fmt.Sprintf("%s-%d", job.Name, *spec.Completions-1)); len(msgs) > 0 {
				errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), job.Name,
					fmt.Sprintf("will not able to create pod with invalid DNS label: %s-%d", job.Name, *spec.Completions-1)))
			}
		}
		if p := spec.Parallelism; p != nil && *p > maxIndexedParallelism {
			errs = append(errs, field.Invalid(path.Child("parallelism"), *p, fmt.Sprintf("must be less than or equal to %d when completion mode is Indexed", maxIndexedParallelism)))
		}
		if c, m := spec.Completions, spec.MaxFailedIndexes; c != nil && m != nil && *m > *c {
			errs = append(errs, field.Invalid(path.Child("maxFailedIndexes"), *m, "must be less than or equal to completions"))
		}
	default:
		if spec.BackoffLimitPerIndex != nil {
			errs = append(errs, field.Invalid(path.Child("backoffLimitPerIndex"), *spec.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if spec.MaxFailedIndexes != nil {
			errs = append(errs, field.Invalid(path.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "requires indexed completion mode"))
		}
	}
	if spec.MaxFailedIndexes != nil && spec.BackoffLimitPerIndex == nil {
		errs = append(errs, field.Required(path.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
	}
	if p := spec.PodReplacementPolicy; p != nil && *p != batchv1.Failed && *p != batchv1.TerminatingOrFailed {
		errs = append(errs, field.NotSupported(path.Child("podReplacementPolicy"), *p, []batchv1.PodReplacementPolicy{batchv1.Failed, batchv1.TerminatingOrFailed}))
	}
	template := path.Child("template", "spec")
	errs = append(errs, validatePodSpec(&spec.Template.Spec, template)...)
	switch rp := spec.Template.Spec.RestartPolicy; rp {
	case corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	case "", corev1.RestartPolicyAlways:
		errs = append(errs, field.Required(template.Child("restartPolicy"), `valid values: "OnFailure", "Never"`))
	default:
		errs = append(errs, field.NotSupported(template.Child("restartPolicy"), rp, []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	}
	return errs
}
