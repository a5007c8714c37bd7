package table

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// initialEventsEnd is the annotation of the bookmark that ends the initial
// events of a watch list; its table row always carries metadata only.
const initialEventsEnd = "k8s.io/initial-events-end"

// printer prints the rows of one kind.
type printer struct {
	columns []metav1.TableColumnDefinition
	// row fills the cells (and conditions) of one object; it reports false
	// when obj is not of the printer's kind.
	row func(obj runtime.Object, now time.Time) (metav1.TableRow, bool)
}

// typed makes the printer of the Go type T.
func typed[T runtime.Object](columns []metav1.TableColumnDefinition, row func(T, time.Time) metav1.TableRow) printer {
	return printer{
		columns: columns,
		row: func(obj runtime.Object, now time.Time) (metav1.TableRow, bool) {
			o, ok := obj.(T)
			if !ok {
				return metav1.TableRow{}, false
			}
			return row(o, now), true
		},
	}
}

// Convert turns an object or a list into a Table as the API server does for
// kubectl: every column, including the priority-1 ones of -o wide; ages
// relative to now (simulated time); each row's object as includeObject says
// (None, Metadata — a PartialObjectMetadata, the default when empty — or
// Object). A kind without a printer gets the API server's default columns
// (Name, Created At). The objects are referenced, not copied: the Table must
// be encoded before they change.
func Convert(obj runtime.Object, includeObject metav1.IncludeObjectPolicy, now time.Time) (*metav1.Table, error) {
	return convert(obj, printerFor(obj), includeObject, now)
}

func convert(obj runtime.Object, p printer, includeObject metav1.IncludeObjectPolicy, now time.Time) (*metav1.Table, error) {
	switch includeObject {
	case "", metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", includeObject))
	}
	items := []runtime.Object{obj}
	if meta.IsListType(obj) {
		var err error
		if items, err = meta.ExtractList(obj); err != nil {
			return nil, fmt.Errorf("table: reading the items of %T: %w", obj, err)
		}
	}
	t := &metav1.Table{
		TypeMeta:          metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "Table"},
		ColumnDefinitions: slices.Clone(p.columns),
		Rows:              make([]metav1.TableRow, 0, len(items)),
	}
	for _, item := range items {
		row, ok := p.row(item, now)
		if !ok {
			// A list holding another kind than its own: print it plainly.
			if row, ok = defaultPrinter.row(item, now); !ok {
				return nil, notAcceptable(item)
			}
		}
		var err error
		if row.Object, err = rowObject(item, includeObject); err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, row)
	}
	if l, err := meta.ListAccessor(obj); err == nil {
		t.ResourceVersion = l.GetResourceVersion()
		t.Continue = l.GetContinue()
		t.RemainingItemCount = l.GetRemainingItemCount()
	} else if m, err := meta.CommonAccessor(obj); err == nil {
		t.ResourceVersion = m.GetResourceVersion()
	}
	return t, nil
}

// rowObject is what a row carries of its object.
func rowObject(obj runtime.Object, include metav1.IncludeObjectPolicy) (runtime.RawExtension, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return runtime.RawExtension{}, notAcceptable(obj)
	}
	switch {
	case include == metav1.IncludeObject && m.GetAnnotations()[initialEventsEnd] != "true":
		return runtime.RawExtension{Object: obj}, nil
	case include == metav1.IncludeNone:
		return runtime.RawExtension{}, nil
	default:
		partial := meta.AsPartialObjectMetadata(m)
		partial.TypeMeta = metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "PartialObjectMetadata"}
		return runtime.RawExtension{Object: partial}, nil
	}
}

// notAcceptable is the API server's answer for an object it cannot tabulate.
func notAcceptable(obj runtime.Object) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReason("NotAcceptable"),
		Message: fmt.Sprintf("the resource %T does not support being converted to a Table", obj),
	}}
}

// age is the AGE cell: the time since t in kubectl's short form ("5m", "3d4h").
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// microAge is age for a MicroTime.
func microAge(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

var objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

// Columns every printer shares.
var (
	nameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]}
	ageColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDoc["creationTimestamp"]}
)

// defaultPrinter is the API server's default table convertor.
var defaultPrinter = printer{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Created At", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
	},
	row: func(obj runtime.Object, _ time.Time) (metav1.TableRow, bool) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return metav1.TableRow{}, false
		}
		return metav1.TableRow{Cells: []any{m.GetName(), m.GetCreationTimestamp().Time.UTC().Format(time.RFC3339)}}, true
	},
}
