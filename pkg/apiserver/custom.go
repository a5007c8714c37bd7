package apiserver

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/crd"
	"github.com/batkube/batkube/pkg/endpoint"
	"github.com/batkube/batkube/pkg/registry"
	"github.com/batkube/batkube/pkg/store"
	"github.com/batkube/batkube/pkg/table"
)

// Custom resources: the resources of CustomResourceDefinitions, served as
// kube-apiserver's apiextensions server serves them. A definition is
// checked and given its status as it is written (package crd), and the
// resources of the established ones are served at once: their operations
// (customOps, routed here ahead of the generated router, which only knows
// the spec's paths), discovery (Options.OnCustomResources), and their
// objects, which are unstructured and pass through crd.Version on their
// way into the store. Deleting a definition deletes its objects, then the
// definition, after which its resources answer 404.

var crdsResource = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// crdCleanupFinalizer holds a definition until its objects are gone, as on
// the real server.
const crdCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// customSet is the custom resources served at one moment: immutable, swapped
// whole when a definition changes.
type customSet struct {
	byGVR map[schema.GroupVersionResource]*resource
	// groups are the group versions served, for routing.
	groups map[schema.GroupVersion]bool
	// terminating are the storages of definitions being deleted: read and
	// delete only.
	terminating map[schema.GroupResource]bool
}

// namespacedStorages returns the storages of the namespaced custom
// resources (their storage versions).
func (c *customSet) namespacedStorages() []*resource {
	var out []*resource
	for _, r := range c.byGVR {
		if r.namespaced && r.custom.Storage {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *resource) int { return strings.Compare(a.storage.String(), b.storage.String()) })
	return out
}

// customResources returns the custom resources served now.
func (s *Server) customResources() *customSet {
	if c := s.custom.Load(); c != nil {
		return c
	}
	return &customSet{}
}

// compiledDefinition is a definition's compiled versions, and what they
// were compiled from: at its generation, with its accepted names, the sum
// of its schemas (compiledKey).
type compiledDefinition struct {
	generation int64
	names      apiextensionsv1.CustomResourceDefinitionNames
	key        string
	versions   []*crd.Version
}

// compile compiles a definition's versions, or returns those compiled from
// the same schemas and names before: a definition changes far more often
// than its schemas (Kueue's certificate manager writes its conversion
// webhook's caBundle into five definitions, again and again at its start),
// and compiling a schema with CEL rules costs hundreds of milliseconds.
// Called under customMu.
func (s *Server) compile(def *apiextensionsv1.CustomResourceDefinition) ([]*crd.Version, error) {
	c, ok := s.compiled[def.UID]
	if ok && c.generation == def.Generation && equality.Semantic.DeepEqual(c.names, def.Status.AcceptedNames) {
		return c.versions, nil // unchanged: another definition was written
	}
	key, err := compiledKey(def)
	if err != nil {
		return nil, err
	}
	if !ok || c.key != key {
		if c.versions, err = crd.Compile(def); err != nil {
			return nil, err
		}
	}
	if s.compiled == nil {
		s.compiled = map[types.UID]compiledDefinition{}
	}
	s.compiled[def.UID] = compiledDefinition{generation: def.Generation, names: def.Status.AcceptedNames, key: key, versions: c.versions}
	return c.versions, nil
}

// compiledKey sums up what crd.Compile reads of a definition that matters
// to its versions: its spec but for its conversion, and its accepted names.
// (The generation the versions record may then be an earlier one of the
// same schemas.)
func compiledKey(def *apiextensionsv1.CustomResourceDefinition) (string, error) {
	spec := def.Spec
	spec.Conversion = nil
	data, err := json.Marshal(struct {
		Spec  apiextensionsv1.CustomResourceDefinitionSpec
		Names apiextensionsv1.CustomResourceDefinitionNames
	}{spec, def.Status.AcceptedNames})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return string(sum[:]), nil
}

