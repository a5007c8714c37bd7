package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

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
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var created []string
	for doc := 1; ; doc++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return created, nil
			}
			return created, fmt.Errorf("apiserver: manifest document %d: %w", doc, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		names, err := s.createDocument(ctx, raw)
		created = append(created, names...)
		if err != nil {
			return created, fmt.Errorf("apiserver: manifest document %d: %w", doc, err)
		}
	}
}

func (s *Server) createDocument(ctx context.Context, raw json.RawMessage) ([]string, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, err
	}
	gvk := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
	if gvk.Kind == "" || tm.APIVersion == "" {
		return nil, errors.New("apiVersion and kind are required")
	}
	if gvk.Kind == "List" {
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
		var created []string
		for i, item := range list.Items {
			names, err := s.createDocument(ctx, item)
			created = append(created, names...)
			if err != nil {
				return created, fmt.Errorf("item %d: %w", i, err)
			}
		}
		return created, nil
	}
	r := s.catalog.byKind(gvk)
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
