package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/batkube/batkube/pkg/endpoint"
	"github.com/batkube/batkube/pkg/metrics"
	"github.com/batkube/batkube/pkg/registry"
	"github.com/batkube/batkube/pkg/store"
)

// request is one resource operation being served.
type request struct {
	server *Server
	op     *endpoint.Operation
	res    *resource
	args   endpoint.Args
	http   *http.Request
	format format
	// metrics is the request's instrumentation (nil: none).
	metrics *metrics.Request
}

func (q *request) serve(w http.ResponseWriter) {
	s := q.server
	f, ok := negotiateFor(originalAccept(q.http), q.res.custom == nil)
	if !ok {
		s.writeError(w, q.http, apierrors.NewGenericServerResponse(http.StatusNotAcceptable, q.http.Method, q.res.gvr.GroupResource(), "",
			"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf", 0, false))
		return
	}
	q.format = f
	ctx := q.http.Context()
	if q.res.review != nil {
		if q.op.Verb != endpoint.Create || q.op.Subresource != "" {
			s.writeError(w, q.http, apierrors.NewMethodNotSupported(q.res.gvr.GroupResource(), string(q.op.Verb)))
			return
		}
		q.review(w)
		return
	}
	if err := checkDryRun(q.op.Verb, q.http.URL.Query()["dryRun"]); err != nil {
		q.fail(w, err)
		return
	}
	if q.res.custom != nil && q.op.Subresource == "scale" {
		q.scale(ctx, w)
		return
	}
	switch q.op.Verb {
	case endpoint.Get:
		q.get(w)
	case endpoint.List:
		q.list(w)
	case endpoint.Watch, endpoint.WatchList:
		q.watchDeprecated(w)
	case endpoint.Create:
		q.createOp(ctx, w)
	case endpoint.Update:
		q.update(ctx, w)
	case endpoint.Patch:
		q.patch(ctx, w)
	case endpoint.Delete:
		q.delete(ctx, w)
	case endpoint.DeleteCollection:
		q.deleteCollection(ctx, w)
	default:
		s.writeError(w, q.http, apierrors.NewMethodNotSupported(q.res.gvr.GroupResource(), string(q.op.Verb)))
	}
}

func (q *request) fail(w http.ResponseWriter, err error) {
	q.server.writeError(w, q.http, err)
}

// get serves GET of one object (or of its status subresource).
func (q *request) get(w http.ResponseWriter) {
	if q.op.Subresource != "" && q.op.Subresource != "status" {
		q.fail(w, apierrors.NewMethodNotSupported(q.res.gvr.GroupResource(), "get "+q.op.Subresource))
		return
	}
	st, err := q.server.store.Get(q.res.storage, q.args.Namespace, q.args.Name)
	if err != nil {
		q.fail(w, q.notFoundAs(err))
		return
	}
	q.server.writeStored(w, q.http, q.format, q.res, st, http.StatusOK)
}

// notFoundAs names the served resource in a store error (the store knows the
// storage resource, which differs for aliased resources).
func (q *request) notFoundAs(err error) error {
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(q.res.gvr.GroupResource(), q.args.Name)
	}
	return err
}

