package apiserver

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/eventconv"
	"github.com/batkube/batkube/pkg/store"
)

// convert returns obj as an object of kind to. Versions of one resource are
// the same fields under another group version in almost every case, so the
// generic conversion re-decodes the JSON form; the core and events.k8s.io
// Events, which rename fields, have a typed conversion.
func (s *Server) convert(obj store.Object, to schema.GroupVersionKind) (store.Object, error) {
	from := obj.GetObjectKind().GroupVersionKind()
	if from == to {
		return obj, nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		// A custom resource's versions share their schema's fields (the
		// None conversion strategy): only apiVersion changes.
		out := u.DeepCopy()
		out.SetGroupVersionKind(to)
		return out, nil
	}
	coreEvent := corev1.SchemeGroupVersion.WithKind("Event")
	v1Event := eventsv1.SchemeGroupVersion.WithKind("Event")
	switch {
	case from == coreEvent && to.Group == eventsv1.GroupName:
		return s.convertJSON(eventconv.ToEventsV1(obj.(*corev1.Event)), to)
	case to == coreEvent && from.Group == eventsv1.GroupName:
		v1, err := s.convertJSON(obj, v1Event)
		if err != nil {
			return nil, err
		}
		return eventconv.ToCore(v1.(*eventsv1.Event)), nil
	}
	return s.convertJSON(obj, to)
}

func (s *Server) convertJSON(obj store.Object, to schema.GroupVersionKind) (store.Object, error) {
	if obj.GetObjectKind().GroupVersionKind() == to {
		return obj, nil
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T to %s: %w", obj, to, err)
	}
	out, err := newTyped(s.scheme, to)
	if err != nil {
		return nil, err
	}
	if err := decodeJSON(data, out); err != nil {
		return nil, fmt.Errorf("converting %T to %s: %w", obj, to, err)
	}
	out.GetObjectKind().SetGroupVersionKind(to)
	return out, nil
}
