package table

import (
	"fmt"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/util/jsonpath"
)

// Printer prints the rows of one kind of object.
type Printer struct{ p printer }

// ForColumns returns the printer of a custom resource: the Name column,
// then the printer columns of its definition, each cell the value at the
// column's JSON path (a date as an age relative to now), as the real
// server's table convertor of custom resources does.
func ForColumns(cols []apiextensionsv1.CustomResourceColumnDefinition) (Printer, error) {
	defs := []metav1.TableColumnDefinition{nameColumn}
	paths := make([]*jsonpath.JSONPath, len(cols))
	for i, c := range cols {
		defs = append(defs, metav1.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format,
			Description: c.Description, Priority: c.Priority})
		p := jsonpath.New(c.Name).AllowMissingKeys(true)
		if err := p.Parse(fmt.Sprintf("{%s}", c.JSONPath)); err != nil {
			return Printer{}, fmt.Errorf("table: column %s: JSON path %q: %w", c.Name, c.JSONPath, err)
		}
		paths[i] = p
	}
	return Printer{printer{columns: defs, row: func(obj runtime.Object, now time.Time) (metav1.TableRow, bool) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return metav1.TableRow{}, false
		}
		cells := []any{u.GetName()}
		for i, p := range paths {
			cells = append(cells, customCell(p, cols[i].Type, u.Object, now))
		}
		return metav1.TableRow{Cells: cells}, true
	}}}, nil
}

// customCell is the value of one column for one object (nil: none).
func customCell(p *jsonpath.JSONPath, typ string, obj map[string]any, now time.Time) any {
	results, err := p.FindResults(obj)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	var values []string
	var first any
	for i, r := range results[0] {
		v := r.Interface()
		if i == 0 {
			first = v
		}
		values = append(values, fmt.Sprint(v))
	}
	if len(values) > 1 {
		return strings.Join(values, ",")
	}
	switch typ {
	case "date":
		s, ok := first.(string)
		if !ok {
			return nil
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil
		}
		return duration.HumanDuration(now.Sub(t))
	case "integer":
		switch v := first.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		}
		return nil
	case "number":
		switch v := first.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		}
		return nil
	case "boolean":
		if b, ok := first.(bool); ok {
			return b
		}
		return nil
	}
	return fmt.Sprint(first)
}

// ConvertWith is Convert with a printer of its own (a custom resource's).
func ConvertWith(obj runtime.Object, p Printer, includeObject metav1.IncludeObjectPolicy, now time.Time) (*metav1.Table, error) {
	return convert(obj, p.p, includeObject, now)
}
