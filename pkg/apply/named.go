package apply

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// A custom resource's schema is one tree: every object in it is inlined in
// its parent. structured-merge-diff compares the schemas of the two
// values at each node it compares (schema.Atom.Equals under
// TypedValue.Compare), and for an inlined object that compares its whole
// subtree: 15 % of the handler's time over a Kueue Workload's create and
// three status applies (BenchmarkServeKueueWorkload). Named types
// compare by name. nameObjects gives each object of the schema that has
// properties a type of its own, referred to where it was: the same types
// (TestNamedObjectsAreTheSameTypes), each compared at the cost of a name.

// nameObjects returns root with each of its objects that has properties
// (but root itself) moved into models under a name prefix.N, and referred
// to. Subtrees that preserve unknown fields are left inline (their
// descendants inherit it, which a named type would not). root is not
// modified.
func nameObjects(root *spec.Schema, prefix string, models map[string]*spec.Schema) *spec.Schema {
	n := namer{prefix: prefix, models: models}
	out := n.children(*root)
	return &out
}

type namer struct {
	prefix string
	models map[string]*spec.Schema
	next   int
}

// children names the objects below s (a copy), returning it.
func (n *namer) children(s spec.Schema) spec.Schema {
	if preservesUnknownFields(&s) {
		return s
	}
	if len(s.Properties) > 0 {
		props := make(map[string]spec.Schema, len(s.Properties))
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			props[name] = n.ref(s.Properties[name])
		}
		s.Properties = props
	}
	if s.Items != nil && s.Items.Schema != nil {
		item := n.ref(*s.Items.Schema)
		s.Items = &spec.SchemaOrArray{Schema: &item}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		value := n.ref(*s.AdditionalProperties.Schema)
		s.AdditionalProperties = &spec.SchemaOrBool{Allows: s.AdditionalProperties.Allows, Schema: &value}
	}
	return s
}

// ref returns what stands for s where it was: a reference to a named copy
// of it if it is an object with properties, s itself (its children
// named) otherwise.
func (n *namer) ref(s spec.Schema) spec.Schema {
	if preservesUnknownFields(&s) || s.Ref.String() != "" || !slices.Equal(s.Type, spec.StringOrArray{"object"}) || len(s.Properties) == 0 {
		return n.children(s)
	}
	named := n.children(s)
	n.next++
	name := fmt.Sprintf("%s.%d", n.prefix, n.next)
	n.models[name] = &named
	// Where it was, a reference keeps what the converter reads there
	// (schemaconv's makeOpenAPIRef and parseObject): its nullability and
	// default; its map type is the named type's own.
	return spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/definitions/" + name), Nullable: s.Nullable,
		Default: s.Default}}
}

func preservesUnknownFields(s *spec.Schema) bool {
	p, ok := s.Extensions["x-kubernetes-preserve-unknown-fields"]
	return ok && p == true
}

// definitionName is the prefix of a custom kind's named types: its model's
// name, which names no built-in type.
func definitionName(group, version, kind string) string {
	return strings.Join([]string{group, version, kind}, ".")
}