// listOptions decodes the query of a list or watch request, and the
// objects it selects.
func (q *request) listOptions() (*metav1.ListOptions, store.Selection, error) {
	var opts metav1.ListOptions
	if err := q.server.params.DecodeParameters(q.http.URL.Query(), corev1.SchemeGroupVersion, &opts); err != nil {
		return nil, store.Selection{}, apierrors.NewBadRequest(err.Error())
	}
	ls, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, store.Selection{}, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	fs, err := fields.ParseSelector(opts.FieldSelector)
	if err != nil {
		return nil, store.Selection{}, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	if !fs.Empty() { // most lists and watches select no field
		supported := registry.SupportedFields(q.res.storageGVK.Kind)
		if q.res.custom != nil {
			supported = append(registry.SupportedFields(""), q.res.custom.SelectableFields...)
		}
		if err := registry.CheckFields(supported, fs); err != nil {
			return nil, store.Selection{}, apierrors.NewBadRequest(err.Error())
		}
	}
	if q.op.Verb == endpoint.Watch && q.args.Name != "" {
		fs = fields.AndSelectors(fs, fields.OneTermEqualSelector("metadata.name", q.args.Name))
	}
	return &opts, store.Selection{Namespace: q.args.Namespace, Label: ls, Field: fs}, nil
}

// list serves a collection GET: a list, or a watch with ?watch=true.
func (q *request) list(w http.ResponseWriter) {
	opts, sel, err := q.listOptions()
	if err != nil {
		q.fail(w, err)
		return
	}
	if opts.Watch {
		q.watch(w, opts, sel)
		return
	}
	lo := store.ListOptions{Selection: sel, Limit: opts.Limit, Continue: opts.Continue}
	if err := applyListRV(&lo, opts, q.server.store.CurrentRV()); err != nil {
		q.fail(w, err)
		return
	}
	res, err := q.server.store.List(q.res.storage, lo)
	if err != nil {
		q.fail(w, err)
		return
	}
	lm := metav1.ListMeta{ResourceVersion: strconv.FormatUint(res.RV, 10), Continue: res.Continue, RemainingItemCount: res.RemainingItemCount}
	q.server.writeList(w, q.http, q.format, q.res, res.Items, lm)
}

// applyListRV maps the resourceVersion semantics of a list request onto the store.
func applyListRV(lo *store.ListOptions, opts *metav1.ListOptions, current uint64) error {
	match := opts.ResourceVersionMatch
	if opts.Continue != "" {
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		if match != "" {
			return apierrors.NewBadRequest("resourceVersionMatch is forbidden when continue is provided")
		}
		return nil
	}
	if opts.ResourceVersion == "" {
		if match != "" {
			return apierrors.NewBadRequest("resourceVersionMatch is forbidden unless resourceVersion is provided")
		}
		return nil
	}
	rv, err := strconv.ParseUint(opts.ResourceVersion, 10, 64)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", opts.ResourceVersion))
	}
	switch match {
	case metav1.ResourceVersionMatchExact:
		if rv == 0 {
			return apierrors.NewBadRequest("resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"0\"")
		}
		lo.ResourceVersion, lo.Exact = rv, true
	case metav1.ResourceVersionMatchNotOlderThan, "":
		if rv > current {
			return apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", rv, current), 1)
		}
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("unsupported resourceVersionMatch %q", match))
	}
	return nil
}

// body returns the request body as an object of the served kind, in the
// request's namespace; if it is not, it answers the error and returns
// false.
func (q *request) body(w http.ResponseWriter) (store.Object, bool) {
	obj, err := q.decodedBody(q.res.gvk.Kind)
	if err == nil {
		err = q.checkNamespace(obj)
	}
	if err != nil {
		q.fail(w, err)
		return nil, false
	}
	return obj, true
}

// decodedBody returns the request body as an object of the served kind.
func (q *request) decodedBody(want string) (store.Object, error) {
	if q.args.Body == nil {
		return nil, apierrors.NewBadRequest("the request body is required")
	}
	obj, ok := q.args.Body.(store.Object)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%T is not an object", q.args.Body))
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind != "" && gvk.Kind != want {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", gvk.Kind, want))
	}
	if av := obj.GetObjectKind().GroupVersionKind().GroupVersion(); gvk.Kind != "" && av != q.res.gvk.GroupVersion() && q.op.Subresource == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", av, q.res.gvk.GroupVersion()))
	}
	return obj, nil
}

