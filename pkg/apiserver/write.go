package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/registry"
	"github.com/batkube/batkube/pkg/store"
)

var (
	podsResource       = corev1.SchemeGroupVersion.WithResource("pods")
	nodesResource      = corev1.SchemeGroupVersion.WithResource("nodes")
	namespacesResource = corev1.SchemeGroupVersion.WithResource("namespaces")
	priorityClasses    = schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}
)

// update serves PUT of an object or of its status.
func (q *request) update(ctx context.Context, w http.ResponseWriter) {
	if q.op.Subresource != "" && q.op.Subresource != "status" {
		q.fail(w, apierrors.NewMethodNotSupported(q.res.gvr.GroupResource(), "update "+q.op.Subresource))
		return
	}
	obj, ok := q.body(w)
	if !ok {
		return
	}
	switch name := obj.GetName(); {
	case name == "":
		obj.SetName(q.args.Name)
	case name != q.args.Name:
		q.fail(w, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, q.args.Name)))
		return
	}
	change, scheduled := q.watchPodScheduled(func(store.Object) (store.Object, error) { return obj.DeepCopyObject().(store.Object), nil })
	st, err := q.server.update(ctx, q.res, q.args.Namespace, q.args.Name, q.op.Subresource, dryRun(q.http), change)
	if err != nil {
		q.fail(w, err)
		return
	}
	if *scheduled {
		q.notePodStatusWriter()
	}
	q.server.writeStored(w, q.http, q.format, q.res, st, http.StatusOK)
}

// update replaces an object by what change computes from its current served
// form (which change must not modify), with the real server's rules: optimistic concurrency on
// resourceVersion, server-owned metadata kept, status split, defaults,
// validation; an object whose last finalizer goes is deleted.
func (s *Server) update(ctx context.Context, r *resource, ns, name, sub string, dry bool,
	change func(cur store.Object) (store.Object, error)) (*store.Stored, error) {
	var dryResult store.Object
	mutate := func(curStored store.Object) (store.Object, error) {
		cur, err := s.convert(curStored, r.gvk)
		if err != nil {
			return nil, err
		}
		// cur is the store's own copy for this attempt; change must not modify it.
		obj, err := change(cur)
		if err != nil {
			return nil, err
		}
		if rv := obj.GetResourceVersion(); rv != "" && rv != curStored.GetResourceVersion() {
			return nil, apierrors.NewConflict(r.gvr.GroupResource(), name,
				errors.New("the object has been modified; please apply your changes to the latest version and try again"))
		}
		obj.SetResourceVersion(curStored.GetResourceVersion())
		obj.SetNamespace(cur.GetNamespace())
		obj.SetName(cur.GetName())
		obj.SetUID(cur.GetUID())
		obj.SetCreationTimestamp(cur.GetCreationTimestamp())
		obj.SetDeletionTimestamp(cur.GetDeletionTimestamp())
		obj.SetDeletionGracePeriodSeconds(cur.GetDeletionGracePeriodSeconds())
		obj.SetGeneration(cur.GetGeneration())
		obj.GetObjectKind().SetGroupVersionKind(r.gvk)
		newObj := func() k8sruntime.Object { o, _ := r.newObject(); return o }
		var out k8sruntime.Object = obj
		switch {
		case sub == "status":
			out, err = registry.StatusUpdate(cur, obj, newObj)
		case r.hasStatus():
			out, err = registry.WithStatus(obj, cur, newObj)
		}
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		registry.ApplyDefaults(out)
		if errs := registry.Validate(out); len(errs) > 0 {
			return nil, apierrors.NewInvalid(r.gvk.GroupKind(), name, errs)
		}
		stored, err := s.toStorage(r, out.(store.Object))
		if err != nil {
			return nil, err
		}
		if dry {
			dryResult = stored
			return nil, errDryRun
		}
		return stored, nil
	}
	st, err := s.store.Update(ctx, r.storage, ns, name, mutate)
	if errors.Is(err, errDryRun) {
		return store.NewStored(dryResult), nil
	}
	if err != nil {
		return nil, q2served(r, err, name)
	}
	s.eventWritten(ctx, r)
	if o := st.Object(); o.GetDeletionTimestamp() != nil && len(o.GetFinalizers()) == 0 {
		if _, isPod := o.(*corev1.Pod); !isPod {
			if _, err := s.store.Delete(ctx, r.storage, ns, name, nil); err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
		}
	}
	return st, nil
}

