package apiserver

import (
	"context"
	"fmt"
	"net"
	"strconv"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

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

// resolveService gives the address of a Service's port for a webhook: the
// first ready endpoint of its EndpointSlices, at the slice's port of the
// same name as the Service's port (its target), as kube-apiserver routes
// to endpoints. A webhook run beside Batkube (Kueue's manager) is reached
// so through the Service its configuration names, with an EndpointSlice
// that points at it.
func (s *Server) resolveService(namespace, name string, port int32) (string, error) {
	st, err := s.store.Get(corev1.SchemeGroupVersion.WithResource("services").GroupResource(), namespace, name)
	if err != nil {
		return "", fmt.Errorf("no service %s/%s", namespace, name)
	}
	svc := st.Object().(*corev1.Service)
	portName, target := "", port
	found := false
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			portName, found = p.Name, true
			if p.TargetPort.IntValue() > 0 {
				target = int32(p.TargetPort.IntValue())
			}
		}
	}
	if !found {
		return "", fmt.Errorf("service %s/%s has no port %d", namespace, name, port)
	}
	sel, _ := labels.Parse(discoveryv1.LabelServiceName + "=" + name)
	slices, err := s.store.List(discoveryv1.SchemeGroupVersion.WithResource("endpointslices").GroupResource(), store.ListOptions{Selection: store.Selection{Namespace: namespace, Label: sel}})
	if err != nil {
		return "", err
	}
	for _, item := range slices.Items {
		es, ok := item.Object().(*discoveryv1.EndpointSlice)
		if !ok {
			continue
		}
		p := target
		for _, ep := range es.Ports {
			if ep.Port != nil && ptr.Deref(ep.Name, "") == portName {
				p = *ep.Port
			}
		}
		for _, e := range es.Endpoints {
			if len(e.Addresses) > 0 && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
				return net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(p))), nil
			}
		}
	}
	return "", fmt.Errorf("service %s/%s has no ready endpoint (an EndpointSlice labelled %s=%s)", namespace, name, discoveryv1.LabelServiceName, name)
}

// admissionUser is who the webhooks are told sends every request: Batkube
// authorises everything, as for a cluster administrator.
var admissionUser = authenticationv1.UserInfo{Username: "system:admin", Groups: []string{"system:masters", "system:authenticated"}}

// webhookConfigsChanged compiles the webhook configurations stored now. A
// webhook that cannot be compiled is left out (and logged); the write that
// stored it stands.
func (s *Server) webhookConfigsChanged() error {
	s.webhooksMu.Lock()
	defer s.webhooksMu.Unlock()
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
	w, err := admission.Compile(mutating, validating, s.resolveService, &s.webhookClients)
	if err != nil {
		s.log.Warn("admission webhooks left out", "err", err)
	}
	s.webhooks.Store(w)
	s.webhookClients.Retain(w)
	return nil
}

// exemptFromWebhooks: the webhook configurations themselves, which the
// real server never sends to webhooks (a broken webhook could not be
// removed otherwise).
func exemptFromWebhooks(r *resource) bool {
	return r.storage == mutatingConfigs || r.storage == validatingConfigs
}

// admissionRequest describes a write to r for the webhooks, without its
// objects yet (withObjects adds them): enough to find the webhooks whose
// rules match it.
func admissionRequest(r *resource, op admissionv1.Operation, sub string, dry bool) *admission.Request {
	return &admission.Request{Operation: op, Resource: r.gvr, SubResource: sub, Kind: r.gvk,
		Namespaced: r.namespaced, UserInfo: admissionUser, DryRun: dry}
}

// withObjects adds to req the write's object obj (nil on delete), the
// stored one old (nil on create), and their namespace's labels.
func (s *Server) withObjects(req *admission.Request, obj, old store.Object) error {
	for _, o := range []store.Object{obj, old} {
		if o != nil {
			req.Namespace, req.Name = o.GetNamespace(), o.GetName()
		}
	}
	if obj != nil {
		b, err := encodeJSON(obj)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		req.Object, req.ObjectLabels = b, obj.GetLabels()
	}
	if old != nil {
		b, err := encodeJSON(old)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		req.OldObject, req.OldObjectLabels = b, old.GetLabels()
	}
	if req.Namespaced && req.Namespace != "" {
		if ns, err := s.store.Get(namespacesResource.GroupResource(), "", req.Namespace); err == nil {
			req.NamespaceLabels = ns.Object().GetLabels()
		}
	}
	return nil
}

// mutate passes a write through the mutating webhooks and returns the
// object they leave (obj itself when none matches).
func (s *Server) mutate(ctx context.Context, r *resource, op admissionv1.Operation, sub string, obj, old store.Object, dry bool) (store.Object, error) {
	w := s.webhooks.Load()
	if w.Empty() || exemptFromWebhooks(r) {
		return obj, nil
	}
	req := admissionRequest(r, op, sub, dry)
	if !w.Intercepts(true, req) { // most writes: leases, events, pods' status
		return obj, nil
	}
	if err := s.withObjects(req, obj, old); err != nil {
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
	req := admissionRequest(r, op, sub, dry)
	if !w.Intercepts(false, req) {
		return nil
	}
	if err := s.withObjects(req, obj, old); err != nil {
		return err
	}
	return w.Validate(ctx, req)
}
