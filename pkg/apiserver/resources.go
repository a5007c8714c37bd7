package apiserver

import (
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/batkube/batkube/pkg/crd"
	"github.com/batkube/batkube/pkg/endpoint"
	"github.com/batkube/batkube/pkg/store"
	"github.com/batkube/batkube/pkg/table"
)

// resource is what the REST layer knows of one served group/version/resource.
type resource struct {
	gvr schema.GroupVersionResource
	gvk schema.GroupVersionKind // kind served at this version
	// protoPrefix starts the protobuf envelope of every object served as gvk.
	protoPrefix []byte
	listGVK     schema.GroupVersionKind
	namespaced  bool
	// subresources served for this resource ("status", "binding", ...).
	subresources map[string]bool
	// storage is the key of the objects in the store, shared by every
	// version of a resource; storageGVK the type they are stored as.
	storage    schema.GroupResource
	storageGVK schema.GroupVersionKind
	// review answers a create of a review resource, which is never stored
	// (nil for the stored resources).
	review reviewer
	scheme *runtime.Scheme
	// memo names this version's encodings in the stored objects' memo.
	memo struct{ json, proto string }
	// custom is the version of a custom resource (nil for the built-in
	// resources): its objects are unstructured, printed by printer.
	custom  *crd.Version
	printer *table.Printer
}

func (r *resource) hasStatus() bool { return r.subresources["status"] }

// newObject returns an empty object of the served kind.
func (r *resource) newObject() (store.Object, error) {
	if r.custom != nil {
		return newUnstructured(r.gvk), nil
	}
	return newTyped(r.scheme, r.gvk)
}

// newStored returns an empty object of the storage kind.
func (r *resource) newStored() (store.Object, error) {
	if r.custom != nil {
		return newUnstructured(r.storageGVK), nil
	}
	return newTyped(r.scheme, r.storageGVK)
}

func newUnstructured(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u
}

func newTyped(s *runtime.Scheme, gvk schema.GroupVersionKind) (store.Object, error) {
	o, err := s.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("no Go type for %s: %w", gvk, err)
	}
	obj, ok := o.(store.Object)
	if !ok {
		return nil, fmt.Errorf("%s (%T) has no object metadata", gvk, o)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, nil
}

// storageAliases maps resources that real Kubernetes serves from one storage
// under two groups.
var storageAliases = map[schema.GroupResource]schema.GroupResource{
	{Group: "events.k8s.io", Resource: "events"}: {Group: "", Resource: "events"},
}

// catalog indexes the served resources.
type catalog struct {
	byGVR map[schema.GroupVersionResource]*resource
}

// newCatalog builds the catalogue from the operations of the spec, keeping the
// resources whose kind has a Go type in the scheme.
func newCatalog(ops []endpoint.Operation, s *runtime.Scheme) (*catalog, error) {
	c := &catalog{byGVR: make(map[schema.GroupVersionResource]*resource)}
	// Main resources first: their kind is the kind of the get/list/create operations.
	for i := range ops {
		op := &ops[i]
		if op.Verb == endpoint.NonResource || op.Resource == "" || op.Subresource != "" || op.Kind == "" {
			continue
		}
		gvr := schema.GroupVersionResource{Group: op.Group, Version: op.Version, Resource: op.Resource}
		r, ok := c.byGVR[gvr]
		if !ok {
			gvk := schema.GroupVersionKind{Group: op.Group, Version: op.Version, Kind: op.Kind}
			if !s.Recognizes(gvk) {
				continue
			}
			listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
			r = &resource{gvr: gvr, gvk: gvk, protoPrefix: protoPrefix(gvk), listGVK: listGVK, subresources: map[string]bool{}, review: reviewerFor(gvk.GroupKind()), scheme: s}
			c.byGVR[gvr] = r
		}
		if op.Namespaced {
			r.namespaced = true
		}
	}
	for i := range ops {
		op := &ops[i]
		if op.Subresource == "" || op.Resource == "" {
			continue
		}
		gvr := schema.GroupVersionResource{Group: op.Group, Version: op.Version, Resource: op.Resource}
		if r, ok := c.byGVR[gvr]; ok {
			r.subresources[op.Subresource] = true
		}
	}
	// One storage version per group resource: the preferred (newest stable) one.
	versions := map[schema.GroupResource][]*resource{}
	for _, r := range c.byGVR {
		gr := r.gvr.GroupResource()
		if alias, ok := storageAliases[gr]; ok {
			gr = alias
		}
		r.storage = gr
		versions[gr] = append(versions[gr], r)
	}
	for gr, rs := range versions {
		sort.Slice(rs, func(i, j int) bool { return preferred(rs[i], rs[j], gr) })
		for _, r := range rs {
			r.storageGVK = rs[0].gvk
			version := ""
			if r.gvk != r.storageGVK {
				version = ":" + r.gvk.String()
			}
			r.memo.json, r.memo.proto = "json"+version, "proto"+version
		}
	}
	return c, nil
}

// preferred orders the versions of a storage: its own group first, then the
// newest stable version.
func preferred(a, b *resource, storage schema.GroupResource) bool {
	aHome, bHome := a.gvr.Group == storage.Group, b.gvr.Group == storage.Group
	if aHome != bHome {
		return aHome
	}
	return version.CompareKubeAwareVersionStrings(a.gvr.Version, b.gvr.Version) > 0
}

// byKind returns the stored resource that serves a kind at a version, or nil.
func (c *catalog) byKind(gvk schema.GroupVersionKind) *resource {
	for _, r := range c.byGVR {
		if r.gvk == gvk && r.review == nil {
			return r
		}
	}
	return nil
}

// byKind returns the built-in or custom resource that serves a kind at a
// version, or nil.
func (s *Server) byKind(gvk schema.GroupVersionKind) *resource {
	if r := s.catalog.byKind(gvk); r != nil {
		return r
	}
	for _, r := range s.customResources().byGVR {
		if r.gvk == gvk {
			return r
		}
	}
	return nil
}

// resource returns the built-in or custom resource served at gvr.
func (s *Server) resource(gvr schema.GroupVersionResource) (*resource, bool) {
	if r, ok := s.catalog.byGVR[gvr]; ok {
		return r, true
	}
	r, ok := s.customResources().byGVR[gvr]
	return r, ok
}

// namespacedStorages returns the storages of every namespaced resource.
func (c *catalog) namespacedStorages() []*resource {
	seen := map[schema.GroupResource]bool{}
	var out []*resource
	for _, r := range c.byGVR {
		if r.namespaced && r.review == nil && !seen[r.storage] && r.gvk == r.storageGVK {
			seen[r.storage] = true
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *resource) int {
		return compareStrings(a.storage.String(), b.storage.String())
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