// Update changes an object as a client's PUT would (defaults, validation,
// status kept out of the main resource) but without admission: the
// simulation's own objects. change gets the current object, which it must
// not modify (DeepCopy it), and returns the new one.
func (s *Server) Update(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string,
	change func(cur store.Object) (store.Object, error)) (*store.Stored, error) {
	r, ok := s.catalog.byGVR[gvr]
	if !ok {
		return nil, fmt.Errorf("apiserver: %s is not served", gvr)
	}
	return s.update(ctx, r, namespace, name, "", false, change)
}

// UpdateStatus is Update of the status subresource: only the object's
// status changes.
func (s *Server) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string,
	change func(cur store.Object) (store.Object, error)) (*store.Stored, error) {
	r, ok := s.catalog.byGVR[gvr]
	if !ok {
		return nil, fmt.Errorf("apiserver: %s is not served", gvr)
	}
	return s.update(ctx, r, namespace, name, "status", false, change)
}

// errDryRun aborts a store update after a dry run computed its result.
var errDryRun = errors.New("dry run")

// patch serves PATCH of an object or of its status.
func (q *request) patch(ctx context.Context, w http.ResponseWriter) {
	if q.op.Subresource != "" && q.op.Subresource != "status" {
		q.fail(w, apierrors.NewMethodNotSupported(q.res.gvr.GroupResource(), "patch "+q.op.Subresource))
		return
	}
	ct := q.http.Header.Get("Content-Type")
	kind, ok := patchKind(ct)
	if !ok {
		q.fail(w, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", q.res.gvr.GroupResource(), q.args.Name,
			fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s, %s, %s, %s",
				mediaJSONPatch, mediaMergePatch, mediaStrategicPatch, mediaApplyPatchYAML), 0, false))
		return
	}
	patch := q.args.Patch
	if kind == mediaApplyPatchYAML {
		doc, err := yaml.YAMLToJSON(patch)
		if err != nil {
			q.fail(w, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err)))
			return
		}
		patch = doc
		if _, err := q.server.store.Get(q.res.storage, q.args.Namespace, q.args.Name); apierrors.IsNotFound(err) && q.op.Subresource == "" {
			q.applyCreate(ctx, w, patch)
			return
		}
	}
	change, scheduled := q.watchPodScheduled(func(cur store.Object) (store.Object, error) { return q.applyPatch(kind, cur, patch) })
	st, err := q.server.update(ctx, q.res, q.args.Namespace, q.args.Name, q.op.Subresource, dryRun(q.http), change)
	if err != nil {
		q.fail(w, err)
		return
	}
	if *scheduled {
		q.notePodStatusWriter()
	}
	q.server.writeStored(w, q.http, q.format, q.res, st, http.StatusOK)
}

func patchKind(contentType string) (string, bool) {
	for _, k := range []string{mediaJSONPatch, mediaMergePatch, mediaStrategicPatch, mediaApplyPatchYAML} {
		if isMediaType(contentType, k) {
			return k, true
		}
	}
	return "", false
}

// applyPatch returns cur with the patch applied.
func (q *request) applyPatch(kind string, cur store.Object, patch []byte) (store.Object, error) {
	doc, err := json.Marshal(cur)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	schemaObj, err := q.res.newObject()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var patched []byte
	switch kind {
	case mediaJSONPatch:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		patched, err = p.Apply(doc)
		if err != nil {
			return nil, newUnprocessable(q.res, q.args.Name, fmt.Sprintf("the server rejected our request due to an error in our request: %v", err))
		}
	case mediaMergePatch:
		patched, err = jsonpatch.MergePatch(doc, patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error applying merge patch: %v", err))
		}
	default: // strategic merge, and server-side apply approximated by it
		patched, err = strategicpatch.StrategicMergePatch(doc, patch, schemaObj)
		if err != nil {
			return nil, newUnprocessable(q.res, q.args.Name, fmt.Sprintf("error applying strategic merge patch: %v", err))
		}
	}
	if err := decodeJSON(patched, schemaObj); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if rv := schemaObj.GetResourceVersion(); rv == cur.GetResourceVersion() {
		schemaObj.SetResourceVersion("")
	}
	return schemaObj, nil
}

