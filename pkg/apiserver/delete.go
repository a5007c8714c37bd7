package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/registry"
	"github.com/batkube/batkube/pkg/store"
)

// undeletableNamespaces may not be deleted, as on a real cluster.
var undeletableNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic}

// deleteOptions reads the options of a DELETE from its body or its query.
func (q *request) deleteOptions() (*metav1.DeleteOptions, error) {
	if opts, ok := q.args.Body.(*metav1.DeleteOptions); ok && opts != nil {
		return opts, checkDryRun(q.op.Verb, opts.DryRun)
	}
	opts := &metav1.DeleteOptions{}
	if err := q.server.params.DecodeParameters(q.http.URL.Query(), corev1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return opts, nil
}

// delete serves DELETE of one object.
func (q *request) delete(ctx context.Context, w http.ResponseWriter) {
	if q.op.Subresource != "" {
		q.fail(w, apierrors.NewMethodNotSupported(q.res.gvr.GroupResource(), "delete "+q.op.Subresource))
		return
	}
	opts, err := q.deleteOptions()
	if err != nil {
		q.fail(w, err)
		return
	}
	if q.res.storage == namespacesResource.GroupResource() && slices.Contains(undeletableNamespaces, q.args.Name) {
		q.fail(w, apierrors.NewForbidden(namespacesResource.GroupResource(), q.args.Name, fmt.Errorf("this namespace may not be deleted")))
		return
	}
	st, gone, err := q.server.deleteObject(ctx, q.res, q.args.Namespace, q.args.Name, opts)
	if err != nil {
		q.fail(w, err)
		return
	}
	_, isPod := st.Object().(*corev1.Pod)
	_, isNamespace := st.Object().(*corev1.Namespace)
	if isPod || isNamespace || !gone {
		q.server.writeStored(w, q.http, q.format, q.res, st, http.StatusOK)
		return
	}
	o := st.Object()
	q.server.writeStatus(w, q.http, &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusOK,
		Details: &metav1.StatusDetails{Name: o.GetName(), Group: q.res.gvr.Group, Kind: q.res.gvr.Resource, UID: o.GetUID()}})
}

// deleteCollection serves DELETE on a collection.
func (q *request) deleteCollection(ctx context.Context, w http.ResponseWriter) {
	opts, err := q.deleteOptions()
	if err != nil {
		q.fail(w, err)
		return
	}
	_, sel, err := q.listOptions()
	if err != nil {
		q.fail(w, err)
		return
	}
	list, err := q.server.store.List(q.res.storage, store.ListOptions{Selection: sel})
	if err != nil {
		q.fail(w, err)
		return
	}
	for _, st := range list.Items {
		o := st.Object()
		if q.res.storage == namespacesResource.GroupResource() && slices.Contains(undeletableNamespaces, o.GetName()) {
			continue
		}
		if _, _, err := q.server.deleteObject(ctx, q.res, o.GetNamespace(), o.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
			q.fail(w, err)
			return
		}
	}
	q.server.writeStatus(w, q.http, &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusOK})
}

// deleteObject deletes an object the way the real server does: a bound,
// running pod first gets a deletionTimestamp and is removed when its
// Terminator says so; an object with finalizers waits for them; a namespace
// takes its contents with it. gone tells whether the object was removed.
func (s *Server) deleteObject(ctx context.Context, r *resource, ns, name string, opts *metav1.DeleteOptions) (st *store.Stored, gone bool, err error) {
	cur, err := s.store.Get(r.storage, ns, name)
	if err != nil {
		return nil, false, q2served(r, err, name)
	}
	if err := checkPreconditions(r, cur.Object(), opts.Preconditions); err != nil {
		return nil, false, err
	}
	dry := slices.Contains(opts.DryRun, metav1.DryRunAll)
	if err := s.validateAdmission(ctx, r, admissionv1.Delete, "", nil, cur.Object(), dry); err != nil {
		return nil, false, err
	}
	if dry {
		return cur, true, nil
	}
	obj := cur.Object()
	if pod, ok := obj.(*corev1.Pod); ok && needsGracefulDeletion(pod, opts) {
		return s.terminatePod(ctx, r, pod, opts)
	}
	if len(obj.GetFinalizers()) > 0 {
		st, err := s.markDeleting(ctx, r, ns, name, 0)
		if err == nil {
			err = s.written(ctx, r)
		}
		return st, false, err
	}
	if _, ok := obj.(*corev1.Namespace); ok {
		if err := s.deleteNamespaceContents(ctx, name); err != nil {
			return nil, false, err
		}
	}
	st, err = s.store.Delete(ctx, r.storage, ns, name, preconditionFunc(r, opts.Preconditions))
	if err != nil {
		return nil, false, q2served(r, err, name)
	}
	return st, true, s.written(ctx, r)
}