// definitionsChanged serves the resources of the definitions stored now,
// cleans up those being deleted, and tells discovery. It runs after every
// write to a definition, one at a time.
func (s *Server) definitionsChanged(ctx context.Context) error {
	s.customMu.Lock()
	defer s.customMu.Unlock()
	list, err := s.store.List(crdsResource.GroupResource(), store.ListOptions{})
	if err != nil {
		return err
	}
	set := &customSet{byGVR: map[schema.GroupVersionResource]*resource{}, groups: map[schema.GroupVersion]bool{},
		terminating: map[schema.GroupResource]bool{}}
	var ops []endpoint.Operation
	var facts []CustomResourceFacts
	listed := map[types.UID]bool{}
	for _, st := range list.Items {
		def, ok := st.Object().(*apiextensionsv1.CustomResourceDefinition)
		if !ok || !crd.Established(def) {
			continue
		}
		listed[def.UID] = true
		versions, err := s.compile(def)
		if err != nil {
			s.log.Warn("a custom resource definition cannot be served", "crd", def.Name, "err", err)
			continue
		}
		gr := schema.GroupResource{Group: def.Spec.Group, Resource: def.Status.AcceptedNames.Plural}
		if def.DeletionTimestamp != nil {
			gone, err := s.cleanUpDefinition(ctx, def, gr)
			if err != nil {
				return err
			}
			if gone {
				continue
			}
			set.terminating[gr] = true
		}
		for _, v := range versions {
			r, err := s.customResource(v, gr)
			if err != nil {
				s.log.Warn("a custom resource definition cannot be served", "crd", def.Name, "err", err)
				continue
			}
			set.byGVR[v.GVR] = r
			set.groups[v.GVR.GroupVersion()] = true
			ops = append(ops, customOps(v)...)
			facts = append(facts, CustomResourceFacts{GVR: v.GVR, Kind: v.Kind, Singular: v.Singular, Namespaced: v.Namespaced,
				ShortNames: v.ShortNames, Categories: v.Categories, Storage: v.Storage})
		}
	}
	maps.DeleteFunc(s.compiled, func(uid types.UID, _ compiledDefinition) bool { return !listed[uid] }) // deleted definitions
	s.custom.Store(set)
	if s.opts.OnCustomResources != nil {
		s.opts.OnCustomResources(ops, facts)
	}
	return nil
}

// StoreFields is the store's field function (store.FieldsFunc): the
// selectable fields of custom objects, registry.StoreFields for the
// built-in ones. Give it to the store before the server exists through a
// closure: objects stored before then are built-in.
func (s *Server) StoreFields(gr schema.GroupResource, obj k8sruntime.Object, add func(name, value string)) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || s == nil {
		registry.StoreFields(gr, obj, add)
		return
	}
	for _, r := range s.customResources().byGVR {
		if r.storage == gr && r.custom.Storage {
			r.custom.FieldValues(u.Object, add)
			return
		}
	}
}

// CustomResourceFacts describe a served custom resource version, for
// discovery.
type CustomResourceFacts struct {
	GVR                    schema.GroupVersionResource
	Kind, Singular         string
	Namespaced, Storage    bool
	ShortNames, Categories []string
}

// customResource is the REST layer's view of a custom resource version.
func (s *Server) customResource(v *crd.Version, gr schema.GroupResource) (*resource, error) {
	p, err := table.ForColumns(v.Columns)
	if err != nil {
		return nil, err
	}
	r := &resource{gvr: v.GVR, gvk: v.GVK(), listGVK: v.GVR.GroupVersion().WithKind(v.ListKind),
		namespaced: v.Namespaced, subresources: map[string]bool{}, storage: gr,
		storageGVK: schema.GroupVersionKind{Group: v.GVR.Group, Version: v.StorageVersion, Kind: v.Kind},
		scheme:     s.scheme, custom: v, printer: &p}
	if v.Status {
		r.subresources["status"] = true
	}
	if v.Scale != nil {
		r.subresources["scale"] = true
	}
	version := ""
	if r.gvk != r.storageGVK {
		version = ":" + r.gvk.String()
	}
	// A definition that changes gets new encodings: its objects' memoised
	// ones may no longer be what it serves.
	r.memo.json = fmt.Sprintf("json:%s:%d%s", v.UID, v.Generation, version)
	r.memo.proto = r.memo.json + ":proto"
	return r, nil
}

// customOps are the operations of a custom resource version.
func customOps(v *crd.Version) []endpoint.Operation {
	base := endpoint.Operation{Group: v.GVR.Group, Version: v.GVR.Version, Resource: v.GVR.Resource, Kind: v.Kind,
		Namespaced: v.Namespaced}
	var ops []endpoint.Operation
	for _, verb := range []endpoint.Verb{endpoint.Get, endpoint.List, endpoint.Watch, endpoint.Create, endpoint.Update, endpoint.Patch,
		endpoint.Delete, endpoint.DeleteCollection} {
		op := base
		op.Verb = verb
		ops = append(ops, op)
	}
	for sub, kind := range map[string]string{"status": v.Kind, "scale": "Scale"} {
		if (sub == "status" && !v.Status) || (sub == "scale" && v.Scale == nil) {
			continue
		}
		for _, verb := range []endpoint.Verb{endpoint.Get, endpoint.Update, endpoint.Patch} {
			op := base
			op.Verb, op.Subresource, op.Kind = verb, sub, kind
			ops = append(ops, op)
		}
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Subresource < ops[j].Subresource })
	return ops
}

