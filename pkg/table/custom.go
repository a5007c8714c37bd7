package table

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"
)

// Printer prints the rows of one kind of object.
type Printer struct{ p printer }

// ForColumns returns the printer of a custom resource: kube-apiserver's
// table convertor of custom resources (k8s.io/apiextensions-apiserver's),
// its Name column then the printer columns of its definition, each cell
// the value at the column's JSON path; a date is an age relative to the
// server's clock (simulated time in a simulation, where the upstream
// convertor would read the wall clock).
func ForColumns(cols []apiextensionsv1.CustomResourceColumnDefinition) (Printer, error) {
	conv, err := tableconvertor.New(cols)
	if err != nil {
		return Printer{}, fmt.Errorf("table: %w", err)
	}
	probe, err := conv.ConvertToTable(context.Background(), &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "-"}}}, nil)
	if err != nil {
		return Printer{}, fmt.Errorf("table: %w", err)
	}
	defs := probe.ColumnDefinitions
	dates := map[int]*jsonpath.JSONPath{} // cell index → the date column's path
	for i, c := range cols {
		if c.Type != "date" {
			continue
		}
		p := jsonpath.New(c.Name).AllowMissingKeys(true)
		if err := p.Parse(fmt.Sprintf("{%s}", c.JSONPath)); err != nil {
			return Printer{}, fmt.Errorf("table: column %s: JSON path %q: %w", c.Name, c.JSONPath, err)
		}
		dates[i+1] = p
	}
	return Printer{printer{columns: defs, row: func(obj runtime.Object, now time.Time) (metav1.TableRow, bool) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return metav1.TableRow{}, false
		}
		t, err := conv.ConvertToTable(context.Background(), u, &metav1.TableOptions{NoHeaders: true})
		if err != nil || len(t.Rows) != 1 {
			return metav1.TableRow{}, false
		}
		cells := t.Rows[0].Cells
		for i, p := range dates {
			if s, ok := cells[i].(string); ok && s != "<invalid>" {
				cells[i] = dateAge(p, u.Object, now)
			}
		}
		return metav1.TableRow{Cells: cells}, true
	}}}, nil
}

// dateAge is the age, at now, of the date at p in obj (as the upstream
// convertor writes one, relative to now rather than to the wall clock).
func dateAge(p *jsonpath.JSONPath, obj map[string]any, now time.Time) any {
	results, err := p.FindResults(obj)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	s, ok := results[0][0].Interface().(string)
	if !ok {
		return nil
	}
	var t metav1.Time
	if err := t.UnmarshalQueryParameter(s); err != nil {
		return "<invalid>"
	}
	return age(t, now)
}

// ConvertWith is Convert with a printer of its own (a custom resource's).
func ConvertWith(obj runtime.Object, p Printer, includeObject metav1.IncludeObjectPolicy, now time.Time) (*metav1.Table, error) {
	return convert(obj, p.p, includeObject, now)
}