// applyCreate creates the object of a server-side apply that does not exist yet.
func (q *request) applyCreate(ctx context.Context, w http.ResponseWriter, doc []byte) {
	obj, err := q.res.newObject()
	if err != nil {
		q.fail(w, apierrors.NewInternalError(err))
		return
	}
	if err := decodeJSON(doc, obj); err != nil {
		q.fail(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	if obj.GetName() != q.args.Name {
		q.fail(w, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.GetName(), q.args.Name)))
		return
	}
	if err := q.checkNamespace(obj); err != nil {
		q.fail(w, err)
		return
	}
	st, err := q.server.create(ctx, q.res, obj, dryRun(q.http))
	if err != nil {
		q.fail(w, err)
		return
	}
	q.server.writeStored(w, q.http, q.format, q.res, st, http.StatusCreated)
}

func newUnprocessable(r *resource, name, msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
		Message: msg, Details: &metav1.StatusDetails{Name: name, Group: r.gvr.Group, Kind: r.gvr.Resource},
	}}
}

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

// resolvePriority sets a pod's priority from its PriorityClass (or the global
// default one), as the Priority admission plugin does.
func (s *Server) resolvePriority(pod *corev1.Pod) error {
	name, value, policy, err := s.priorityClass(podsResource.GroupResource(), pod.Name, pod.Spec.PriorityClassName)
	if err != nil {
		return err
	}
	pod.Spec.PriorityClassName = name
	pod.Spec.Priority = &value
	pod.Spec.PreemptionPolicy = policy
	return nil
}

// resolvePodGroupPriority sets a pod group's priority from its
// PriorityClass (or the global default one), as the Priority admission
// plugin does with the GenericWorkload feature: kube-scheduler refuses a
// gang whose pods' priority differs from their group's. A priority set by
// the client must be the one its class gives.
func (s *Server) resolvePodGroupPriority(gr schema.GroupResource, name string, className *string, priority **int32) error {
	class, value, _, err := s.priorityClass(gr, name, *className)
	if err != nil {
		return err
	}
	if *priority != nil && **priority != value {
		return apierrors.NewForbidden(gr, name, fmt.Errorf("priority set in the pod group (%d) must match the priority computed (%d) based on the priority class set in the spec", **priority, value))
	}
	*className, *priority = class, &value
	return nil
}

// priorityClass resolves a priority class name as the Priority admission
// plugin does: the named class, the built-in system classes, or with no
// name the global default class (name "" and priority 0 without one). The
// preemption policy defaults to PreemptLowerPriority.
func (s *Server) priorityClass(gr schema.GroupResource, objName, name string) (string, int32, *corev1.PreemptionPolicy, error) {
	var value int32
	var policy *corev1.PreemptionPolicy
	switch name {
	case "system-node-critical":
		value = 2000001000
	case "system-cluster-critical":
		value = 2000000000
	default:
		if name == "" {
			list, err := s.store.List(priorityClasses, store.ListOptions{})
			if err != nil {
				return "", 0, nil, err
			}
			name, value, policy = globalDefaultPriority(list.Items)
			break
		}
		st, err := s.store.Get(priorityClasses, "", name)
		if err != nil {
			return "", 0, nil, apierrors.NewForbidden(gr, objName, fmt.Errorf("no PriorityClass with name %v was found", name))
		}
		value, policy = priorityOf(st.Object())
	}
	if policy == nil {
		p := corev1.PreemptLowerPriority
		policy = &p
	}
	return name, value, policy, nil
}

// globalDefaultPriority returns the PriorityClass marked globalDefault, if any.
func globalDefaultPriority(items []*store.Stored) (string, int32, *corev1.PreemptionPolicy) {
	for _, st := range items {
		if pc, ok := st.Object().(*schedulingv1.PriorityClass); ok && pc.GlobalDefault {
			return pc.Name, pc.Value, pc.PreemptionPolicy
		}
	}
	return "", 0, nil
}

func priorityOf(obj store.Object) (int32, *corev1.PreemptionPolicy) {
	if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
		return pc.Value, pc.PreemptionPolicy
	}
	return 0, nil
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

// notePodStatusWriter records the client of a successful write of a pod's
// PodScheduled condition (watchPodScheduled) as a scheduler: a scheduler
// marks the pods it cannot place (PodScheduled=False).
func (q *request) notePodStatusWriter() {
	if q.op.Subresource == "status" && q.res.storage == podsResource.GroupResource() {
		q.server.actedAsScheduler(q.http.UserAgent())
	}
}