// cleanUpDefinition deletes the objects of a definition being deleted, and
// the definition once they are gone (their own finalizers may hold them);
// gone tells whether the definition is.
func (s *Server) cleanUpDefinition(ctx context.Context, def *apiextensionsv1.CustomResourceDefinition, gr schema.GroupResource) (gone bool, err error) {
	objs, err := s.store.List(gr, store.ListOptions{})
	if err != nil {
		return false, err
	}
	left := 0
	for _, st := range objs.Items {
		o := st.Object()
		if len(o.GetFinalizers()) > 0 {
			left++
			if o.GetDeletionTimestamp() == nil {
				if _, err := s.store.Update(ctx, gr, o.GetNamespace(), o.GetName(), func(cur store.Object) (store.Object, error) {
					ts := s.stamp(0)
					cur.SetDeletionTimestamp(&ts)
					return cur, nil
				}); err != nil && !apierrors.IsNotFound(err) {
					return false, err
				}
			}
			continue
		}
		if _, err := s.store.Delete(ctx, gr, o.GetNamespace(), o.GetName(), nil); err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
	}
	if left > 0 {
		return false, nil
	}
	cur, err := s.store.Update(ctx, crdsResource.GroupResource(), "", def.Name, func(cur store.Object) (store.Object, error) {
		cur.SetFinalizers(slices.DeleteFunc(cur.GetFinalizers(), func(f string) bool { return f == crdCleanupFinalizer }))
		return cur, nil
	})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if len(cur.Object().GetFinalizers()) > 0 {
		return false, nil // another finalizer holds it
	}
	if _, err := s.store.Delete(ctx, crdsResource.GroupResource(), "", def.Name, nil); err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	return true, nil
}

// admitDefinition checks and completes a definition before it is stored
// (old: the stored one, on update): its defaults, status and generation,
// its validation, its names accepted unless another definition holds
// them, and the finalizer that cleans up its objects.
func (s *Server) admitDefinition(ctx context.Context, def, old *apiextensionsv1.CustomResourceDefinition, status bool) error {
	if status {
		return nil // a status update keeps what the server wrote
	}
	crd.PrepareDefinition(def, old)
	errs, err := crd.ValidateDefinition(ctx, def, old)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(def.GroupVersionKind().GroupKind(), def.Name, errs)
	}
	list, err := s.store.List(crdsResource.GroupResource(), store.ListOptions{})
	if err != nil {
		return err
	}
	taken := map[string]bool{}
	for _, st := range list.Items {
		other, ok := st.Object().(*apiextensionsv1.CustomResourceDefinition)
		if !ok || other.Name == def.Name || other.Spec.Group != def.Spec.Group {
			continue
		}
		n := other.Status.AcceptedNames
		for _, name := range slices.Concat([]string{n.Plural, n.Singular, n.Kind, n.ListKind}, n.ShortNames) {
			taken[name] = true
		}
	}
	crd.Accept(def, func(name string) bool { return taken[name] }, metav1.NewTime(s.clock.Now()))
	if old == nil && !slices.Contains(def.Finalizers, crdCleanupFinalizer) {
		def.Finalizers = append(def.Finalizers, crdCleanupFinalizer)
	}
	return nil
}

// admitCustom prepares and checks a custom object before it is stored: cur
// is the stored one on update (nil on create), sub the subresource
// written ("" or "status"). It returns the object to store.
func admitCustom(ctx context.Context, r *resource, obj, cur store.Object, sub string) (store.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%T is not a custom object", obj))
	}
	v := r.custom
	var old map[string]any
	if cur != nil {
		old = cur.(*unstructured.Unstructured).Object
	}
	switch {
	case cur == nil:
		v.PrepareCreate(u.Object)
	case sub == "status":
		u.Object = v.PrepareStatusUpdate(u.Object, old)
	default:
		v.PrepareUpdate(u.Object, old)
	}
	normalize := v.Normalize
	if sub == "status" && cur != nil {
		normalize = v.NormalizeStatus
	}
	if err := normalize(u.Object); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	errs := v.Validate(ctx, u.Object, old, sub == "status")
	if name := u.GetName(); cur == nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, msg))
		}
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(r.gvk.GroupKind(), u.GetName(), errs)
	}
	return u, nil
}

