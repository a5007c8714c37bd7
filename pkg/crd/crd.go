// Package crd says what a CustomResourceDefinition (apiextensions.k8s.io/v1)
// means for the API server, as kube-apiserver's apiextensions server does it:
// the resources it serves (Compile: one per served version, with its names,
// scope, subresources, printer columns and selectable fields), the checks
// of the definition itself (ValidateDefinition, with the apiextensions
// library the real server uses), its status once accepted (Accept:
// acceptedNames, NamesAccepted and Established), and what becomes of a
// custom object on its way into storage (Version.Admit: pruning of unknown
// fields, defaults, validation against the structural schema and its CEL
// rules, with the libraries of k8s.io/apiextensions-apiserver; status and
// generation kept as the real strategy keeps them).
//
// It knows nothing of HTTP or of the store: package apiserver serves what
// it describes.
package crd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// celCostBudget is the CEL cost budget of one object's validation, the real
// server's (k8s.io/apiserver/pkg/apis/cel.RuntimeCELCostBudget).
const celCostBudget = 10_000_000

// celPerCallLimit bounds one CEL expression's evaluation, as the real
// server (k8s.io/apiserver/pkg/apis/cel.PerCallLimit).
const celPerCallLimit = 1_000_000

// Version is one served version of a custom resource.
type Version struct {
	// GVR and Kind name it; ListKind names its lists.
	GVR      schema.GroupVersionResource
	Kind     string
	ListKind string
	Singular string
	// ShortNames and Categories are the definition's names.
	ShortNames, Categories []string
	Namespaced             bool
	// Storage is the version objects are stored at (one per definition).
	Storage bool
	// StorageVersion is the definition's storage version's name.
	StorageVersion string
	// Status and Scale are the subresources served (Scale nil: none).
	Status bool
	Scale  *apiextensionsv1.CustomResourceSubresourceScale
	// Columns are the printer columns of kubectl get (never empty: Age
	// when the definition gives none, as the real server).
	Columns []apiextensionsv1.CustomResourceColumnDefinition
	// SelectableFields are the field selectors the version serves beyond
	// metadata.name and metadata.namespace ("spec.color").
	SelectableFields []string
	// UID is the definition's, and Generation its generation: a version
	// changes when its definition does.
	UID        string
	Generation int64

	structural *structuralschema.Structural
	// metaSchema is what objectmeta.Validate walks: structural when an
	// embedded resource stands below the root, otherwise an empty schema,
	// whose walk checks the root's metadata alone, as the whole schema's
	// would (it stops only at embedded resources) without visiting every
	// field of the object.
	metaSchema *structuralschema.Structural
	// tree is structural as ratcheting walks it (newSchemaTree).
	tree      *schemaTree
	validator validation.SchemaValidator
	// statusValidator validates the status alone, for the status
	// subresource (nil without a status schema).
	statusValidator validation.SchemaValidator
	rules           *cel.Validator
	// root runs rules' root rules ahead of it (nil: rules alone).
	root *rootRules

	openAPIOnce sync.Once
	openAPI     *spec.Schema
}

// OpenAPI returns the version's schema as OpenAPI (nil without one), for
// server-side apply's types. It is made once: every tracked write of a
// custom resource asks for it, and making it allocates as much as the
// schema is large (a Kueue Workload's, with its pod templates: 1.1 GB over
// a 50-Job run when made at each write). Callers must not modify it.
func (v *Version) OpenAPI() *spec.Schema {
	v.openAPIOnce.Do(func() {
		if v.structural != nil {
			v.openAPI = v.structural.ToKubeOpenAPI()
		}
	})
	return v.openAPI
}

// GVK returns the kind served at this version.
func (v *Version) GVK() schema.GroupVersionKind { return v.GVR.GroupVersion().WithKind(v.Kind) }

// Compile returns the served versions of a definition, which must be valid
// (ValidateDefinition) and accepted (its names in status.acceptedNames).
func Compile(crd *apiextensionsv1.CustomResourceDefinition) ([]*Version, error) {
	names := crd.Status.AcceptedNames
	if names.Plural == "" {
		names = crd.Spec.Names
	}
	storage := ""
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			storage = v.Name
		}
	}
	var out []*Version
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		sv := &Version{
			GVR:        schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: names.Plural},
			Kind:       names.Kind,
			ListKind:   cmpOr(names.ListKind, names.Kind+"List"),
			Singular:   cmpOr(names.Singular, strings.ToLower(names.Kind)),
			ShortNames: slices.Clone(names.ShortNames), Categories: slices.Clone(names.Categories),
			Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
			Storage:    v.Storage, StorageVersion: storage,
			UID: string(crd.UID), Generation: crd.Generation,
			Columns: slices.Clone(v.AdditionalPrinterColumns),
		}
		if len(sv.Columns) == 0 {
			sv.Columns = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}
		}
		if s := v.Subresources; s != nil {
			sv.Status = s.Status != nil
			sv.Scale = s.Scale
		}
		for _, f := range v.SelectableFields {
			sv.SelectableFields = append(sv.SelectableFields, strings.TrimPrefix(f.JSONPath, "."))
		}
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			if err := sv.compileSchema(v.Schema.OpenAPIV3Schema); err != nil {
				return nil, fmt.Errorf("crd: %s version %s: %w", crd.Name, v.Name, err)
			}
		}
		out = append(out, sv)
	}
	return out, nil
}

