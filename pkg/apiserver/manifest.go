package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// CreateManifest creates the objects of a manifest — YAML or JSON, one or
// several documents, v1 Lists unfolded — as a client's POST would (defaults,
// validation) but without admission: the objects a run starts with
// (PriorityClasses, namespaces...). Namespaced objects without a namespace go
// to "default". It returns "kind/name" of each object created and stops at
// the first error, which names the document.
func (s *Server) CreateManifest(ctx context.Context, data []byte) ([]string, error) {
	docs, err := ManifestDocuments(data)
	if err != nil {
		return nil, err
	}
	var created []string
	for i, doc := range docs {
		names, err := s.CreateDocument(ctx, doc)
		created = append(created, names...)
		if err != nil {
			return created, fmt.Errorf("apiserver: manifest object %d: %w", i+1, err)
		}
	}
	return created, nil
}

// ManifestDocuments splits a manifest (YAML or JSON, one or several
// documents) into its objects, the items of v1 Lists unfolded, each as
// JSON.
func ManifestDocuments(data []byte) ([]json.RawMessage, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []json.RawMessage
	for doc := 1; ; doc++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, fmt.Errorf("apiserver: manifest document %d: %w", doc, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		var head struct {
			metav1.TypeMeta `json:",inline"`
			Items           []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return out, fmt.Errorf("apiserver: manifest document %d: %w", doc, err)
		}
		if head.Kind == "List" {
			out = append(out, head.Items...)
			continue
		}
		out = append(out, raw)
	}
}

// CreateDocument creates one object of a manifest (JSON), as
// CreateManifest does, and returns its "resource/name".
func (s *Server) CreateDocument(ctx context.Context, raw json.RawMessage) ([]string, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, err
	}
	gvk := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
	if gvk.Kind == "" || tm.APIVersion == "" {
		return nil, errors.New("apiVersion and kind are required")
	}
	r := s.byKind(gvk)
	if r == nil {
		return nil, fmt.Errorf("%s is not served", gvk)
	}
	obj, err := r.newObject()
	if err != nil {
		return nil, err
	}
	if err := decodeJSON(raw, obj); err != nil {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(r.gvk)
	if r.namespaced && obj.GetNamespace() == "" {
		obj.SetNamespace(metav1.NamespaceDefault)
	}
	if _, err := s.create(ctx, r, obj, false); err != nil {
		return nil, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return []string{r.gvr.Resource + "/" + obj.GetName()}, nil
}

// DeleteDocument deletes the object a manifest's document names (as a
// client's DELETE with the default, background, propagation: its
// dependents are the garbage collector's). It reports whether the object
// was there.
func (s *Server) DeleteDocument(ctx context.Context, raw json.RawMessage) (bool, error) {
	var head struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return false, err
	}
	r := s.byKind(schema.FromAPIVersionAndKind(head.APIVersion, head.Kind))
	if r == nil {
		return false, fmt.Errorf("%s %s is not served", head.APIVersion, head.Kind)
	}
	ns := head.Metadata.Namespace
	if r.namespaced && ns == "" {
		ns = metav1.NamespaceDefault
	}
	_, gone, err := s.deleteObject(ctx, r, ns, head.Metadata.Name, &metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return gone, err
}
