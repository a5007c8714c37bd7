// Package apply is server-side apply and the managed fields of objects, as
// kube-apiserver does them, with the library it uses
// (k8s.io/apimachinery/pkg/util/managedfields, over
// sigs.k8s.io/structured-merge-diff): every write of a client records the
// fields its manager set (metadata.managedFields), and an apply merges the
// fields a manager applies into the object, taking from other managers the
// fields it changes only when forced and refusing otherwise with the
// conflicts (409). The types of the built-in kinds come from the 1.37
// OpenAPI v3 documents the server serves (list types, map keys), read for
// a group version when one of its kinds is first written (a run writes
// few: parsing the whole spec at the first write was half of a short
// run's server start-up); a custom resource's from its definition's
// structural schema.
//
// It knows nothing of HTTP or of the store: package apiserver calls it on
// its way to the store.
package apply

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Target names what a write changes: a kind, and the subresource written
// ("" or "status").
type Target struct {
	GVK         schema.GroupVersionKind
	Subresource string
	// HasStatus: the kind has a status subresource, which the main
	// resource's writes do not change (its fields are reset).
	HasStatus bool
	// Custom, if set, is the OpenAPI schema of a custom resource version
	// (the root of its objects), and Revision names the definition's
	// generation it comes from.
	Custom   *spec.Schema
	Revision string
}

// Manager keeps the field managers of the served kinds. It is safe for
// concurrent use; its type information is built on first use.
type Manager struct {
	v3      V3Documents
	swagger []byte
	scheme  *runtime.Scheme

	typesMu sync.Mutex
	types   map[schema.GroupVersion]*groupTypes
	// legacy are the types of the Swagger 2.0 spec, for every group
	// version that has no v3 document.
	legacy groupTypes

	mu       sync.Mutex
	managers map[Target]*managedfields.FieldManager
}

// V3Documents returns the OpenAPI v3 document of a group version, or an
// error wrapping fs.ErrNotExist when it has none.
type V3Documents func(group, version string) ([]byte, error)

// groupTypes are the types of an OpenAPI document, read once.
type groupTypes struct {
	once      sync.Once
	converter managedfields.TypeConverter
	// meta are its types of object metadata, which a custom resource's
	// types take.
	meta map[string]*spec.Schema
	err  error
}

// metaPrefix names the types of object metadata.
const metaPrefix = "io.k8s.apimachinery.pkg.apis.meta.v1."

