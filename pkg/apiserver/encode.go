package apiserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/unstructjson"
)

// protobufMagic prefixes every Kubernetes protobuf document ("k8s\x00").
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// protoMarshaler is implemented by every generated Kubernetes API type.
type protoMarshaler interface {
	Marshal() ([]byte, error)
}

// encodeJSON encodes obj as the real API server does (encoding/json with the
// types' own JSON tags; a trailing newline). A custom object's content is
// encoded by unstructjson, which writes the same bytes without reflection
// (TestCustomObjectsEncodeAsEncodingJSON).
func encodeJSON(obj runtime.Object) ([]byte, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if b, err := unstructjson.Append(nil, u.Object); err == nil {
			return b, nil
		} // else encoding/json's encoding or error
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(obj); err != nil {
		return nil, fmt.Errorf("encoding %T as JSON: %w", obj, err)
	}
	return buf.Bytes(), nil
}

// encodeProtoRaw returns the protobuf message of obj without the envelope.
func encodeProtoRaw(obj runtime.Object) ([]byte, error) {
	m, ok := obj.(protoMarshaler)
	if !ok {
		return nil, fmt.Errorf("%T has no protobuf encoding", obj)
	}
	b, err := m.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding %T as protobuf: %w", obj, err)
	}
	return b, nil
}

// protoPrefix is the start of the envelope of an object of kind gvk, the
// same for all of them: the magic number and the TypeMeta field.
func protoPrefix(gvk schema.GroupVersionKind) []byte {
	tm := runtime.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}
	tmBytes, _ := tm.Marshal() // cannot fail: two strings
	prefix := make([]byte, 0, len(protobufMagic)+len(tmBytes)+binary.MaxVarintLen64+1)
	prefix = append(prefix, protobufMagic...)
	prefix = appendTag(prefix, 1, len(tmBytes))
	return append(prefix, tmBytes...)
}

// protoEnvelope returns the head of the envelope around a message of n
// bytes, after its kind's prefix (protoPrefix).
func protoEnvelope(prefix []byte, n int) []byte {
	head := make([]byte, 0, len(prefix)+binary.MaxVarintLen64+1)
	head = append(head, prefix...)
	return appendTag(head, 2, n)
}

// protoTrailer ends an envelope: empty contentEncoding and contentType, as
// runtime.Unknown.Marshal writes them.
var protoTrailer = []byte{0x1a, 0x00, 0x22, 0x00}

// appendTag appends the key of a length-delimited field and its length.
func appendTag(b []byte, field int, n int) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	return binary.AppendUvarint(b, uint64(n))
}

// encodeProto wraps the raw message of an object of kind gvk in the
// Kubernetes protobuf envelope.
func encodeProto(gvk schema.GroupVersionKind, raw []byte) []byte {
	head := protoEnvelope(protoPrefix(gvk), len(raw))
	out := make([]byte, 0, len(head)+len(raw)+len(protoTrailer))
	out = append(out, head...)
	out = append(out, raw...)
	return append(out, protoTrailer...)
}

// writeJSONList writes a list document from the JSON encodings of its items,
// so that each item is encoded once and shared by every list and watch.
func writeJSONList(w io.Writer, listGVK schema.GroupVersionKind, meta metav1.ListMeta, items [][]byte) error {
	metaJSON, err := json.Marshal(&meta)
	if err != nil {
		return fmt.Errorf("encoding list metadata: %w", err)
	}
	var head bytes.Buffer
	head.WriteString(`{"kind":`)
	writeJSONString(&head, listGVK.Kind)
	head.WriteString(`,"apiVersion":`)
	writeJSONString(&head, listGVK.GroupVersion().String())
	head.WriteString(`,"metadata":`)
	head.Write(metaJSON)
	head.WriteString(`,"items":[`)
	if _, err := w.Write(head.Bytes()); err != nil {
		return err
	}
	for i, item := range items {
		if i > 0 {
			if _, err := w.Write([]byte{','}); err != nil {
				return err
			}
		}
		if _, err := w.Write(bytes.TrimRight(item, "\n")); err != nil {
			return err
		}
	}
	_, err = w.Write([]byte("]}\n"))
	return err
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // cannot fail for a string
	buf.Write(b)
}

// writeProtoList writes a list document in protobuf from the raw messages of
// its items: every Kubernetes list message has its ListMeta as field 1 and its
// items as the repeated field 2 (checked for every list type by a test).
func writeProtoList(w io.Writer, listGVK schema.GroupVersionKind, meta metav1.ListMeta, items [][]byte) error {
	metaBytes, err := meta.Marshal()
	if err != nil {
		return fmt.Errorf("encoding list metadata: %w", err)
	}
	body := appendTag(nil, 1, len(metaBytes))
	body = append(body, metaBytes...)
	size := len(body)
	for _, item := range items {
		size += len(appendTag(nil, 2, len(item))) + len(item)
	}
	if _, err := w.Write(protoEnvelope(protoPrefix(listGVK), size)); err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	var tag []byte
	for _, item := range items {
		tag = appendTag(tag[:0], 2, len(item))
		if _, err := w.Write(tag); err != nil {
			return err
		}
		if _, err := w.Write(item); err != nil {
			return err
		}
	}
	_, err = w.Write(protoTrailer)
	return err
}

// jsonToYAML turns a JSON document into YAML.
func jsonToYAML(doc []byte) ([]byte, error) {
	out, err := yaml.JSONToYAML(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding as YAML: %w", err)
	}
	return out, nil
}
