package main

import (
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

func TestGoType(t *testing.T) {
	tests := []struct {
		def, pkg, alias, typ string
	}{
		{"io.k8s.api.core.v1.Pod", "k8s.io/api/core/v1", "corev1", "Pod"},
		{"io.k8s.api.resource.v1beta2.ResourceClaim", "k8s.io/api/resource/v1beta2", "resourcev1beta2", "ResourceClaim"},
		{"io.k8s.api.policy.v1beta1.PodDisruptionBudget", "k8s.io/api/policy/v1beta1", "policyv1beta1", "PodDisruptionBudget"},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "k8s.io/apimachinery/pkg/apis/meta/v1", "metav1", "ObjectMeta"},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.Patch", "github.com/batkube/batkube/pkg/endpoint", "endpoint", "PatchBody"},
		{"io.k8s.apimachinery.pkg.api.resource.Quantity", "k8s.io/apimachinery/pkg/api/resource", "apiresource", "Quantity"},
		{"io.k8s.apimachinery.pkg.util.intstr.IntOrString", "k8s.io/apimachinery/pkg/util/intstr", "intstr", "IntOrString"},
		{"io.k8s.apimachinery.pkg.runtime.RawExtension", "k8s.io/apimachinery/pkg/runtime", "k8sruntime", "RawExtension"},
		{"io.k8s.apimachinery.pkg.version.Info", "k8s.io/apimachinery/pkg/version", "apimachineryversion", "Info"},
		{"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition", "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "apiextensionsv1", "CustomResourceDefinition"},
		{"io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService", "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1", "apiregistrationv1", "APIService"},
	}
	for _, tt := range tests {
		t.Run(tt.def, func(t *testing.T) {
			pkg, alias, typ, err := goType(tt.def)
			if err != nil {
				t.Fatal(err)
			}
			if pkg != tt.pkg || alias != tt.alias || typ != tt.typ {
				t.Errorf("got %s %s.%s, want %s %s.%s", pkg, alias, typ, tt.pkg, tt.alias, tt.typ)
			}
		})
	}
	if _, _, _, err := goType("io.example.v1.Widget"); err == nil {
		t.Error("got no error for an unknown definition, want one")
	}
}

// TestCommittedSpecAliases checks that every definition of swagger.json is
// mapped onto a Go type and that one import alias always names one package.
func TestCommittedSpecAliases(t *testing.T) {
	spec, err := readSpec(filepath.Join("..", "..", "swagger.json"))
	if err != nil {
		t.Fatal(err)
	}
	pkgOf := map[string]string{}
	for name, d := range spec["definitions"].(object) {
		xgo, ok := d.(object)["x-go-type"].(object)
		if !ok {
			t.Errorf("definition %s: got no x-go-type, want one", name)
			continue
		}
		imp := xgo["import"].(object)
		alias, pkg := imp["alias"].(string), imp["package"].(string)
		if alias == "runtime" {
			t.Errorf("definition %s: got alias runtime, which the generated code already imports", name)
		}
		if prev, ok := pkgOf[alias]; ok && prev != pkg {
			t.Errorf("alias %s: got packages %s and %s, want one", alias, prev, pkg)
		}
		pkgOf[alias] = pkg
	}
	if got := spec["schemes"]; !reflect.DeepEqual(got, []any{"http"}) {
		t.Errorf("schemes: got %v, want [http]", got)
	}
}

func TestMergeLegacy(t *testing.T) {
	cur := object{
		"paths": object{"/apis/policy/v1/poddisruptionbudgets": object{}},
		"definitions": object{
			"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": object{},
		},
		"parameters": object{},
	}
	pdb := object{"get": object{"parameters": []any{object{"$ref": "#/parameters/limit"}},
		"responses": object{"200": object{"schema": object{"$ref": "#/definitions/io.k8s.api.policy.v1beta1.PodDisruptionBudgetList"}}}}}
	leg := object{
		"paths": object{
			"/apis/policy/v1beta1/poddisruptionbudgets":    pdb,
			"/apis/policy/v1beta1/podsecuritypolicies":     object{"get": object{}},
			"/apis/policy/v1beta1/":                        object{"get": object{}},
			"/apis/policy/v1/poddisruptionbudgets":         object{"get": object{"legacy": true}},
			"/apis/events.k8s.io/v1beta1/events":           object{"get": object{}},
			"/apis/extensions/v1beta1/podsecuritypolicies": object{"get": object{}},
		},
		"definitions": object{
			"io.k8s.api.policy.v1beta1.PodDisruptionBudgetList": object{"properties": object{
				"items":    object{"items": object{"$ref": "#/definitions/io.k8s.api.policy.v1beta1.PodDisruptionBudget"}},
				"metadata": object{"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
			}},
			"io.k8s.api.policy.v1beta1.PodDisruptionBudget":   object{},
			"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": object{"legacy": true},
			"io.k8s.api.policy.v1beta1.PodSecurityPolicy":     object{},
			"io.k8s.api.extensions.v1beta1.PodSecurityPolicy": object{},
		},
		"parameters": object{"limit": object{"in": "query", "name": "limit"}},
	}
	if err := mergeLegacy(cur, leg); err != nil {
		t.Fatal(err)
	}
	keys := func(o any) []string {
		var ks []string
		for k := range o.(object) {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	wantPaths := []string{"/apis/events.k8s.io/v1beta1/events", "/apis/policy/v1/poddisruptionbudgets", "/apis/policy/v1beta1/", "/apis/policy/v1beta1/poddisruptionbudgets"}
	if got := keys(cur["paths"]); !reflect.DeepEqual(got, wantPaths) {
		t.Errorf("paths: got %v, want %v", got, wantPaths)
	}
	wantDefs := []string{"io.k8s.api.policy.v1beta1.PodDisruptionBudget", "io.k8s.api.policy.v1beta1.PodDisruptionBudgetList", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
	if got := keys(cur["definitions"]); !reflect.DeepEqual(got, wantDefs) {
		t.Errorf("definitions: got %v, want %v", got, wantDefs)
	}
	if got := keys(cur["parameters"]); !reflect.DeepEqual(got, []string{"limit"}) {
		t.Errorf("parameters: got %v, want [limit]", got)
	}
	if _, legacy := cur["paths"].(object)["/apis/policy/v1/poddisruptionbudgets"].(object)["get"]; legacy {
		t.Error("a current path was overwritten by the legacy spec")
	}
	if _, legacy := cur["definitions"].(object)["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].(object)["legacy"]; legacy {
		t.Error("a current definition was overwritten by the legacy spec")
	}
}

func TestMergeLegacyMissingDefinition(t *testing.T) {
	cur := object{"paths": object{}, "definitions": object{}}
	leg := object{
		"paths":       object{"/apis/events.k8s.io/v1beta1/events": object{"get": object{"$ref": "#/definitions/missing"}}},
		"definitions": object{},
	}
	if err := mergeLegacy(cur, leg); err == nil {
		t.Error("got no error for a reference to a missing definition, want one")
	}
}

func TestFixMediaTypes(t *testing.T) {
	spec := object{"paths": object{"/api/v1/pods": object{
		"parameters": []any{},
		"post":       object{"consumes": []any{"*/*"}},
		"patch":      object{"consumes": []any{"application/json-patch+json", "application/apply-patch+cbor"}},
	}}}
	fixMediaTypes(spec)
	item := spec["paths"].(object)["/api/v1/pods"].(object)
	if got := item["post"].(object)["consumes"]; !reflect.DeepEqual(got, bodyTypes) {
		t.Errorf("post consumes: got %v, want %v", got, bodyTypes)
	}
	if got := item["patch"].(object)["consumes"]; !reflect.DeepEqual(got, patchTypes) {
		t.Errorf("patch consumes: got %v, want %v", got, patchTypes)
	}
	if got := item["post"].(object)["produces"]; !reflect.DeepEqual(got, responseTypes) {
		t.Errorf("post produces: got %v, want %v", got, responseTypes)
	}
	if _, ok := item["parameters"].([]any); !ok {
		t.Errorf("parameters: got %T, want them untouched", item["parameters"])
	}
}

func TestDropShadowedQueryParams(t *testing.T) {
	pathParam := object{"in": "path", "name": "path"}
	spec := object{
		"parameters": object{"proxyPath": object{"in": "query", "name": "path"}},
		"paths": object{
			"/api/v1/nodes/{name}/proxy/{path}": object{
				"parameters": []any{pathParam, object{"$ref": "#/parameters/proxyPath"}},
				"get":        object{"parameters": []any{object{"in": "query", "name": "path"}, object{"in": "query", "name": "x"}}},
			},
			"/api/v1/nodes/{name}/proxy": object{
				"parameters": []any{object{"$ref": "#/parameters/proxyPath"}},
			},
		},
	}
	dropShadowedQueryParams(spec)
	paths := spec["paths"].(object)
	withPath := paths["/api/v1/nodes/{name}/proxy/{path}"].(object)
	if got := withPath["parameters"]; !reflect.DeepEqual(got, []any{pathParam}) {
		t.Errorf("path item parameters: got %v, want only the path one", got)
	}
	if got := withPath["get"].(object)["parameters"].([]any); len(got) != 1 || got[0].(object)["name"] != "x" {
		t.Errorf("operation parameters: got %v, want only x", got)
	}
	if got := paths["/api/v1/nodes/{name}/proxy"].(object)["parameters"].([]any); len(got) != 1 {
		t.Errorf("a path without {path}: got %v, want its query parameter kept", got)
	}
}
