package apply

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smd "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/yaml"
	yamlv2 "sigs.k8s.io/yaml/goyaml.v2"
)

// A custom schema with objects at every place one can be: in an object,
// in a list (of each list type), as a map's values; atomic, nullable,
// defaulted; under a subtree that preserves unknown fields; an embedded
// resource.
const nestedSchema = `
type: object
properties:
  spec:
    type: object
    properties:
      template:
        type: object
        x-kubernetes-embedded-resource: true
        properties:
          metadata: {type: object}
          spec:
            type: object
            properties:
              containers:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    resources:
                      type: object
                      properties:
                        requests:
                          type: object
                          additionalProperties:
                            x-kubernetes-int-or-string: true
      selector:
        type: object
        x-kubernetes-map-type: atomic
        nullable: true
        properties:
          matchLabels:
            type: object
            additionalProperties: {type: string}
      limits:
        type: object
        default: {cpu: 1}
        properties:
          cpu: {type: integer}
      byName:
        type: object
        additionalProperties:
          type: object
          properties:
            weight: {type: integer}
            owner:
              type: object
              properties:
                name: {type: string}
      tags:
        type: array
        x-kubernetes-list-type: set
        items: {type: string}
      steps:
        type: array
        x-kubernetes-list-type: atomic
        items:
          type: object
          properties:
            run: {type: string}
      free:
        type: object
        x-kubernetes-preserve-unknown-fields: true
        properties:
          inner:
            type: object
            properties:
              depth: {type: integer}
  status:
    type: object
    properties:
      conditions:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [type]
        items:
          type: object
          properties:
            type: {type: string}
            status: {type: string}
`

// Naming a schema's objects changes none of the types structured-merge-
// diff merges and compares with: with every named type of theirs put back
// where it is referred to, the two schemas are the same.
func TestNamedObjectsAreTheSameTypes(t *testing.T) {
	root := &spec.Schema{}
	if err := yaml.Unmarshal([]byte(nestedSchema), root); err != nil {
		t.Fatal(err)
	}
	const name = "example.batkube.io.v1.Nested"
	inline, err := schemaconv.ToSchemaFromOpenAPI(map[string]*spec.Schema{name: root}, false)
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]*spec.Schema{}
	models[name] = nameObjects(root, name, models)
	named, err := schemaconv.ToSchemaFromOpenAPI(models, false)
	if err != nil {
		t.Fatal(err)
	}
	// template, its spec, a container, its resources, selector, limits, a
	// byName value and its owner, a step, status and a condition; free's
	// inner stays inline.
	if len(models) != 13 {
		t.Errorf("%d types, want the kind's, spec's and 11 objects': %v", len(models), slices.Sorted(maps.Keys(models)))
	}
	want := printed(t, inline, name, name)
	got := printed(t, named, name, name)
	if got != want {
		t.Errorf("the named types, put back inline:\n%s\nthe schema's:\n%s", got, want)
	}
	if strings.Count(got, "elementRelationship: atomic") != 3 || !strings.Contains(got, "nullable: true") || !strings.Contains(got, "default:") {
		t.Errorf("the schema lost its atomic map or list, its nullable or its default:\n%s", got)
	}
	if limits := root.Properties["spec"].Properties["limits"]; limits.Ref.String() != "" {
		t.Error("nameObjects modified the schema it was given")
	}
}

// printed is the type name of s as YAML, each type named under prefix
// put where it is referred to, and the fields of each map sorted.
func printed(t *testing.T, s *smd.Schema, name, prefix string) string {
	t.Helper()
	typ, ok := s.FindNamedType(name)
	if !ok {
		t.Fatalf("no type %s", name)
	}
	data, err := yamlv2.Marshal(inlined(t, s, typ.Atom, prefix))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func inlined(t *testing.T, s *smd.Schema, a smd.Atom, prefix string) smd.Atom {
	ref := func(tr smd.TypeRef) smd.TypeRef {
		if tr.NamedType != nil && strings.HasPrefix(*tr.NamedType, prefix+".") {
			typ, ok := s.FindNamedType(*tr.NamedType)
			if !ok {
				t.Fatalf("no type %s", *tr.NamedType)
			}
			tr.NamedType, tr.Inlined = nil, typ.Atom
		}
		tr.Inlined = inlined(t, s, tr.Inlined, prefix)
		return tr
	}
	out := smd.Atom{Scalar: a.Scalar}
	if a.List != nil {
		out.List = &smd.List{ElementType: ref(a.List.ElementType), ElementRelationship: a.List.ElementRelationship, Keys: a.List.Keys}
	}
	if a.Map != nil {
		out.Map = &smd.Map{ElementType: ref(a.Map.ElementType), ElementRelationship: a.Map.ElementRelationship, Unions: a.Map.Unions}
		for _, f := range a.Map.Fields {
			f.Type = ref(f.Type)
			out.Map.Fields = append(out.Map.Fields, f)
		}
		slices.SortFunc(out.Map.Fields, func(x, y smd.StructField) int { return cmp.Compare(x.Name, y.Name) })
	}
	return out
}