// compileSchema builds the structural schema, the schema validator and the
// CEL rules of a version.
func (v *Version) compileSchema(props *apiextensionsv1.JSONSchemaProps) error {
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, &internal, nil); err != nil {
		return fmt.Errorf("converting the schema: %w", err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return fmt.Errorf("the schema is not structural: %w", err)
	}
	validator, _, err := validation.NewSchemaValidator(&internal)
	if err != nil {
		return fmt.Errorf("the schema: %w", err)
	}
	v.structural, v.tree, v.validator = s, newSchemaTree(s), validator
	v.metaSchema = s
	if !embedsResource(s) {
		v.metaSchema = &structuralschema.Structural{}
	}
	if status, ok := internal.Properties["status"]; ok && v.Status {
		if v.statusValidator, _, err = validation.NewSchemaValidator(&status); err != nil {
			return fmt.Errorf("the status schema: %w", err)
		}
	}
	v.rules = cel.NewValidator(s, true, celPerCallLimit)
	v.root = newRootRules(s, v.tree, v.rules, celPerCallLimit)
	return nil
}

// embedsResource reports whether an embedded resource
// (x-kubernetes-embedded-resource) stands anywhere below s: in its
// properties, additional properties or items, at any depth.
func embedsResource(s *structuralschema.Structural) bool {
	for _, prop := range s.Properties {
		if isOrEmbedsResource(&prop) {
			return true
		}
	}
	if s.AdditionalProperties != nil && isOrEmbedsResource(s.AdditionalProperties.Structural) {
		return true
	}
	return isOrEmbedsResource(s.Items)
}

func isOrEmbedsResource(s *structuralschema.Structural) bool {
	return s != nil && (s.XEmbeddedResource || embedsResource(s))
}

// PrepareDefinition does to a definition what the real server does before
// it validates it: its defaults (listKind, singular...), and its status
// on create (none but its storage version among the stored versions) or
// update (old's, with its storage version added); its generation moves on
// with its spec.
func PrepareDefinition(crd, old *apiextensionsv1.CustomResourceDefinition) {
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	if old == nil {
		crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
		crd.Generation = 1
	} else {
		crd.Status = *old.Status.DeepCopy()
		crd.Generation = old.Generation
		if !equality.Semantic.DeepEqual(crd.Spec, old.Spec) {
			crd.Generation++
		}
	}
	for _, v := range crd.Spec.Versions {
		if v.Storage && !slices.Contains(crd.Status.StoredVersions, v.Name) {
			crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
			break
		}
	}
}

// ValidateDefinition checks a definition as the real server does before it
// stores it (update: against old), once prepared (PrepareDefinition).
func ValidateDefinition(ctx context.Context, crd, old *apiextensionsv1.CustomResourceDefinition) (field.ErrorList, error) {
	in, err := internal(crd)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return crdvalidation.ValidateCustomResourceDefinition(ctx, in), nil
	}
	oldIn, err := internal(old)
	if err != nil {
		return nil, err
	}
	return crdvalidation.ValidateCustomResourceDefinitionUpdate(ctx, in, oldIn), nil
}

func internal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	out := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, out, nil); err != nil {
		return nil, fmt.Errorf("crd: converting %s: %w", crd.Name, err)
	}
	return out, nil
}

// Accept writes the status the real server's controllers give a valid
// definition at once: its names accepted (unless another definition of the
// group holds one of them: conflict names the other definitions' accepted
// plural, singular, short names and kinds), NamesAccepted and Established,
// and its storage version among the stored versions. now stamps the
// conditions that change.
func Accept(crd *apiextensionsv1.CustomResourceDefinition, taken func(name string) bool, now metav1.Time) {
	st := &crd.Status
	names := crd.Spec.Names
	var conflict string
	for _, n := range slices.Concat([]string{names.Plural, names.Singular, names.Kind, names.ListKind}, names.ShortNames) {
		if n != "" && taken(n) {
			conflict = n
			break
		}
	}
	if conflict == "" {
		st.AcceptedNames = names
		if st.AcceptedNames.ListKind == "" {
			st.AcceptedNames.ListKind = names.Kind + "List"
		}
		if st.AcceptedNames.Singular == "" {
			st.AcceptedNames.Singular = strings.ToLower(names.Kind)
		}
		setCondition(st, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted,
			Status: apiextensionsv1.ConditionTrue, Reason: "NoConflicts", Message: "no conflicts found"}, now)
		setCondition(st, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established,
			Status: apiextensionsv1.ConditionTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"}, now)
	} else {
		setCondition(st, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted,
			Status: apiextensionsv1.ConditionFalse, Reason: "NameConflict", Message: fmt.Sprintf("%q is already in use", conflict)}, now)
		if !isEstablished(st) {
			setCondition(st, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established,
				Status: apiextensionsv1.ConditionFalse, Reason: "NotAccepted", Message: "not all names are accepted"}, now)
		}
	}
	for _, v := range crd.Spec.Versions {
		if v.Storage && !slices.Contains(st.StoredVersions, v.Name) {
			st.StoredVersions = append(st.StoredVersions, v.Name)
		}
	}
}

// Established reports whether a definition's resources are served.
func Established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return isEstablished(&crd.Status)
}

func isEstablished(st *apiextensionsv1.CustomResourceDefinitionStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// setCondition sets a condition, keeping its transition time when its
// status does not change.
func setCondition(st *apiextensionsv1.CustomResourceDefinitionStatus, c apiextensionsv1.CustomResourceDefinitionCondition, now metav1.Time) {
	for i := range st.Conditions {
		if st.Conditions[i].Type != c.Type {
			continue
		}
		if st.Conditions[i].Status == c.Status {
			c.LastTransitionTime = st.Conditions[i].LastTransitionTime
		} else {
			c.LastTransitionTime = now
		}
		st.Conditions[i] = c
		return
	}
	c.LastTransitionTime = now
	st.Conditions = append(st.Conditions, c)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
