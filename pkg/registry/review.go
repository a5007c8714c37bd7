package registry

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateReview returns what the real API server rejects with 422 Invalid
// in an access review (SubjectAccessReview, SelfSubjectAccessReview,
// LocalSubjectAccessReview), with its messages (from
// k8s.io/kubernetes/pkg/apis/authorization/validation): exactly one of
// resourceAttributes and nonResourceAttributes, a user or a group to check,
// and metadata left empty (but for a local review's namespace, which must be
// the one of its resourceAttributes). Other kinds have no rule here.
func ValidateReview(obj runtime.Object) field.ErrorList {
	switch o := obj.(type) {
	case *authorizationv1.SubjectAccessReview:
		errs := validateAccessSpec(o.Spec.ResourceAttributes, o.Spec.NonResourceAttributes)
		errs = append(errs, validateSubject(&o.Spec)...)
		return append(errs, validateEmptyMeta(o.ObjectMeta, false)...)
	case *authorizationv1.SelfSubjectAccessReview:
		errs := validateAccessSpec(o.Spec.ResourceAttributes, o.Spec.NonResourceAttributes)
		return append(errs, validateEmptyMeta(o.ObjectMeta, false)...)
	case *authorizationv1.LocalSubjectAccessReview:
		errs := validateAccessSpec(o.Spec.ResourceAttributes, o.Spec.NonResourceAttributes)
		errs = append(errs, validateSubject(&o.Spec)...)
		errs = append(errs, validateEmptyMeta(o.ObjectMeta, true)...)
		if ra := o.Spec.ResourceAttributes; ra != nil && ra.Namespace != o.Namespace {
			errs = append(errs, field.Invalid(field.NewPath("spec.resourceAttributes.namespace"), ra.Namespace, `must match metadata.namespace`))
		}
		if o.Spec.NonResourceAttributes != nil {
			errs = append(errs, field.Invalid(field.NewPath("spec.nonResourceAttributes"), o.Spec.NonResourceAttributes, `disallowed on this kind of request`))
		}
		return errs
	}
	return nil
}

func validateAccessSpec(ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) field.ErrorList {
	if (ra == nil) == (nra == nil) {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nra, `exactly one of nonResourceAttributes or resourceAttributes must be specified`)}
	}
	return nil
}

func validateSubject(spec *authorizationv1.SubjectAccessReviewSpec) field.ErrorList {
	if spec.User == "" && len(spec.Groups) == 0 {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "user"), spec.User, `at least one of user or group must be specified`)}
	}
	return nil
}

func validateEmptyMeta(m metav1.ObjectMeta, namespaced bool) field.ErrorList {
	msg, orig := `must be empty`, m
	m.ManagedFields = nil
	if namespaced {
		m.Namespace = ""
		msg = `must be empty except for namespace`
	}
	if !apiequality.Semantic.DeepEqual(metav1.ObjectMeta{}, m) {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), orig, msg)}
	}
	return nil
}
