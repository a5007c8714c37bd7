package apiserver

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/admission"
	"github.com/batkube/batkube/pkg/store"
)

// Admission webhooks: the Mutating- and ValidatingWebhookConfigurations
// stored, compiled into package admission's Webhooks as they are written,
// called for every create, update and delete of the resources they match
// (mutating ones before the object's validation, validating ones after),
// the simulation's own writes included.

var (
	mutatingConfigs   = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations").GroupResource()
	validatingConfigs = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations").GroupResource()
)

// admissionUser is who the webhooks are told sends every request: Batkube
// authorises everything, as for a cluster administrator.
var admissionUser = authenticationv1.UserInfo{Username: "system:admin", Groups: []string{"system:masters", "system:authenticated"}}

// webhookConfigsChanged compiles the webhook configurations stored now.
func (s *Server) webhookConfigsChanged() error {
	var mutating []*admissionregistrationv1.MutatingWebhookConfiguration
	var validating []*admissionregistrationv1.ValidatingWebhookConfiguration
	for _, gr := range []schema.GroupResource{mutatingConfigs, validatingConfigs} {
		list, err := s.store.List(gr, store.ListOptions{})
		if err != nil {
			return err
		}
		for _, st := range list.Items {
			switch c := st.Object().(type) {
			case *admissionregistrationv1.MutatingWebhookConfiguration:
				mutating = append(mutating, c)
			case *admissionregistrationv1.ValidatingWebhookConfiguration:
				validating = append(validating, c)
			}
		}
	}
	w, err := admission.Compile(mutating, validating)
	if err != nil {
		return err
	}
	s.webhooks.Store(w)
	return nil
}

// exemptFromWebhooks: the webhook configurations themselves, which the
// real server never sends to webhooks (a broken webhook could not be
// removed otherwise).
func exemptFromWebhooks(r *resource) bool {
	return r.storage == mutatingConfigs || r.storage == validatingConfigs
}

// admissionRequest describes a write of obj (nil on delete) over old (nil
// on create) for the webhooks.
func (s *Server) admissionRequest(r *resource, op admissionv1.Operation, sub string, obj, old store.Object, dry bool) (*admission.Request, error) {
	req := &admission.Request{Operation: op, Resource: r.gvr, SubResource: sub, Kind: r.gvk,
		Namespaced: r.namespaced, UserInfo: admissionUser, DryRun: dry}
	for _, o := range []store.Object{obj, old} {
		if o != nil {
			req.Namespace, req.Name = o.GetNamespace(), o.GetName()
		}
	}
	if obj != nil {
		b, err := encodeJSON(obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		req.Object, req.ObjectLabels = b, obj.GetLabels()
	}
	if old != nil {
		b, err := encodeJSON(old)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		req.OldObject, req.OldObjectLabels = b, old.GetLabels()
	}
	if r.namespaced && req.Namespace != "" {
		if ns, err := s.store.Get(namespacesResource.GroupResource(), "", req.Namespace); err == nil {
			req.NamespaceLabels = ns.Object().GetLabels()
		}
	}
	return req, nil
}

// mutate passes a write through the mutating webhooks and returns the
// object they leave (obj itself when none matches).
func (s *Server) mutate(ctx context.Context, r *resource, op admissionv1.Operation, sub string, obj, old store.Object, dry bool) (store.Object, error) {
	w := s.webhooks.Load()
	if w.Empty() || exemptFromWebhooks(r) {
		return obj, nil
	}
	req, err := s.admissionRequest(r, op, sub, obj, old, dry)
	if err != nil {
		return nil, err
	}
	out, err := w.Mutate(ctx, req)
	if err != nil || string(out) == string(req.Object) {
		return obj, err
	}
	mutated, err := r.newObject()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if err := decodeJSON(out, mutated); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("decoding the object the mutating webhooks left: %w", err))
	}
	mutated.GetObjectKind().SetGroupVersionKind(r.gvk)
	return mutated, nil
}

// validateAdmission passes a write through the validating webhooks.
func (s *Server) validateAdmission(ctx context.Context, r *resource, op admissionv1.Operation, sub string, obj, old store.Object, dry bool) error {
	w := s.webhooks.Load()
	if w.Empty() || exemptFromWebhooks(r) {
		return nil
	}
	req, err := s.admissionRequest(r, op, sub, obj, old, dry)
	if err != nil {
		return err
	}
	return w.Validate(ctx, req)
}
