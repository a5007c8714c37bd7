package store

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Selection says which objects of a resource a List or a Watch is about.
// Its zero value selects them all.
type Selection struct {
	Namespace string          // "": every namespace
	Label     labels.Selector // nil or empty: no filter
	Field     fields.Selector // nil or empty: no filter
}

// predicate selects objects by label and field selectors (the namespace is
// handled by key ranges).
type predicate struct {
	gr     schema.GroupResource
	label  labels.Selector // nil: every object
	field  fields.Selector // nil: every object
	fields FieldsFunc
}

func newPredicate(gr schema.GroupResource, sel Selection, fn FieldsFunc) predicate {
	p := predicate{gr: gr, fields: fn}
	if sel.Label != nil && !sel.Label.Empty() {
		p.label = sel.Label
	}
	if sel.Field != nil && !sel.Field.Empty() {
		p.field = sel.Field
	}
	return p
}

// selects reports whether the predicate filters at all.
func (p *predicate) selects() bool { return p.label != nil || p.field != nil }

func (p *predicate) matches(st *Stored) bool {
	if st == nil {
		return false
	}
	if p.label != nil && !p.label.Matches(labels.Set(st.obj.GetLabels())) {
		return false
	}
	return p.field == nil || p.field.Matches(st.fieldSet(p.gr, p.fields))
}
