package apiserver

import (
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/registry"
	"github.com/batkube/batkube/pkg/store"
)

// Reviews are the create-only resources of authentication.k8s.io and
// authorization.k8s.io: a POST asks a question (whose token is this? may
// this user do that?) and the answer comes back in the object's status. As
// in the real server (k8s.io/kubernetes/pkg/registry/authentication and
// .../authorization), nothing is stored: a review has no resourceVersion,
// leaves the store as it was, and cannot be read, listed or watched.

// reviewer answers one kind of review: it returns the object to send back.
type reviewer func(q *request, obj store.Object) (k8sruntime.Object, error)

// reviewerFor returns the reviewer of a kind, or nil for a stored kind.
func reviewerFor(gk schema.GroupKind) reviewer {
	switch gk {
	case authenticationv1.SchemeGroupVersion.WithKind("TokenReview").GroupKind():
		return (*request).tokenReview
	case authenticationv1.SchemeGroupVersion.WithKind("SelfSubjectReview").GroupKind():
		return (*request).selfSubjectReview
	case authorizationv1.SchemeGroupVersion.WithKind("SubjectAccessReview").GroupKind(),
		authorizationv1.SchemeGroupVersion.WithKind("LocalSubjectAccessReview").GroupKind():
		return (*request).subjectAccessReview
	case authorizationv1.SchemeGroupVersion.WithKind("SelfSubjectAccessReview").GroupKind():
		return (*request).selfSubjectAccessReview
	case authorizationv1.SchemeGroupVersion.WithKind("SelfSubjectRulesReview").GroupKind():
		return (*request).selfSubjectRulesReview
	}
	return nil
}

// review serves POST of a review: 201 Created with the answer, in the
// negotiated encoding.
func (q *request) review(w http.ResponseWriter) {
	obj, ok := q.body(w)
	if !ok {
		return
	}
	out, err := q.res.review(q, obj)
	if err != nil {
		q.fail(w, err)
		return
	}
	out.GetObjectKind().SetGroupVersionKind(q.res.gvk)
	q.server.writeObjectShaped(w, q.http, q.format, q.res, out, http.StatusCreated, q.res.gvk)
}

// tokenReview answers whose token spec.token is. The real server echoes the
// review (token included) with the status filled; an unknown token is
// unauthenticated with the error of its bearer token authenticator.
// Batkube's tokens are valid for any audience: status.audiences repeats
// spec.audiences.
func (q *request) tokenReview(obj store.Object) (k8sruntime.Object, error) {
	tr, ok := obj.(*authenticationv1.TokenReview)
	if !ok {
		return nil, apierrors.NewBadRequest("not a TokenReview")
	}
	if tr.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	u, ok := q.server.authenticateToken(tr.Spec.Token)
	if !ok {
		tr.Status = authenticationv1.TokenReviewStatus{Error: errInvalidToken}
		return tr, nil
	}
	tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: u, Audiences: tr.Spec.Audiences}
	return tr, nil
}

// selfSubjectReview answers who the sender of the request is. Like the real
// server, it answers a new object: no spec, created now.
func (q *request) selfSubjectReview(store.Object) (k8sruntime.Object, error) {
	u, err := q.server.requester(q.http)
	if err != nil {
		return nil, err
	}
	return &authenticationv1.SelfSubjectReview{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: q.server.stamp(0)},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: u},
	}, nil
}

// subjectAccessReview answers whether spec.user may do what the spec says,
// for a SubjectAccessReview or a LocalSubjectAccessReview (whose namespace
// comes from the path). The Authorizer has no explicit deny: a refusal is
// allowed=false, denied=false, as RBAC's.
func (q *request) subjectAccessReview(obj store.Object) (k8sruntime.Object, error) {
	if errs := registry.ValidateReview(obj); len(errs) > 0 {
		return nil, apierrors.NewInvalid(q.res.gvk.GroupKind(), "", errs)
	}
	switch r := obj.(type) {
	case *authorizationv1.SubjectAccessReview:
		r.Status = q.server.accessStatus(r.Spec)
	case *authorizationv1.LocalSubjectAccessReview:
		r.Status = q.server.accessStatus(r.Spec)
	default:
		return nil, apierrors.NewBadRequest("not a SubjectAccessReview")
	}
	return obj, nil
}

// selfSubjectAccessReview answers whether the sender of the request may do
// what the spec says.
func (q *request) selfSubjectAccessReview(obj store.Object) (k8sruntime.Object, error) {
	r, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest("not a SelfSubjectAccessReview")
	}
	if errs := registry.ValidateReview(r); len(errs) > 0 {
		return nil, apierrors.NewInvalid(q.res.gvk.GroupKind(), "", errs)
	}
	u, err := q.server.requester(q.http)
	if err != nil {
		return nil, err
	}
	spec := subjectOf(u)
	spec.ResourceAttributes, spec.NonResourceAttributes = r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes
	r.Status = q.server.accessStatus(spec)
	return r, nil
}

// selfSubjectRulesReview answers what the sender of the request may do in
// spec.namespace. An Authorizer only answers questions, so the rules are
// all-or-nothing: everything ("*") when it allows every verb on every
// resource (and every non-resource URL), like the real server's AlwaysAllow
// authorizer; otherwise none and status.incomplete. Like the real server, it
// answers a new object without the spec.
func (q *request) selfSubjectRulesReview(obj store.Object) (k8sruntime.Object, error) {
	r, ok := obj.(*authorizationv1.SelfSubjectRulesReview)
	if !ok {
		return nil, apierrors.NewBadRequest("not a SelfSubjectRulesReview")
	}
	ns := r.Spec.Namespace
	if ns == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	u, err := q.server.requester(q.http)
	if err != nil {
		return nil, err
	}
	out := &authorizationv1.SelfSubjectRulesReview{}
	all := []string{"*"}
	spec := subjectOf(u)
	spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "*", Group: "*", Version: "*", Resource: "*"}
	if ok, _ := q.server.authorize(spec); ok {
		out.Status.ResourceRules = []authorizationv1.ResourceRule{{Verbs: all, APIGroups: all, Resources: all}}
	}
	spec.ResourceAttributes, spec.NonResourceAttributes = nil, &authorizationv1.NonResourceAttributes{Path: "*", Verb: "*"}
	if ok, _ := q.server.authorize(spec); ok {
		out.Status.NonResourceRules = []authorizationv1.NonResourceRule{{Verbs: all, NonResourceURLs: all}}
	}
	if out.Status.ResourceRules == nil || out.Status.NonResourceRules == nil {
		out.Status.Incomplete = true
		out.Status.EvaluationError = "Batkube's authorizer does not list the rules it allows"
	}
	return out, nil
}

// accessStatus decides an access review.
func (s *Server) accessStatus(spec authorizationv1.SubjectAccessReviewSpec) authorizationv1.SubjectAccessReviewStatus {
	allowed, reason := s.authorize(spec)
	return authorizationv1.SubjectAccessReviewStatus{Allowed: allowed, Reason: reason}
}

// subjectOf returns the subject part of an access review's spec for a user.
func subjectOf(u authenticationv1.UserInfo) authorizationv1.SubjectAccessReviewSpec {
	spec := authorizationv1.SubjectAccessReviewSpec{User: u.Username, Groups: u.Groups, UID: u.UID}
	if len(u.Extra) > 0 {
		spec.Extra = make(map[string]authorizationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	return spec
}