// checkNamespace reconciles the namespace of the body with the URL's.
func (q *request) checkNamespace(obj store.Object) error {
	if !q.res.namespaced {
		obj.SetNamespace("")
		return nil
	}
	switch ns := obj.GetNamespace(); {
	case ns == "":
		obj.SetNamespace(q.args.Namespace)
	case ns != q.args.Namespace:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// dryRunOptions names the options of each writing verb, as the real
// server names them in its errors.
var dryRunOptions = map[endpoint.Verb]string{
	endpoint.Create: "CreateOptions", endpoint.Update: "UpdateOptions", endpoint.Patch: "PatchOptions",
	endpoint.Delete: "DeleteOptions", endpoint.DeleteCollection: "DeleteOptions",
}

// checkDryRun refuses a dryRun other than All (422), as the real server
// does: a misspelt dry run must not write.
func checkDryRun(verb endpoint.Verb, values []string) error {
	kind, writes := dryRunOptions[verb]
	if !writes {
		return nil
	}
	for _, v := range values {
		if v != metav1.DryRunAll {
			return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "",
				field.ErrorList{field.NotSupported(field.NewPath("dryRun"), values, []string{metav1.DryRunAll})})
		}
	}
	return nil
}

// dryRun tells whether the request asks for a dry run (checkDryRun has
// refused any other value than All).
func dryRun(r *http.Request) bool {
	for _, v := range r.URL.Query()["dryRun"] {
		if v == metav1.DryRunAll {
			return true
		}
	}
	return false
}

// createOp serves POST on a collection or a create subresource.
func (q *request) createOp(ctx context.Context, w http.ResponseWriter) {
	switch q.op.Subresource {
	case "":
	case "binding":
		q.bindingSubresource(ctx, w)
		return
	case "eviction":
		q.eviction(ctx, w)
		return
	default:
		q.fail(w, apierrors.NewMethodNotSupported(q.res.gvr.GroupResource(), "create "+q.op.Subresource))
		return
	}
	obj, ok := q.body(w)
	if !ok {
		return
	}
	if a := q.server.opts.Admitter; a != nil {
		if err := a.AdmitCreate(q.res.gvr, obj); err != nil {
			q.fail(w, err)
			return
		}
	}
	if b, ok := obj.(*corev1.Binding); ok && q.res.gvr.Resource == "bindings" {
		q.bind(ctx, w, b)
		return
	}
	obj, err := q.track(nil, obj)
	if err != nil {
		q.fail(w, err)
		return
	}
	q.createAndWrite(ctx, w, obj)
}

// createAndWrite stores obj, new, and answers 201 with what was stored.
func (q *request) createAndWrite(ctx context.Context, w http.ResponseWriter, obj store.Object) {
	st, err := q.server.create(ctx, q.res, obj, dryRun(q.http))
	if err != nil {
		q.fail(w, err)
		return
	}
	q.server.writeStored(w, q.http, q.format, q.res, st, http.StatusCreated)
}

// create stores a new object sent to r: name generation, server-set
// metadata, defaults, validation, and conversion to the storage version.
// Reviews are never stored.
func (s *Server) create(ctx context.Context, r *resource, obj store.Object, dry bool) (*store.Stored, error) {
	if r.review != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s are reviews, answered and never stored", r.gvr.GroupResource()))
	}
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(obj.GetGenerateName() + s.randomSuffix())
	}
	if r.namespaced {
		if obj.GetNamespace() == "" {
			return nil, apierrors.NewBadRequest("the namespace of the object is required")
		}
		if _, err := s.store.Get(namespacesResource.GroupResource(), "", obj.GetNamespace()); err != nil {
			return nil, apierrors.NewNotFound(namespacesResource.GroupResource(), obj.GetNamespace())
		}
	}
	now := s.stamp(0)
	obj.SetUID(types.UID(uuid.NewUUID()))
	obj.SetCreationTimestamp(now)
	obj.SetResourceVersion("")
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	obj.SetSelfLink("")
	if obj.GetGeneration() == 0 {
		obj.SetGeneration(1)
	}
	if err := s.prepareCreate(ctx, obj); err != nil {
		return nil, err
	}
	var err error
	if r.custom != nil {
		if obj, err = s.mutate(ctx, r, admissionv1.Create, "", obj, nil, dry); err != nil {
			return nil, err
		}
		if obj, err = admitCustom(ctx, r, obj, nil, ""); err != nil {
			return nil, err
		}
	} else {
		registry.ApplyDefaults(obj)
		if obj, err = s.mutate(ctx, r, admissionv1.Create, "", obj, nil, dry); err != nil {
			return nil, err
		}
		if def, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
			if err := s.admitDefinition(ctx, def, nil, false); err != nil {
				return nil, err
			}
		}
		if errs := registry.ValidateCreate(obj); len(errs) > 0 {
			return nil, apierrors.NewInvalid(r.gvk.GroupKind(), obj.GetName(), errs)
		}
	}
	if err := s.validateAdmission(ctx, r, admissionv1.Create, "", obj, nil, dry); err != nil {
		return nil, err
	}
	stored, err := s.toStorage(r, obj)
	if err != nil {
		return nil, err
	}
	if dry {
		if _, err := s.store.Get(r.storage, stored.GetNamespace(), stored.GetName()); err == nil {
			return nil, apierrors.NewAlreadyExists(r.gvr.GroupResource(), obj.GetName())
		}
		return store.NewStored(stored), nil
	}
	st, err := s.store.Create(ctx, r.storage, stored)
	if r.storage == eventsStorage && apierrors.IsAlreadyExists(err) {
		st, err = s.createEventAtNextFreeInstant(ctx, stored)
	}
	if err != nil {
		return nil, q2served(r, err, obj.GetName())
	}
	s.eventWritten(ctx, r)
	if err := s.written(ctx, r); err != nil {
		return nil, err
	}
	return st, nil
}

