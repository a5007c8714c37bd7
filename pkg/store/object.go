package store

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Object is what the store holds: a Kubernetes API object with metadata.
type Object interface {
	runtime.Object
	metav1.Object
}

// FieldsFunc calls add with each field selector value of obj, an object of
// resource gr, beyond metadata.name and metadata.namespace (which the store
// adds; add ignores them). The store calls it at most once per stored
// object.
type FieldsFunc func(gr schema.GroupResource, obj runtime.Object, add func(name, value string))

// Stored is an object as the store holds it. It is immutable once stored and
// shared by every reader: callers must not mutate Object() (use Copy).
type Stored struct {
	obj Object
	rv  uint64

	fieldsOnce sync.Once
	fields     fieldValues

	encMu     sync.Mutex
	encodings []*encoding

	// seq is the sequence number of the history record that stored this
	// object (guarded by the store's mu; 0 outside a store).
	seq uint64
	// superseded is set once a later write replaced or deleted the object:
	// its encodings are then no longer memoised (see supersede).
	superseded atomic.Bool
}

// encoding memoises one wire format of a stored object.
type encoding struct {
	format string
	mu     sync.Mutex // held while computing
	data   atomic.Pointer[[]byte]
}

// NewStored wraps obj, which the caller hands over, as a Stored that is not
// in any store (e.g. the answer to a dry-run request). Its RV is read from
// obj's metadata.resourceVersion (0 when empty or malformed).
func NewStored(obj Object) *Stored {
	rv, _ := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	return &Stored{obj: obj, rv: rv}
}

// newStored takes ownership of obj and stamps it with rv.
func newStored(obj Object, rv uint64) *Stored {
	obj.SetResourceVersion(strconv.FormatUint(rv, 10))
	return &Stored{obj: obj, rv: rv}
}

// Object returns the stored object, shared with every other reader: read only.
func (s *Stored) Object() Object { return s.obj }

// RV returns the resourceVersion of the write that stored this object.
func (s *Stored) RV() uint64 { return s.rv }

// Copy returns a deep copy of the object, which the caller may mutate.
func (s *Stored) Copy() Object { return s.obj.DeepCopyObject().(Object) }

// Encoded returns the object encoded in format, calling encode the first time
// a format is asked for and sharing the bytes afterwards (they must not be
// modified). format must name the encoding completely: two calls with the same
// format are assumed to want the same bytes. Concurrent callers of one format
// wait for a single encode; a failed encode is not remembered. An object a
// later write superseded no longer memoises: it answers what it still holds,
// or encodes anew for each caller.
func (s *Stored) Encoded(format string, encode func(Object) ([]byte, error)) ([]byte, error) {
	if s.superseded.Load() {
		if b := s.memoised(format); b != nil {
			return b, nil
		}
		return encode(s.obj)
	}
	e := s.encodingOf(format)
	if b := e.data.Load(); b != nil {
		return *b, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if b := e.data.Load(); b != nil {
		return *b, nil
	}
	b, err := encode(s.obj)
	if err != nil {
		return nil, err
	}
	e.data.Store(&b)
	return b, nil
}

// memoised returns the memoised encoding in format, or nil.
func (s *Stored) memoised(format string) []byte {
	s.encMu.Lock()
	defer s.encMu.Unlock()
	for _, e := range s.encodings {
		if e.format == format {
			if b := e.data.Load(); b != nil {
				return *b
			}
		}
	}
	return nil
}

// supersede marks the object as replaced by a later write. Its encodings,
// memoised for the watchers that send it, are let go at once if every live
// watcher of the resource has read past its record (read is true): the
// history keeps the object for watches that resume from an older
// resourceVersion and for exact-RV lists, which are rare, while the
// encodings would double what the history holds. A watcher that read the
// record but has not encoded it yet encodes it itself.
func (s *Stored) supersede(read bool) {
	s.superseded.Store(true)
	if !read {
		return
	}
	s.encMu.Lock()
	s.encodings = nil
	s.encMu.Unlock()
}

func (s *Stored) encodingOf(format string) *encoding {
	s.encMu.Lock()
	defer s.encMu.Unlock()
	for _, e := range s.encodings {
		if e.format == format {
			return e
		}
	}
	e := &encoding{format: format}
	s.encodings = append(s.encodings, e)
	return e
}

// fieldSet returns the field selector values of the object, computed once.
// The set always holds metadata.name and metadata.namespace.
func (s *Stored) fieldSet(gr schema.GroupResource, fn FieldsFunc) fields.Fields {
	s.fieldsOnce.Do(func() {
		vals := make(fieldValues, 2, 12)
		vals[0] = fieldValue{"metadata.name", s.obj.GetName()}
		vals[1] = fieldValue{"metadata.namespace", s.obj.GetNamespace()}
		if fn != nil {
			fn(gr, s.obj, func(name, value string) {
				if name != "metadata.name" && name != "metadata.namespace" && !vals.Has(name) {
					vals = append(vals, fieldValue{name, value})
				}
			})
		}
		s.fields = slices.Clip(vals)
	})
	return &s.fields // a pointer: no allocation to make it an interface
}

// fieldValues are an object's field selector values, kept for as long as
// the object is (every version in the history): a handful of pairs, a
// fraction of the memory of a map.
type fieldValues []fieldValue

type fieldValue struct{ name, value string }

var _ fields.Fields = fieldValues(nil)

// Has reports whether the object has the field.
func (f fieldValues) Has(name string) bool {
	for _, v := range f {
		if v.name == name {
			return true
		}
	}
	return false
}

// Get returns the value of the field ("" when it has none).
func (f fieldValues) Get(name string) string {
	for _, v := range f {
		if v.name == name {
			return v.value
		}
	}
	return ""
}
