package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// The Kubernetes releases the spec comes from. The current one defines the
// API; the legacy one adds the group versions older clients (kube-scheduler
// 1.18) still use and that k8s.io/api still has Go types for.
const (
	currentModule = "k8s.io/kubernetes@v1.37.1"
	legacyModule  = "k8s.io/kubernetes@v1.18.19"
	specVersion   = "v1.37.1"
)

// legacyGroupVersions are taken from the legacy spec.
var legacyGroupVersions = []string{"/apis/policy/v1beta1/", "/apis/events.k8s.io/v1beta1/"}

// legacyExcluded are legacy paths whose types no longer exist in k8s.io/api.
var legacyExcluded = []string{"podsecuritypolicies"}

// Media types of request bodies and responses, replacing the spec's "*/*"
// and dropping CBOR, which Batkube does not speak.
var (
	bodyTypes     = []any{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	patchTypes    = []any{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"}
	responseTypes = []any{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
)

type object = map[string]any

func runSpec(args []string) error {
	fs := flag.NewFlagSet("spec", flag.ContinueOnError)
	out := fs.String("out", "swagger.json", "where to write the spec")
	v3 := fs.String("v3", "pkg/openapi/v3", "where to copy the OpenAPI v3 documents")
	if err := fs.Parse(args); err != nil {
		return err
	}
	curDir, err := moduleDir(currentModule)
	if err != nil {
		return err
	}
	legDir, err := moduleDir(legacyModule)
	if err != nil {
		return err
	}
	cur, err := readSpec(filepath.Join(curDir, "api/openapi-spec/swagger.json"))
	if err != nil {
		return err
	}
	leg, err := readSpec(filepath.Join(legDir, "api/openapi-spec/swagger.json"))
	if err != nil {
		return err
	}
	if err := mergeLegacy(cur, leg); err != nil {
		return err
	}
	if err := mapDefinitions(cur); err != nil {
		return err
	}
	fixMediaTypes(cur)
	dropShadowedQueryParams(cur)
	delete(cur, "security")
	delete(cur, "securityDefinitions")
	cur["schemes"] = []any{"http"}
	cur["info"] = object{"title": "Kubernetes", "version": specVersion}
	if err := writeJSON(*out, cur); err != nil {
		return err
	}
	return copyV3(filepath.Join(curDir, "api/openapi-spec/v3"), *v3)
}

// moduleDir downloads a module through the Go module proxy and returns its directory.
func moduleDir(mod string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("downloading %s: %w", mod, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("downloading %s: %w", mod, err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("downloading %s: %s", mod, info.Error)
	}
	return info.Dir, nil
}

func readSpec(path string) (object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var spec object
	if err := dec.Decode(&spec); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return spec, nil
}

// mergeLegacy adds the legacy group versions' paths, and the definitions and
// parameters they reference, to the current spec.
func mergeLegacy(cur, leg object) error {
	curPaths, legPaths := cur["paths"].(object), leg["paths"].(object)
	var refs []string
	for path, item := range legPaths {
		if !hasAnyPrefix(path, legacyGroupVersions) && !hasAnyPrefix(path+"/", legacyGroupVersions) {
			continue
		}
		if containsAny(path, legacyExcluded) {
			continue
		}
		if _, exists := curPaths[path]; exists {
			continue
		}
		curPaths[path] = item
		refs = append(refs, collectRefs(item)...)
	}
	curDefs, legDefs := cur["definitions"].(object), leg["definitions"].(object)
	curParams, _ := cur["parameters"].(object)
	legParams, _ := leg["parameters"].(object)
	sections := []struct {
		prefix   string
		cur, leg object
	}{{"#/definitions/", curDefs, legDefs}, {"#/parameters/", curParams, legParams}}
	for len(refs) > 0 {
		ref := refs[0]
		refs = refs[1:]
		for _, sec := range sections {
			name, ok := strings.CutPrefix(ref, sec.prefix)
			if !ok {
				continue
			}
			if _, ok := sec.cur[name]; ok {
				break
			}
			v, ok := sec.leg[name]
			if !ok {
				return fmt.Errorf("legacy spec: %s is not defined", ref)
			}
			sec.cur[name] = v
			refs = append(refs, collectRefs(v)...)
		}
	}
	return nil
}

func collectRefs(v any) []string {
	var out []string
	switch t := v.(type) {
	case object:
		for k, e := range t {
			if s, ok := e.(string); ok && k == "$ref" {
				out = append(out, s)
				continue
			}
			out = append(out, collectRefs(e)...)
		}
	case []any:
		for _, e := range t {
			out = append(out, collectRefs(e)...)
		}
	}
	return out
}

// mapDefinitions maps every definition onto its Go type in the Kubernetes
// modules, so that go-swagger generates no model and one set of types (with
// their DeepCopy, JSON and protobuf code) flows everywhere.
func mapDefinitions(spec object) error {
	defs := spec["definitions"].(object)
	for name, d := range defs {
		pkg, alias, typ, err := goType(name)
		if err != nil {
			return err
		}
		d.(object)["x-go-type"] = object{
			"import": object{"package": pkg, "alias": alias},
			"type":   typ,
			"hints":  object{"kind": "interface", "noValidation": true},
		}
	}
	return nil
}

// goType returns the Go package, import alias and type of a definition.
func goType(def string) (pkg, alias, typ string, err error) {
	if def == "io.k8s.apimachinery.pkg.apis.meta.v1.Patch" {
		return "github.com/batkube/batkube/pkg/endpoint", "endpoint", "PatchBody", nil
	}
	i := strings.LastIndex(def, ".")
	prefix, typ := def[:i], def[i+1:]
	fixed := map[string][2]string{
		"io.k8s.apimachinery.pkg.apis.meta.v1":                     {"k8s.io/apimachinery/pkg/apis/meta/v1", "metav1"},
		"io.k8s.apimachinery.pkg.api.resource":                     {"k8s.io/apimachinery/pkg/api/resource", "apiresource"},
		"io.k8s.apimachinery.pkg.util.intstr":                      {"k8s.io/apimachinery/pkg/util/intstr", "intstr"},
		"io.k8s.apimachinery.pkg.runtime":                          {"k8s.io/apimachinery/pkg/runtime", "k8sruntime"},
		"io.k8s.apimachinery.pkg.version":                          {"k8s.io/apimachinery/pkg/version", "apimachineryversion"},
		"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1": {"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "apiextensionsv1"},
		"io.k8s.kube-aggregator.pkg.apis.apiregistration.v1":       {"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1", "apiregistrationv1"},
	}
	if f, ok := fixed[prefix]; ok {
		return f[0], f[1], typ, nil
	}
	if rest, ok := strings.CutPrefix(prefix, "io.k8s.api."); ok {
		parts := strings.Split(rest, ".")
		if len(parts) == 2 {
			return "k8s.io/api/" + parts[0] + "/" + parts[1], parts[0] + parts[1], typ, nil
		}
	}
	return "", "", "", fmt.Errorf("no Go type known for definition %s", def)
}

// fixMediaTypes declares the media types Batkube really consumes and
// produces (the spec's "*/*" would leave protobuf bodies without a consumer).
func fixMediaTypes(spec object) {
	for _, item := range spec["paths"].(object) {
		for method, op := range item.(object) {
			o, ok := op.(object)
			if !ok || method == "parameters" {
				continue
			}
			if method == "patch" {
				o["consumes"] = patchTypes
			} else {
				o["consumes"] = bodyTypes
			}
			o["produces"] = responseTypes
		}
	}
}

func writeJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// copyV3 replaces the OpenAPI v3 documents served for kubectl explain.
func copyV3(from, to string) error {
	old, _ := filepath.Glob(filepath.Join(to, "*.json"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(from, "*.json"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, filepath.Base(f)), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, p := range subs {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// dropShadowedQueryParams removes the "path" query parameter of the proxy
// operations that also have a {path} path parameter. go-swagger orders
// parameters by name, so two parameters named "path" come out in a random
// order and the generated code differs from run to run; the query one is
// meaningless next to the path one, and Batkube serves no proxy anyway.
func dropShadowedQueryParams(spec object) {
	global, _ := spec["parameters"].(object)
	isQueryPath := func(p any) bool {
		o, _ := p.(object)
		if ref, ok := o["$ref"].(string); ok {
			o, _ = global[strings.TrimPrefix(ref, "#/parameters/")].(object)
		}
		return o["in"] == "query" && o["name"] == "path"
	}
	filter := func(ps any) any {
		list, ok := ps.([]any)
		if !ok {
			return ps
		}
		out := list[:0:0]
		for _, p := range list {
			if !isQueryPath(p) {
				out = append(out, p)
			}
		}
		return out
	}
	for path, item := range spec["paths"].(object) {
		if !strings.Contains(path, "{path}") {
			continue
		}
		it := item.(object)
		for key, v := range it {
			if key == "parameters" {
				it[key] = filter(v)
				continue
			}
			if op, ok := v.(object); ok {
				if ps, ok := op["parameters"]; ok {
					op["parameters"] = filter(ps)
				}
			}
		}
	}
}
