package apiserver

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/apply"
	"github.com/batkube/batkube/pkg/store"
)

// Managed fields and server-side apply (package apply): every write of a
// client records its manager's fields, an apply merges its manager's
// configuration. The simulation's own writes (the broker's pods, the
// kubelet's statuses) are not a client's and record nothing.

// fieldManager names the manager of a client's write: its fieldManager
// parameter, or what its User-Agent starts with, as the real server does.
func (q *request) fieldManager() string {
	if m := q.http.URL.Query().Get("fieldManager"); m != "" {
		return m
	}
	ua, _, _ := strings.Cut(q.http.UserAgent(), "/")
	var b bytes.Buffer
	for _, r := range ua {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > metav1validation.FieldManagerMaxLength {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// applyTarget is what package apply knows of a write to r.
func (s *Server) applyTarget(r *resource, sub string) apply.Target {
	t := apply.Target{GVK: r.gvk, Subresource: sub, HasStatus: r.hasStatus()}
	if r.custom != nil {
		t.Custom, t.Revision = r.custom.OpenAPI(), r.memo.json
	}
	return t
}

// track records the fields the request's manager sets by writing obj over
// cur (nil on create), and returns obj with its managed fields. Events
// record none: they are the most frequent writes of a scheduler (one or
// more a pod), nobody applies them, and tracking would triple the
// server's cost of each (BenchmarkServeEventCreate: 74 -> 294 allocations).
func (q *request) track(cur, obj store.Object) (store.Object, error) {
	if q.res.storage == eventsStorage {
		return obj, nil
	}
	live := cur
	if live == nil {
		var err error
		if live, err = q.res.newObject(); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	q.res.setKind(live) // a stored object's kind may be left out
	q.res.setKind(obj)
	out, err := q.server.apply.Update(q.server.applyTarget(q.res, q.op.Subresource), live, obj, q.fieldManager())
	if err != nil {
		return nil, asAPIError(err)
	}
	return out.(store.Object), nil
}

// setKind sets the served kind of an object of r (the current object of a
// write is the write's own copy).
func (r *resource) setKind(obj store.Object) {
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		obj.GetObjectKind().SetGroupVersionKind(r.gvk)
	}
}

// applied decodes the configuration of an apply request (YAML or JSON).
func (q *request) applied(patch []byte) (*unstructured.Unstructured, error) {
	if errs := metav1validation.ValidatePatchOptions(&metav1.PatchOptions{FieldManager: q.http.URL.Query().Get("fieldManager")}, types.ApplyPatchType); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	u, err := decodeApplied(patch)
	if err != nil {
		return nil, apierrors.NewBadRequest("error decoding patch: " + err.Error())
	}
	return u, nil
}

// decodeApplied reads an apply's configuration as YAML, as the real server
// does; a JSON document that means the same as YAML and as JSON
// (plainJSON) is read as JSON, without a YAML parser.
func decodeApplied(patch []byte) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if plainJSON(patch) {
		if err := decodeJSON(patch, &u.Object); err == nil {
			return u, nil
		}
		u.Object = map[string]any{} // not JSON after all: YAML says why
	}
	doc, err := yaml.YAMLToJSON(patch)
	if err != nil {
		return nil, err
	}
	if err := decodeJSON(doc, &u.Object); err != nil { // integers kept int64, as the real decoder
		return nil, err
	}
	return u, nil
}

// applyTo merges the request's applied configuration into cur (an empty
// object of the kind when it does not exist yet).
func (q *request) applyTo(cur store.Object, applied *unstructured.Unstructured) (store.Object, error) {
	q.res.setKind(cur)
	force := q.http.URL.Query().Get("force") == "true"
	out, err := q.server.apply.Apply(q.server.applyTarget(q.res, q.op.Subresource), cur, applied, q.http.URL.Query().Get("fieldManager"), force)
	if err != nil {
		return nil, asAPIError(err)
	}
	return out.(store.Object), nil
}

// asAPIError keeps the field manager's API errors (an apply's conflicts,
// 409) and makes the others a 400, as the real server answers a
// configuration its types refuse.
func asAPIError(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return apierrors.NewBadRequest(err.Error())
}
