package apiserver

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/registry"
	"github.com/batkube/batkube/pkg/store"
)

// The pods' own requests: a binding, an eviction, and who writes their
// PodScheduled condition (the scheduler, for the broker's liveness).

// bindingSubresource serves POST pods/{name}/binding.
func (q *request) bindingSubresource(ctx context.Context, w http.ResponseWriter) {
	b, ok := q.args.Body.(*corev1.Binding)
	if !ok || b == nil {
		q.fail(w, apierrors.NewBadRequest("the body must be a Binding"))
		return
	}
	if b.Name == "" {
		b.Name = q.args.Name
	}
	if b.Name != q.args.Name {
		q.fail(w, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", b.Name, q.args.Name)))
		return
	}
	q.bind(ctx, w, b)
}

// bind assigns a pod to a node, as the real binding REST does.
func (q *request) bind(ctx context.Context, w http.ResponseWriter, b *corev1.Binding) {
	if b.Namespace != "" && b.Namespace != q.args.Namespace {
		q.fail(w, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
		return
	}
	if err := q.server.Bind(ctx, q.args.Namespace, b); err != nil {
		q.fail(w, err)
		return
	}
	q.server.actedAsScheduler(q.http.UserAgent())
	q.server.writeStatus(w, q.http, &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated})
}

// Bind sets a pending pod's node and its PodScheduled condition. Binding a
// pod that is already assigned is a 409 Conflict.
func (s *Server) Bind(ctx context.Context, namespace string, b *corev1.Binding) error {
	target := b.Target.Name
	if target == "" || (b.Target.Kind != "" && b.Target.Kind != "Node") {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Binding"}, b.Name, nil)
	}
	bindingGR := schema.GroupResource{Resource: "pods/binding"}
	// A binding writes the pod's node, an annotation and a condition: the
	// new state shares the rest of the spec with the old one.
	_, err := s.store.ChangeSharing(ctx, podsResource.GroupResource(), namespace, b.Name, sharePodSpec, func(cur store.Object) (store.Object, error) {
		pod, ok := cur.(*corev1.Pod)
		if !ok {
			return nil, apierrors.NewInternalError(fmt.Errorf("stored pod is a %T", cur))
		}
		if b.UID != "" && b.UID != pod.UID {
			return nil, apierrors.NewConflict(bindingGR, b.Name, fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
		}
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(bindingGR, b.Name, fmt.Errorf("pod %v is being deleted, cannot be assigned to a host", b.Name))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(bindingGR, b.Name, fmt.Errorf("pod %v is already assigned to node %q", b.Name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = target
		for k, v := range b.Annotations {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[k] = v
		}
		registry.SetPodCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(s.clock.Now())})
		return pod, nil
	})
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(podsResource.GroupResource(), b.Name)
	}
	return err
}

// sharePodSpec copies a pod for a change of its metadata, status and node
// (registry.PodForStatusChange).
func sharePodSpec(cur store.Object) store.Object {
	return registry.PodForStatusChange(cur).(store.Object)
}

// eviction serves POST pods/{name}/eviction: a graceful delete.
func (q *request) eviction(ctx context.Context, w http.ResponseWriter) {
	var opts *metav1.DeleteOptions
	switch e := q.args.Body.(type) {
	case *policyv1.Eviction:
		opts = e.DeleteOptions
	case *policyv1beta1.Eviction:
		opts = e.DeleteOptions
	}
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	if _, _, err := q.server.deleteObject(ctx, q.res, q.args.Namespace, q.args.Name, opts); err != nil {
		q.fail(w, err)
		return
	}
	q.server.writeStatus(w, q.http, &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated})
}

// watchPodScheduled wraps the change of a pod's status so that *scheduled
// tells, once the update is done, whether it changed the pod's
// PodScheduled condition: what a scheduler writes, and the controllers that
// write other parts of a pod's status (the resource claim controller's
// resourceClaimStatuses) do not.
func (q *request) watchPodScheduled(change func(store.Object) (store.Object, error)) (func(store.Object) (store.Object, error), *bool) {
	scheduled := new(bool)
	if q.op.Subresource != "status" || q.res.storage != podsResource.GroupResource() {
		return change, scheduled
	}
	return func(cur store.Object) (store.Object, error) {
		out, err := change(cur)
		before, _ := cur.(*corev1.Pod)
		after, _ := out.(*corev1.Pod)
		*scheduled = err == nil && before != nil && after != nil && podScheduled(before) != podScheduled(after)
		return out, err
	}, scheduled
}

// podScheduled returns what a scheduler writes of a pod's PodScheduled
// condition (its times aside: a patch goes through JSON, which keeps
// seconds only).
func podScheduled(pod *corev1.Pod) [3]string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return [3]string{string(c.Status), c.Reason, c.Message}
		}
	}
	return [3]string{}
}

// SetPodStatus is the kubelet's write of a pod's status (the simulation's
// kubelet, part of this server: its writes are trusted, not validated as a
// client's are). mutate changes the status of a copy of the pod that shares
// its spec with the stored one (registry.PodForStatusChange), so that the
// versions the watch history keeps share it too. A pod that is gone is a
// NotFound error.
func (s *Server) SetPodStatus(ctx context.Context, namespace, name string, mutate func(*corev1.Pod) error) error {
	_, err := s.store.ChangeSharing(ctx, podsResource.GroupResource(), namespace, name, sharePodSpec, func(cur store.Object) (store.Object, error) {
		pod, ok := cur.(*corev1.Pod)
		if !ok {
			return nil, fmt.Errorf("apiserver: stored pod %s/%s is a %T", namespace, name, cur)
		}
		if err := mutate(pod); err != nil {
			return nil, err
		}
		return pod, nil
	})
	return err
}