// serveCustom serves a request for a custom resource, ahead of the
// generated router; it reports false when the path is not one.
func (s *Server) serveCustom(w http.ResponseWriter, r *http.Request) bool {
	set := s.customResources()
	if len(set.groups) == 0 || !strings.HasPrefix(r.URL.Path, "/apis/") {
		return false
	}
	parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/apis/"), "/"), "/")
	if len(parts) < 3 || !set.groups[schema.GroupVersion{Group: parts[0], Version: parts[1]}] {
		return false
	}
	op := endpoint.Operation{Method: r.Method, Group: parts[0], Version: parts[1]}
	args := endpoint.Args{Request: r}
	rest := parts[2:]
	if len(rest) >= 3 && rest[0] == "namespaces" {
		op.Namespaced, args.Namespace, rest = true, rest[1], rest[2:]
	}
	op.Resource = rest[0]
	res, ok := set.byGVR[schema.GroupVersionResource{Group: op.Group, Version: op.Version, Resource: op.Resource}]
	if !ok || res.namespaced != op.Namespaced && !(res.namespaced && len(rest) == 1 && r.Method == http.MethodGet) {
		s.writeError(w, r, apierrors.NewNotFound(schema.GroupResource{Group: op.Group, Resource: op.Resource}, ""))
		return true
	}
	op.Kind = res.gvk.Kind
	collection := len(rest) == 1
	switch {
	case collection:
	case len(rest) == 2:
		args.Name = rest[1]
	case len(rest) == 3 && res.subresources[rest[2]]:
		args.Name, op.Subresource = rest[1], rest[2]
	default:
		s.writeError(w, r, apierrors.NewNotFound(res.gvr.GroupResource(), ""))
		return true
	}
	switch {
	case r.Method == http.MethodGet && collection:
		op.Verb = endpoint.List
	case r.Method == http.MethodGet:
		op.Verb = endpoint.Get
	case r.Method == http.MethodPost && collection:
		op.Verb = endpoint.Create
	case r.Method == http.MethodPut && !collection:
		op.Verb = endpoint.Update
	case r.Method == http.MethodPatch && !collection:
		op.Verb = endpoint.Patch
	case r.Method == http.MethodDelete && collection:
		op.Verb = endpoint.DeleteCollection
	case r.Method == http.MethodDelete:
		op.Verb = endpoint.Delete
	default:
		s.writeError(w, r, apierrors.NewMethodNotSupported(res.gvr.GroupResource(), r.Method))
		return true
	}
	if set.terminating[res.storage] && op.Verb == endpoint.Create {
		s.writeError(w, r, apierrors.NewMethodNotSupported(res.gvr.GroupResource(), "create (its CustomResourceDefinition is being deleted)"))
		return true
	}
	if err := s.readCustomBody(r, res, &op, &args); err != nil {
		s.writeError(w, r, err)
		return true
	}
	s.Serve(&op, args).WriteResponse(w, nil)
	return true
}

