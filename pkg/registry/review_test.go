package registry

import (
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestValidateReview(t *testing.T) {
	metrics := &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}
	pods := &authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "list", Resource: "pods"}
	subject := authorizationv1.SubjectAccessReviewSpec{User: "u", NonResourceAttributes: metrics}
	local := authorizationv1.SubjectAccessReviewSpec{Groups: []string{"g"}, ResourceAttributes: pods}
	tests := []struct {
		name  string
		obj   runtime.Object
		field string // of the first error; "" for none
	}{
		{"valid", &authorizationv1.SubjectAccessReview{Spec: subject}, ""},
		{"no attributes", &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "u"}}, "spec"},
		{"both attributes", &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "u", ResourceAttributes: pods, NonResourceAttributes: metrics}}, "spec"},
		{"no subject", &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{NonResourceAttributes: metrics}}, "spec.user"},
		{"metadata", &authorizationv1.SubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: subject}, "metadata"},
		{"self review without subject", &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: metrics}}, ""},
		{"local review", &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Spec: local}, ""},
		{"local review of another namespace", &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "other"}, Spec: local}, "spec.resourceAttributes.namespace"},
		{"local non-resource review", &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Spec: subject}, "spec.nonResourceAttributes"},
	}
	for _, tt := range tests {
		errs := ValidateReview(tt.obj)
		switch {
		case tt.field == "" && len(errs) > 0:
			t.Errorf("%s: unexpected errors %v", tt.name, errs)
		case tt.field != "" && (len(errs) == 0 || errs[0].Field != tt.field):
			t.Errorf("%s: got %v, want an error on %s", tt.name, errs, tt.field)
		}
	}
}
