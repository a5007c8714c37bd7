package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

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
	q.updateAndWrite(ctx, w, func(cur store.Object) (store.Object, error) {
		return q.track(cur, obj.DeepCopyObject().(store.Object))
	})
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
		var out k8sruntime.Object = obj
		if r.custom != nil {
			if obj, err = s.mutate(ctx, r, admissionv1.Update, sub, obj, cur, dry); err != nil {
				return nil, err
			}
			if out, err = admitCustom(ctx, r, obj, cur, sub); err != nil {
				return nil, err
			}
		} else {
			switch {
			case sub == "status":
				out, err = registry.StatusUpdate(cur, obj)
			case r.hasStatus():
				out, err = registry.WithStatus(obj, cur)
			}
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			registry.ApplyDefaults(out)
			if out, err = s.mutate(ctx, r, admissionv1.Update, sub, out.(store.Object), cur, dry); err != nil {
				return nil, err
			}
			if pod, ok := out.(*corev1.Pod); ok {
				keepPriority(pod, cur.(*corev1.Pod))
			}
			if def, ok := out.(*apiextensionsv1.CustomResourceDefinition); ok {
				if err := s.admitDefinition(ctx, def, cur.(*apiextensionsv1.CustomResourceDefinition), sub == "status"); err != nil {
					return nil, err
				}
			}
			if errs := registry.ValidateUpdate(out, cur); len(errs) > 0 {
				return nil, apierrors.NewInvalid(r.gvk.GroupKind(), name, errs)
			}
		}
		if err := s.validateAdmission(ctx, r, admissionv1.Update, sub, out.(store.Object), cur, dry); err != nil {
			return nil, err
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
	if o := st.Object(); o.GetDeletionTimestamp() != nil && len(o.GetFinalizers()) == 0 && !awaitsItsKubelet(o) {
		if _, err := s.store.Delete(ctx, r.storage, ns, name, nil); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	if err := s.written(ctx, r); err != nil {
		return nil, err
	}
	return st, nil
}

// awaitsItsKubelet: a terminating pod that is bound and not finished is
// removed by its node's kubelet (RemovePod), not when its finalizers go.
func awaitsItsKubelet(o store.Object) bool {
	pod, ok := o.(*corev1.Pod)
	return ok && pod.Spec.NodeName != "" && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// Update changes an object as a client's PUT would (defaults, validation,
// status kept out of the main resource) but without admission: the
// simulation's own objects. change gets the current object, which it must
// not modify (DeepCopy it), and returns the new one.
func (s *Server) Update(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string,
	change func(cur store.Object) (store.Object, error)) (*store.Stored, error) {
	return s.updateServed(ctx, gvr, namespace, name, "", change)
}

// UpdateStatus is Update of the status subresource: only the object's
// status changes.
func (s *Server) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string,
	change func(cur store.Object) (store.Object, error)) (*store.Stored, error) {
	return s.updateServed(ctx, gvr, namespace, name, "status", change)
}

func (s *Server) updateServed(ctx context.Context, gvr schema.GroupVersionResource, namespace, name, subresource string,
	change func(cur store.Object) (store.Object, error)) (*store.Stored, error) {
	r, ok := s.resource(gvr)
	if !ok {
		return nil, fmt.Errorf("apiserver: %s is not served", gvr)
	}
	return s.update(ctx, r, namespace, name, subresource, false, change)
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
	if ok && kind == mediaStrategicPatch && q.res.custom != nil {
		// As the real server: custom resources have no patch strategies.
		q.fail(w, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", q.res.gvr.GroupResource(), q.args.Name,
			fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s, %s, %s",
				mediaJSONPatch, mediaMergePatch, mediaApplyPatchYAML), 0, false))
		return
	}
	if !ok {
		q.fail(w, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", q.res.gvr.GroupResource(), q.args.Name,
			fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s, %s, %s, %s",
				mediaJSONPatch, mediaMergePatch, mediaStrategicPatch, mediaApplyPatchYAML), 0, false))
		return
	}
	patch := q.args.Patch
	patchCur := func(cur store.Object) (store.Object, error) {
		obj, err := q.applyPatch(kind, cur, patch)
		if err != nil {
			return nil, err
		}
		return q.track(cur, obj)
	}
	if kind == mediaApplyPatchYAML {
		applied, err := q.applied(patch)
		if err != nil {
			q.fail(w, err)
			return
		}
		if _, err := q.server.store.Get(q.res.storage, q.args.Namespace, q.args.Name); apierrors.IsNotFound(err) && q.op.Subresource == "" {
			q.applyCreate(ctx, w, applied)
			return
		}
		patchCur = func(cur store.Object) (store.Object, error) { return q.applyTo(cur, applied) }
	}
	q.updateAndWrite(ctx, w, patchCur)
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
	patched, err := q.patchDocument(kind, doc, patch, schemaObj)
	if err != nil {
		return nil, err
	}
	if err := decodeJSON(patched, schemaObj); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if rv := schemaObj.GetResourceVersion(); rv == cur.GetResourceVersion() {
		schemaObj.SetResourceVersion("")
	}
	return schemaObj, nil
}

// patchDocument applies a patch of a kind (a JSON patch, a merge patch, or
// a strategic merge patch over the type of schema) to a JSON document; its
// errors are the API's answers.
func (q *request) patchDocument(kind string, doc, patch []byte, schema any) ([]byte, error) {
	switch kind {
	case mediaJSONPatch:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		patched, err := p.Apply(doc)
		if err != nil {
			return nil, newUnprocessable(q.res, q.args.Name, fmt.Sprintf("the server rejected our request due to an error in our request: %v", err))
		}
		return patched, nil
	case mediaMergePatch:
		patched, err := jsonpatch.MergePatch(doc, patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error applying merge patch: %v", err))
		}
		return patched, nil
	default:
		patched, err := strategicpatch.StrategicMergePatch(doc, patch, schema)
		if err != nil {
			return nil, newUnprocessable(q.res, q.args.Name, fmt.Sprintf("error applying strategic merge patch: %v", err))
		}
		return patched, nil
	}
}

// applyCreate creates the object of a server-side apply that does not exist yet.
func (q *request) applyCreate(ctx context.Context, w http.ResponseWriter, applied *unstructured.Unstructured) {
	empty, err := q.res.newObject()
	if err != nil {
		q.fail(w, apierrors.NewInternalError(err))
		return
	}
	obj, err := q.applyTo(empty, applied)
	if err != nil {
		q.fail(w, err)
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
	q.createAndWrite(ctx, w, obj)
}

func newUnprocessable(r *resource, name, msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
		Message: msg, Details: &metav1.StatusDetails{Name: name, Group: r.gvr.Group, Kind: r.gvr.Resource},
	}}
}

// updateAndWrite stores the change of the object of the URL and answers
// 200 with what was stored, noting a client that acted as a scheduler
// (watchPodScheduled).
func (q *request) updateAndWrite(ctx context.Context, w http.ResponseWriter, change func(store.Object) (store.Object, error)) {
	change, scheduled := q.watchPodScheduled(change)
	st, err := q.server.update(ctx, q.res, q.args.Namespace, q.args.Name, q.op.Subresource, dryRun(q.http), change)
	if err != nil {
		q.fail(w, err)
		return
	}
	if *scheduled {
		q.server.actedAsScheduler(q.http.UserAgent())
	}
	q.server.writeStored(w, q.http, q.format, q.res, st, http.StatusOK)
}