// written follows a write to r: the webhook configurations change the
// webhooks called, the definitions of custom resources what is served,
// and the objects of a definition being deleted may have been the last
// that held it.
func (s *Server) written(ctx context.Context, r *resource) error {
	if r.storage == mutatingConfigs || r.storage == validatingConfigs {
		if err := s.webhookConfigsChanged(); err != nil {
			return apierrors.NewInternalError(fmt.Errorf("listing the admission webhooks: %w", err))
		}
		return nil
	}
	if r.storage != crdsResource.GroupResource() && (r.custom == nil || !s.customResources().terminating[r.storage]) {
		return nil
	}
	if err := s.definitionsChanged(ctx); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("serving the custom resources: %w", err))
	}
	return nil
}

// eventWritten times the expiry of the event writes made so far (a create,
// update or patch of an event has just ended) and expires those due.
func (s *Server) eventWritten(ctx context.Context, r *resource) {
	if r.storage == eventsStorage && s.events != nil {
		s.events.expire(ctx, s.store, s.clock)
	}
}

// q2served names the served resource in an error about a stored object.
func q2served(r *resource, err error, name string) error {
	switch {
	case apierrors.IsAlreadyExists(err):
		return apierrors.NewAlreadyExists(r.gvr.GroupResource(), name)
	case apierrors.IsNotFound(err):
		return apierrors.NewNotFound(r.gvr.GroupResource(), name)
	}
	return err
}

// toStorage converts an object of the served version to the storage version.
func (s *Server) toStorage(r *resource, obj store.Object) (store.Object, error) {
	obj.GetObjectKind().SetGroupVersionKind(r.gvk)
	out, err := s.convert(obj, r.storageGVK)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	out.GetObjectKind().SetGroupVersionKind(r.storageGVK)
	return out, nil
}

// prepareCreate applies the per-kind rules of creation that need the server:
// a new pod starts Pending with its priority resolved; a pod group gets its
// priority resolved too.
func (s *Server) prepareCreate(_ context.Context, obj k8sruntime.Object) error {
	switch o := obj.(type) {
	case *corev1.Pod:
		o.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: registry.PodQOSClass(&o.Spec)}
		return s.resolvePriority(o)
	case *schedulingv1beta1.PodGroup:
		return s.resolvePodGroupPriority(podGroupsResource, o.Name, &o.Spec.PriorityClassName, &o.Spec.Priority)
	case *schedulingv1alpha3.PodGroup:
		return s.resolvePodGroupPriority(podGroupsResource, o.Name, &o.Spec.PriorityClassName, &o.Spec.Priority)
	}
	return nil
}

// podGroupsResource names pod groups in errors.
var podGroupsResource = schedulingv1beta1.SchemeGroupVersion.WithResource("podgroups").GroupResource()
