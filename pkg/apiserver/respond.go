package apiserver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/store"
	"github.com/batkube/batkube/pkg/table"
)

// storedBytes returns the encoding of a stored object as served by r — JSON,
// or the raw protobuf message (without envelope) that lists embed — computed
// once per stored object and format and shared by every list and watch.
func (s *Server) storedBytes(r *resource, st *store.Stored, media string) ([]byte, error) {
	key, encode := r.memo.json, encodeJSON
	if media == mediaProtobuf {
		key, encode = r.memo.proto, encodeProtoRaw
	}
	if r.gvk == r.storageGVK {
		return st.Encoded(key, func(obj store.Object) ([]byte, error) { return encode(obj) })
	}
	return st.Encoded(key, func(obj store.Object) ([]byte, error) {
		out, err := s.convert(obj, r.gvk)
		if err != nil {
			return nil, err
		}
		return encode(out)
	})
}

// document is an encoded object in pieces: a memoised encoding shared by
// every reader, between a head and a tail written around it (the protobuf
// envelope), so that no reader copies the shared bytes to frame them and no
// stored object keeps a second, framed copy of its encoding.
type document struct{ head, body, tail []byte }

func (d document) len() int { return len(d.head) + len(d.body) + len(d.tail) }

// writeTo writes the document's pieces.
func (d document) writeTo(w io.Writer) error {
	for _, b := range [][]byte{d.head, d.body, d.tail} {
		if len(b) == 0 {
			continue
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// storedDocument returns a stored object as a whole document (JSON, or
// protobuf with its envelope) around its memoised encoding (storedBytes):
// what a GET answers and what every watch event embeds.
func (s *Server) storedDocument(r *resource, st *store.Stored, media string) (document, error) {
	b, err := s.storedBytes(r, st, media)
	if err != nil {
		return document{}, err
	}
	if media != mediaProtobuf {
		return document{body: b}, nil
	}
	return document{head: protoEnvelope(r.protoPrefix, len(b)), body: b, tail: protoTrailer}, nil
}

// servedObject returns a stored object as its served version (a copy the
// caller may change).
func (s *Server) servedObject(r *resource, st *store.Stored) (store.Object, error) {
	return s.convert(st.Copy(), r.gvk)
}

// writeStored writes one stored object.
func (s *Server) writeStored(w http.ResponseWriter, req *http.Request, f format, r *resource, st *store.Stored, code int) {
	if f.shape != shapeObject || f.media == mediaYAML {
		obj, err := s.servedObject(r, st)
		if err != nil {
			s.writeError(w, req, err)
			return
		}
		s.writeObjectShaped(w, req, f, r, obj, code, r.gvk)
		return
	}
	doc, err := s.storedDocument(r, st, f.media)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.media)
	h.Set("Content-Length", strconv.Itoa(doc.len()))
	w.WriteHeader(code)
	_ = doc.writeTo(w)
}

// writeObjectShaped writes obj, of resource r, as a Table or metadata when
// asked, or as is.
func (s *Server) writeObjectShaped(w http.ResponseWriter, req *http.Request, f format, r *resource, obj runtime.Object, code int, gvk schema.GroupVersionKind) {
	switch f.shape {
	case shapeTable:
		t, err := r.tableOf(obj, includeObject(req), s.clock.Now())
		if err != nil {
			s.writeError(w, req, err)
			return
		}
		s.writeObject(w, f, t, code, metav1.SchemeGroupVersion.WithKind("Table"))
	case shapeMetadata:
		pm, pmGVK, err := partialMetadata(obj)
		if err != nil {
			s.writeError(w, req, err)
			return
		}
		s.writeObject(w, f, pm, code, pmGVK)
	default:
		s.writeObject(w, f, obj, code, gvk)
	}
}

// writeObject encodes obj (of kind gvk) in f's media type.
func (s *Server) writeObject(w http.ResponseWriter, f format, obj runtime.Object, code int, gvk schema.GroupVersionKind) {
	var (
		b   []byte
		err error
	)
	switch f.media {
	case mediaProtobuf:
		b, err = encodeProtoRaw(obj)
		if err == nil {
			b = encodeProto(gvk, b)
		}
	case mediaYAML:
		b, err = encodeJSON(obj)
		if err == nil {
			b, err = jsonToYAML(b)
		}
	default:
		b, err = encodeJSON(obj)
	}
	if err != nil {
		s.log.Error("encoding a response", "kind", gvk.Kind, "err", err)
		b = []byte(fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"code":500}`+"\n", err.Error()))
		writeBytes(w, mediaJSON, http.StatusInternalServerError, b)
		return
	}
	writeBytes(w, f.media, code, b)
}

func writeBytes(w http.ResponseWriter, media string, code int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", media)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// writeList writes a list of stored objects.
func (s *Server) writeList(w http.ResponseWriter, req *http.Request, f format, r *resource, items []*store.Stored, lm metav1.ListMeta) {
	if f.shape != shapeObject || f.media == mediaYAML {
		list, err := s.typedList(r, items, lm)
		if err != nil {
			s.writeError(w, req, err)
			return
		}
		s.writeObjectShaped(w, req, f, r, list, http.StatusOK, r.listGVK)
		return
	}
	encoded := make([][]byte, len(items))
	for i, st := range items {
		b, err := s.storedBytes(r, st, f.media)
		if err != nil {
			s.writeError(w, req, err)
			return
		}
		encoded[i] = b
	}
	var buf bytes.Buffer
	var err error
	if f.media == mediaProtobuf {
		err = writeProtoList(&buf, r.listGVK, lm, encoded)
	} else {
		err = writeJSONList(&buf, r.listGVK, lm, encoded)
	}
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	writeBytes(w, f.media, http.StatusOK, buf.Bytes())
}

// typedList builds the Go list object (for YAML, tables and metadata).
func (s *Server) typedList(r *resource, items []*store.Stored, lm metav1.ListMeta) (runtime.Object, error) {
	var list runtime.Object = &unstructured.UnstructuredList{Object: map[string]any{}}
	if r.custom == nil {
		var err error
		if list, err = s.scheme.New(r.listGVK); err != nil {
			return nil, fmt.Errorf("no list type for %s: %w", r.listGVK, err)
		}
	}
	objs := make([]runtime.Object, len(items))
	for i, st := range items {
		obj, err := s.servedObject(r, st)
		if err != nil {
			return nil, err
		}
		objs[i] = obj
	}
	if err := meta.SetList(list, objs); err != nil {
		return nil, fmt.Errorf("building %s: %w", r.listGVK.Kind, err)
	}
	lo, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	lo.SetResourceVersion(lm.ResourceVersion)
	lo.SetContinue(lm.Continue)
	lo.SetRemainingItemCount(lm.RemainingItemCount)
	list.GetObjectKind().SetGroupVersionKind(r.listGVK)
	return list, nil
}

func includeObject(req *http.Request) metav1.IncludeObjectPolicy {
	switch p := metav1.IncludeObjectPolicy(req.URL.Query().Get("includeObject")); p {
	case metav1.IncludeNone, metav1.IncludeObject:
		return p
	default:
		return metav1.IncludeMetadata
	}
}

// partialMetadata turns an object or a list into PartialObjectMetadata(List).
func partialMetadata(obj runtime.Object) (runtime.Object, schema.GroupVersionKind, error) {
	if meta.IsListType(obj) {
		objs, err := meta.ExtractList(obj)
		if err != nil {
			return nil, schema.GroupVersionKind{}, err
		}
		lm, err := meta.ListAccessor(obj)
		if err != nil {
			return nil, schema.GroupVersionKind{}, err
		}
		gvk := metav1.SchemeGroupVersion.WithKind("PartialObjectMetadataList")
		out := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}}
		out.ResourceVersion = lm.GetResourceVersion()
		out.Continue = lm.GetContinue()
		for _, o := range objs {
			pm, _, err := partialMetadata(o)
			if err != nil {
				return nil, schema.GroupVersionKind{}, err
			}
			out.Items = append(out.Items, *pm.(*metav1.PartialObjectMetadata))
		}
		return out, gvk, nil
	}
	gvk := metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata")
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, schema.GroupVersionKind{}, fmt.Errorf("%T has no object metadata", obj)
	}
	pm := meta.AsPartialObjectMetadata(m)
	pm.TypeMeta = metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}
	return pm, gvk, nil
}

// tableOf converts an object or a list of r to a Table for kubectl (a
// custom resource's with its printer columns).
func (r *resource) tableOf(obj runtime.Object, include metav1.IncludeObjectPolicy, now time.Time) (*metav1.Table, error) {
	var t *metav1.Table
	var err error
	if r != nil && r.printer != nil {
		t, err = table.ConvertWith(obj, *r.printer, include, now)
	} else {
		t, err = table.Convert(obj, include, now)
	}
	if err != nil {
		return nil, err
	}
	t.TypeMeta = metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "Table"}
	return t, nil
}