// load reads the types of an OpenAPI document (v3, or Swagger 2.0), once.
func (g *groupTypes) load(what string, read func() ([]byte, error)) (*groupTypes, error) {
	g.once.Do(func() {
		data, err := read()
		if err != nil {
			g.err = fmt.Errorf("apply: %w", err)
			return
		}
		var doc struct {
			Definitions map[string]*spec.Schema `json:"definitions"` // Swagger 2.0
			Components  struct {
				Schemas map[string]*spec.Schema `json:"schemas"` // OpenAPI v3
			} `json:"components"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			g.err = fmt.Errorf("apply: reading the OpenAPI document of %s: %w", what, err)
			return
		}
		models := doc.Components.Schemas
		if models == nil {
			models = doc.Definitions
		}
		if g.converter, err = managedfields.NewTypeConverter(models, false); err != nil {
			g.err = fmt.Errorf("apply: the types of %s: %w", what, err)
			return
		}
		g.meta = map[string]*spec.Schema{}
		for name, s := range models {
			if strings.HasPrefix(name, metaPrefix) {
				g.meta[name] = s
			}
		}
	})
	return g, g.err
}

// metaGroupVersion is the group version whose document gives a custom
// resource its object metadata's types: every document holds them, and a
// server with custom resources writes their definitions (this group's) in
// any case.
var metaGroupVersion = schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}

// New returns a Manager for the kinds of scheme. It reads their types from
// their group version's v3 document, or from swagger (the Swagger 2.0 spec)
// for the group versions served to old clients only, which have none.
func New(v3 V3Documents, swagger []byte, scheme *runtime.Scheme) *Manager {
	return &Manager{v3: v3, swagger: swagger, scheme: scheme,
		types: map[schema.GroupVersion]*groupTypes{}, managers: map[Target]*managedfields.FieldManager{}}
}

// typesOf returns the types of a group version, reading its document the
// first time (the Swagger spec's, once for all, if it has none).
func (m *Manager) typesOf(gv schema.GroupVersion) (*groupTypes, error) {
	m.typesMu.Lock()
	g := m.types[gv]
	if g == nil {
		g = &groupTypes{}
		m.types[gv] = g
	}
	m.typesMu.Unlock()
	g, err := g.load(gv.String(), func() ([]byte, error) { return m.v3(gv.Group, gv.Version) })
	if errors.Is(err, fs.ErrNotExist) {
		return m.legacy.load("the Swagger 2.0 spec", func() ([]byte, error) { return m.swagger, nil })
	}
	return g, err
}

// fieldManager returns the field manager of a target, built the first
// time outside the lock that every tracked write takes (reading a group
// version's types takes milliseconds).
func (m *Manager) fieldManager(t Target) (*managedfields.FieldManager, error) {
	key := t
	key.Custom = nil // the schema is named by Revision
	m.mu.Lock()
	fm, ok := m.managers[key]
	m.mu.Unlock()
	if ok {
		return fm, nil
	}
	fm, err := m.newFieldManager(t)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if first, ok := m.managers[key]; ok {
		return first, nil // built meanwhile by another write
	}
	m.managers[key] = fm
	return fm, nil
}

// newFieldManager builds the field manager of a target.
func (m *Manager) newFieldManager(t Target) (*managedfields.FieldManager, error) {
	reset := map[fieldpath.APIVersion]*fieldpath.Set{}
	version := fieldpath.APIVersion(t.GVK.GroupVersion().String())
	switch {
	case t.Subresource == "status":
		reset[version] = fieldpath.NewSet(fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("metadata"))
	case t.HasStatus:
		reset[version] = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	}
	filters := fieldpath.NewExcludeFilterSetMap(reset)
	var fm *managedfields.FieldManager
	var err error
	if t.Custom != nil {
		tc, terr := m.customConverter(t)
		if terr != nil {
			return nil, terr
		}
		fm, err = managedfields.NewDefaultCRDFieldManager(tc, identity{}, noDefaults{}, unstructuredCreater{}, t.GVK, t.GVK.GroupVersion(), t.Subresource, filters)
	} else {
		g, gerr := m.typesOf(t.GVK.GroupVersion())
		if gerr != nil {
			return nil, gerr
		}
		fm, err = managedfields.NewDefaultFieldManager(g.converter, identity{m.scheme}, m.scheme, m.scheme, t.GVK, t.GVK.GroupVersion(), t.Subresource, filters)
	}
	if err != nil {
		return nil, fmt.Errorf("apply: the field manager of %s: %w", t.GVK, err)
	}
	return fm, nil
}

// customConverter builds the types of a custom resource version: its
// schema, with the object metadata of the built-in types.
func (m *Manager) customConverter(t Target) (managedfields.TypeConverter, error) {
	root := *t.Custom
	root.Properties = map[string]spec.Schema{}
	for k, v := range t.Custom.Properties {
		root.Properties[k] = v
	}
	root.Properties["metadata"] = spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")}}
	root.Properties["apiVersion"] = *spec.StringProperty()
	root.Properties["kind"] = *spec.StringProperty()
	root.Type = spec.StringOrArray{"object"}
	root.Extensions = spec.Extensions{}
	for k, v := range t.Custom.Extensions {
		root.Extensions[k] = v
	}
	root.Extensions["x-kubernetes-group-version-kind"] = []any{map[string]any{
		"group": t.GVK.Group, "version": t.GVK.Version, "kind": t.GVK.Kind}}
	meta, err := m.typesOf(metaGroupVersion)
	if err != nil {
		return nil, err
	}
	models := maps.Clone(meta.meta)
	name := definitionName(t.GVK.Group, t.GVK.Version, t.GVK.Kind)
	models[name] = nameObjects(&root, name, models)
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("apply: the types of %s: %w", t.GVK, err)
	}
	return tc, nil
}

// Update records the fields a manager sets by writing obj over live (an
// empty object of the kind on create), and returns obj with its managed
// fields. As on the real server, a write is never refused for its managed
// fields: when they cannot be computed (an object its types do not
// describe, which validation then refuses), they are reset.
func (m *Manager) Update(t Target, live, obj runtime.Object, manager string) (runtime.Object, error) {
	fm, err := m.fieldManager(t)
	if err != nil {
		return nil, err
	}
	return fm.UpdateNoErrors(live, obj, manager), nil
}

// Apply merges the configuration a manager applies into live (an empty
// object of the kind when it does not exist yet), and returns the object
// to store; a conflict with the fields of other managers, when not
// forced, is a 409 naming them.
func (m *Manager) Apply(t Target, live, applied runtime.Object, manager string, force bool) (runtime.Object, error) {
	fm, err := m.fieldManager(t)
	if err != nil {
		return nil, err
	}
	return fm.Apply(live, applied, manager, force)
}

// identity is the object converter of kinds managed at the version they
// are written at: the field manager asks for the version it manages, which
// is the object's; identity gives it the object, its kind set (the scheme
// knows the kind of a typed object whose TypeMeta is empty, such as the
// empty objects the field manager makes).
type identity struct{ scheme *runtime.Scheme }

func (identity) Convert(in, out, context any) error {
	return fmt.Errorf("apply: no conversion from %T to %T", in, out)
}

func (c identity) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	kinds := []schema.GroupVersionKind{in.GetObjectKind().GroupVersionKind()}
	if kinds[0].Empty() && c.scheme != nil {
		if ks, _, err := c.scheme.ObjectKinds(in); err == nil {
			kinds = ks
		}
	}
	kind, ok := gv.KindForGroupVersionKinds(kinds)
	if !ok {
		return nil, fmt.Errorf("apply: %v is managed at its own version only", kinds)
	}
	if u, isU := in.(*unstructured.Unstructured); isU && c.scheme != nil && c.scheme.Recognizes(kind) {
		// The merged object of a built-in kind, back to its Go type.
		typed, err := c.scheme.New(kind)
		if err != nil {
			return nil, err
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return nil, fmt.Errorf("apply: %s: %w", kind, err)
		}
		in = typed
	}
	in.GetObjectKind().SetGroupVersionKind(kind)
	return in, nil
}

func (identity) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// noDefaults: a custom object is defaulted on its way into the store, not
// by the field manager.
type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// unstructuredCreater makes the empty objects of custom resources.
type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