// deleted follows the deletion of an object of r (gone or marked).
func checkPreconditions(r *resource, obj store.Object, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	if p.UID != nil && *p.UID != obj.GetUID() {
		return apierrors.NewConflict(r.gvr.GroupResource(), obj.GetName(),
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, obj.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != obj.GetResourceVersion() {
		return apierrors.NewConflict(r.gvr.GroupResource(), obj.GetName(),
			fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, obj.GetResourceVersion()))
	}
	return nil
}

func preconditionFunc(r *resource, p *metav1.Preconditions) func(store.Object) error {
	if p == nil {
		return nil
	}
	return func(cur store.Object) error { return checkPreconditions(r, cur, p) }
}

// needsGracefulDeletion tells whether a pod is terminated by its node (it is
// bound and not finished, and no zero grace period was asked for).
func needsGracefulDeletion(pod *corev1.Pod, opts *metav1.DeleteOptions) bool {
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	return gracePeriod(pod, opts) > 0 || pod.DeletionTimestamp != nil
}

func gracePeriod(pod *corev1.Pod, opts *metav1.DeleteOptions) int64 {
	if opts.GracePeriodSeconds != nil {
		return max(*opts.GracePeriodSeconds, 0)
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

// terminatePod marks a running pod as terminating and hands it to the
// Terminator (without one, the pod is removed at once, as by a kubelet that
// kills instantly).
func (s *Server) terminatePod(ctx context.Context, r *resource, pod *corev1.Pod, opts *metav1.DeleteOptions) (*store.Stored, bool, error) {
	if pod.DeletionTimestamp != nil {
		cur, err := s.store.Get(r.storage, pod.Namespace, pod.Name)
		return cur, false, err
	}
	st, err := s.markDeleting(ctx, r, pod.Namespace, pod.Name, gracePeriod(pod, opts))
	if err != nil {
		return nil, false, err
	}
	if s.opts.Terminator != nil {
		s.opts.Terminator.PodTerminating(st.Copy().(*corev1.Pod))
		return st, false, nil
	}
	deleted, err := s.store.Delete(ctx, r.storage, pod.Namespace, pod.Name, nil)
	if err != nil {
		return nil, false, q2served(r, err, pod.Name)
	}
	return deleted, true, nil
}

// markDeleting sets an object's deletionTimestamp (now + grace seconds).
func (s *Server) markDeleting(ctx context.Context, r *resource, ns, name string, grace int64) (*store.Stored, error) {
	st, err := s.store.Update(ctx, r.storage, ns, name, func(cur store.Object) (store.Object, error) {
		if cur.GetDeletionTimestamp() == nil {
			ts := s.stamp(time.Duration(grace) * time.Second)
			cur.SetDeletionTimestamp(&ts)
			cur.SetDeletionGracePeriodSeconds(&grace)
		}
		return cur, nil
	})
	if err != nil {
		return nil, q2served(r, err, name)
	}
	return st, nil
}

// Delete deletes an object as a client's DELETE would (preconditions aside;
// a running pod is terminated, finalizers are waited for) but without
// admission: the simulation's own objects. gone tells whether the object
// was removed at once.
func (s *Server) Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (gone bool, err error) {
	r, ok := s.resource(gvr)
	if !ok {
		return false, fmt.Errorf("apiserver: %s is not served", gvr)
	}
	_, gone, err = s.deleteObject(ctx, r, namespace, name, &metav1.DeleteOptions{})
	return gone, err
}

// RemovePod removes a pod whose containers are gone: what a kubelet does
// last, a deletion of grace 0. A pod that still has finalizers (a Job's
// tracking finalizer) is only marked deleted: the API removes it once its
// last finalizer goes (update), as the real server does. gone tells
// whether it was removed now. A simulation's Terminator calls it.
func (s *Server) RemovePod(ctx context.Context, namespace, name string) (gone bool, err error) {
	_, err = s.store.DeleteSharing(ctx, podsResource.GroupResource(), namespace, name,
		func(cur store.Object) error {
			if len(cur.GetFinalizers()) > 0 {
				return errFinalizersLeft
			}
			return nil
		},
		func(cur store.Object) store.Object { return registry.PodForMetadataChange(cur).(store.Object) })
	if errors.Is(err, errFinalizersLeft) {
		r := s.catalog.byGVR[podsResource]
		_, err = s.markDeleting(ctx, r, namespace, name, 0)
		return false, err
	}
	return err == nil, err
}

// errFinalizersLeft: an object cannot be removed yet.
var errFinalizersLeft = errors.New("finalizers left")

// deleteNamespaceContents removes every namespaced object of a namespace (the
// namespace controller's work, done at once).
func (s *Server) deleteNamespaceContents(ctx context.Context, ns string) error {
	for _, r := range append(s.catalog.namespacedStorages(), s.customResources().namespacedStorages()...) {
		list, err := s.store.List(r.storage, store.ListOptions{Selection: store.Selection{Namespace: ns}})
		if err != nil {
			return err
		}
		for _, st := range list.Items {
			o := st.Object()
			if _, err := s.store.Delete(ctx, r.storage, o.GetNamespace(), o.GetName(), nil); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s %s/%s with its namespace: %w", r.storage, o.GetNamespace(), o.GetName(), err)
			}
		}
	}
	return nil
}