// readCustomBody decodes the body of a create or update into an
// unstructured object (JSON or YAML), or keeps a patch's raw body.
func (s *Server) readCustomBody(r *http.Request, res *resource, op *endpoint.Operation, args *endpoint.Args) error {
	if op.Verb != endpoint.Create && op.Verb != endpoint.Update && op.Verb != endpoint.Patch && op.Verb != endpoint.Delete {
		return nil
	}
	data, err := readBody(r.Body)
	if err == io.EOF {
		if op.Verb == endpoint.Delete {
			return nil
		}
		return apierrors.NewBadRequest("the request body is required")
	}
	if err != nil {
		return apierrors.NewRequestEntityTooLargeError(err.Error())
	}
	if op.Verb == endpoint.Patch {
		args.Patch = data
		return nil
	}
	if op.Verb == endpoint.Delete {
		opts := &metav1.DeleteOptions{}
		if err := decodeJSON(data, opts); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		args.Body = opts
		return nil
	}
	if op.Subresource == "scale" {
		args.Patch = data // the Scale, which scale decodes
		return nil
	}
	if isMediaType(r.Header.Get("Content-Type"), mediaYAML) {
		if data, err = yaml.YAMLToJSON(data); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	// As the real server's decoder: unknown fields pruned, defaults set,
	// before the managed fields are computed.
	if err := res.custom.Normalize(u.Object); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	args.Body = u
	return nil
}

// scale serves the scale subresource of a custom resource: an
// autoscaling/v1 Scale read from and written to the paths its definition
// names (GET, PUT, and PATCH of the Scale).
func (q *request) scale(ctx context.Context, w http.ResponseWriter) {
	sc := q.res.custom.Scale
	specPath := strings.Split(strings.TrimPrefix(sc.SpecReplicasPath, "."), ".")
	scaleOf := func(st *store.Stored) (*autoscalingv1.Scale, error) {
		u, ok := st.Object().(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("%T is not a custom object", st.Object())
		}
		out := &autoscalingv1.Scale{TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
			ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
				ResourceVersion: u.GetResourceVersion(), CreationTimestamp: u.GetCreationTimestamp()}}
		if n, ok, _ := unstructured.NestedInt64(u.Object, specPath...); ok {
			out.Spec.Replicas = int32(n)
		}
		if sc.StatusReplicasPath != "" {
			if n, ok, _ := unstructured.NestedInt64(u.Object, strings.Split(strings.TrimPrefix(sc.StatusReplicasPath, "."), ".")...); ok {
				out.Status.Replicas = int32(n)
			}
		}
		if sc.LabelSelectorPath != nil {
			if sel, ok, _ := unstructured.NestedString(u.Object, strings.Split(strings.TrimPrefix(*sc.LabelSelectorPath, "."), ".")...); ok {
				out.Status.Selector = sel
			}
		}
		return out, nil
	}
	write := func(st *store.Stored) {
		out, err := scaleOf(st)
		if err != nil {
			q.fail(w, apierrors.NewInternalError(err))
			return
		}
		q.server.writeObject(w, q.format, out, http.StatusOK, autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	}
	cur, err := q.server.store.Get(q.res.storage, q.args.Namespace, q.args.Name)
	if err != nil {
		q.fail(w, q.notFoundAs(err))
		return
	}
	if q.op.Verb == endpoint.Get {
		write(cur)
		return
	}
	want, err := scaleOf(cur)
	if err != nil {
		q.fail(w, apierrors.NewInternalError(err))
		return
	}
	data := q.args.Patch // the body: a Scale, or a patch of one
	switch q.op.Verb {
	case endpoint.Update:
		want = &autoscalingv1.Scale{}
		if err := decodeJSON(data, want); err != nil {
			q.fail(w, apierrors.NewBadRequest(err.Error()))
			return
		}
	case endpoint.Patch:
		doc, err := json.Marshal(want)
		if err != nil {
			q.fail(w, apierrors.NewInternalError(err))
			return
		}
		kind, _ := patchKind(q.http.Header.Get("Content-Type"))
		if kind == mediaApplyPatchYAML { // applied as a merge of the configuration
			if data, err = yaml.YAMLToJSON(data); err != nil {
				q.fail(w, apierrors.NewBadRequest(err.Error()))
				return
			}
			kind = mediaMergePatch
		}
		patched, err := q.patchDocument(kind, doc, data, &autoscalingv1.Scale{})
		if err != nil {
			q.fail(w, err)
			return
		}
		want = &autoscalingv1.Scale{}
		if err := decodeJSON(patched, want); err != nil {
			q.fail(w, apierrors.NewBadRequest(err.Error()))
			return
		}
	}
	if want.Spec.Replicas < 0 {
		q.fail(w, apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), q.args.Name,
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), want.Spec.Replicas, "must be greater than or equal to 0")}))
		return
	}
	st, err := q.server.update(ctx, q.res, q.args.Namespace, q.args.Name, "", dryRun(q.http), func(cur store.Object) (store.Object, error) {
		if rv := want.ResourceVersion; rv != "" && rv != cur.GetResourceVersion() {
			return nil, apierrors.NewConflict(q.res.gvr.GroupResource(), q.args.Name,
				errors.New("the object has been modified; please apply your changes to the latest version and try again"))
		}
		u := cur.DeepCopyObject().(*unstructured.Unstructured)
		if err := unstructured.SetNestedField(u.Object, int64(want.Spec.Replicas), specPath...); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		u.SetResourceVersion("")
		return u, nil
	})
	if err != nil {
		q.fail(w, err)
		return
	}
	write(st)
}
