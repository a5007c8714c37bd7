package apiserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/batkube/batkube/pkg/scheme"
)

// TestComposedListsDecodeLikeMarshalledLists checks, for every list type of
// every served group version, that a list composed from pre-encoded items
// decodes to the same list as the typed list encoded whole — in protobuf
// (field numbers 1 and 2 of every list message) and in JSON.
func TestComposedListsDecodeLikeMarshalledLists(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	pb := protobuf.NewSerializer(s, s)
	checked := 0
	for gvk := range s.AllKnownTypes() {
		if !strings.HasSuffix(gvk.Kind, "List") || gvk.Version == runtime.APIVersionInternal || gvk.Group == "meta.k8s.io" {
			continue
		}
		itemGVK := gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List"))
		if !s.Recognizes(itemGVK) {
			continue
		}
		item, err := newTyped(s, itemGVK)
		if err != nil {
			continue
		}
		if _, ok := item.(protoMarshaler); !ok {
			continue
		}
		item.SetName("x")
		item.SetLabels(map[string]string{"a": "b"})
		list, err := s.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		if err := meta.SetList(list, []runtime.Object{item}); err != nil {
			continue
		}
		lm := metav1.ListMeta{ResourceVersion: "42", Continue: "c"}
		la, _ := meta.ListAccessor(list)
		la.SetResourceVersion("42")
		la.SetContinue("c")

		raw, err := encodeProtoRaw(item)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := writeProtoList(&buf, gvk, lm, [][]byte{raw}); err != nil {
			t.Fatal(err)
		}
		got, err := s.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := pb.Decode(buf.Bytes(), nil, got); err != nil {
			t.Errorf("%s: decoding the composed protobuf list: %v", gvk, err)
			continue
		}
		if !equality.Semantic.DeepEqual(stripKind(got), stripKind(list)) {
			t.Errorf("%s: composed protobuf list decodes to %+v, want %+v", gvk, got, list)
		}

		itemJSON, err := encodeJSON(item)
		if err != nil {
			t.Fatal(err)
		}
		buf.Reset()
		if err := writeJSONList(&buf, gvk, lm, [][]byte{itemJSON}); err != nil {
			t.Fatal(err)
		}
		gotJSON, _ := s.New(gvk)
		if err := decodeJSON(buf.Bytes(), gotJSON); err != nil {
			t.Errorf("%s: decoding the composed JSON list: %v\n%s", gvk, err, buf.Bytes())
			continue
		}
		if !equality.Semantic.DeepEqual(stripKind(gotJSON), stripKind(list)) {
			t.Errorf("%s: composed JSON list decodes to %+v, want %+v", gvk, gotJSON, list)
		}
		checked++
	}
	if checked < 100 {
		t.Fatalf("checked %d list types, want every served one (>100)", checked)
	}
}

// stripKind clears the type metadata of a list and its items (the protobuf
// items carry none).
func stripKind(list runtime.Object) runtime.Object {
	list = list.DeepCopyObject()
	items, _ := meta.ExtractList(list)
	for _, it := range items {
		it.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	_ = meta.SetList(list, items)
	list.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return list
}

// TestWatchFrameIsAMarshalledWatchEvent checks the hand-framed protobuf watch
// event against metav1.WatchEvent's own encoding, for small and large objects
// (varint lengths of one and several bytes).
func TestWatchFrameIsAMarshalledWatchEvent(t *testing.T) {
	for _, n := range []int{0, 5, 127, 128, 300, 70000} {
		obj := bytes.Repeat([]byte{0xab}, n)
		want, err := (&metav1.WatchEvent{Type: "MODIFIED", Object: runtime.RawExtension{Raw: obj}}).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got := append(watchEventFrameHead("MODIFIED", n), obj...)
		if size := int(got[0])<<24 | int(got[1])<<16 | int(got[2])<<8 | int(got[3]); size != len(want) || !bytes.Equal(got[4:], want) {
			t.Errorf("object of %d bytes: frame differs from WatchEvent.Marshal (length prefix %d, want %d)", n, size, len(want))
		}
	}
}

func TestVersionLessComparesNumbers(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		less bool
	}{{"v1.18.19", "v1.37.1", true}, {"v1.37.1", "v1.18.19", false}, {"v1.9.0", "v1.10.0", true}, {"v1.37.1", "v1.37.1", false}, {"v1.37.0-alpha.1", "v1.37.1", true}} {
		if got := versionLess(tc.a, tc.b); got != tc.less {
			t.Errorf("versionLess(%q, %q) = %t, want %t", tc.a, tc.b, got, tc.less)
		}
	}
}

// A custom object encodes as encoding/json encodes it through its own
// MarshalJSON (as before unstructjson): the same bytes.
func TestCustomObjectsEncodeAsEncodingJSON(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
		"metadata": map[string]any{"name": "job-a<b>&c", "namespace": "default", "generation": int64(2),
			"managedFields": []any{map[string]any{"manager": "kueue", "fieldsV1": map[string]any{"f:status": map[string]any{}}}}},
		"spec":   map[string]any{"podSets": []any{map[string]any{"count": int64(3), "name": "main", "ratio": 0.000_000_5}}, "active": true, "note": nil},
		"status": map[string]any{"message": "line\nbreak \u2028 \"quoted\" \xff", "big": 1e21}}}
	got, err := encodeJSON(u)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.NewEncoder(&want).Encode(u); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("encodeJSON:\n%s\nencoding/json:\n%s", got, want.Bytes())
	}
}
