package crd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/common"
)

// Normalize brings a custom object (its JSON map) into the form it is
// stored in, as the real server's codec does: metadata coerced, unknown
// fields pruned (unless the schema preserves them), defaults applied.
func (v *Version) Normalize(obj map[string]any) error {
	if v.structural == nil {
		return nil
	}
	if err := objectmeta.Coerce(nil, obj, v.structural, true, false); err != nil {
		return err
	}
	pruning.Prune(obj, v.structural, true)
	defaulting.Default(obj, v.structural)
	return nil
}

// NormalizeStatus is Normalize for the object a status update stores
// (PrepareStatusUpdate): its status pruned and defaulted. The rest is the
// stored object's, left as it is (shared with it, not walked again), and
// so is its metadata: the stored object's, coerced when it was stored,
// with the managed fields the field manager wrote in the form coercion
// gives them (unstructured.SetManagedFields converts each entry as
// objectmeta.SetObjectMeta does). Coercing it again would change nothing
// (TestStatusUpdateMetadataIsCoerced) at the cost of a JSON round trip of
// the metadata, managed fields and all, at each status write.
func (v *Version) NormalizeStatus(obj map[string]any) error {
	if v.structural == nil {
		return nil
	}
	status, ok := obj["status"]
	s, known := v.structural.Properties["status"]
	if !ok || !known {
		return nil
	}
	if err := objectmeta.Coerce(field.NewPath("status"), status, &s, false, false); err != nil {
		return err
	}
	pruning.Prune(status, &s, false)
	defaulting.Default(status, &s)
	return nil
}

// PrepareCreate drops what a create cannot set (status, when the status
// subresource is served) and starts the generation at 1.
func (v *Version) PrepareCreate(obj map[string]any) {
	if v.Status {
		delete(obj, "status")
	}
	setGeneration(obj, 1)
}

// PrepareUpdate keeps what an update of the main resource cannot change
// (status, when the status subresource is served) and moves the
// generation on when anything but metadata changed.
func (v *Version) PrepareUpdate(obj, old map[string]any) {
	if v.Status {
		if st, ok := old["status"]; ok {
			obj["status"] = st
		} else {
			delete(obj, "status")
		}
	}
	gen := generation(old)
	if !equality.Semantic.DeepEqual(withoutMetadata(obj), withoutMetadata(old)) {
		gen++
	}
	setGeneration(obj, gen)
}

// PrepareStatusUpdate returns the object a status update stores: old, with
// obj's status (and managed fields). Everything but the status and the
// metadata is old's own, shared with it (a stored object is never
// modified): NormalizeStatus leaves it alone.
func (v *Version) PrepareStatusUpdate(obj, old map[string]any) map[string]any {
	out := make(map[string]any, len(old)+1)
	for k, val := range old {
		out[k] = val
	}
	if meta, ok := old["metadata"].(map[string]any); ok {
		out["metadata"] = runtime.DeepCopyJSONValue(meta)
	}
	if st, ok := obj["status"]; ok {
		out["status"] = st
	} else {
		delete(out, "status")
	}
	if mf, ok := nested(obj, "metadata", "managedFields"); ok {
		if meta, ok := out["metadata"].(map[string]any); ok {
			meta["managedFields"] = mf
		}
	}
	return out
}

// Validate checks a custom object against its version's schema and CEL
// rules (old is the stored object on update, nil on create), as the real
// server does; the API server checks the metadata as for any object. An
// update is validated with ratcheting, as kube-apiserver's (its
// CRDValidationRatcheting, on since 1.30): an error in a part of the
// object left as it was (schema, list types, CEL rules that do not read
// oldSelf) does not fail it. A status update (status true) validates the
// status against the status schema alone, the rest of the object being
// the stored one's.
func (v *Version) Validate(ctx context.Context, obj, old map[string]any, status bool) field.ErrorList {
	var errs field.ErrorList
	if v.structural == nil {
		return nil
	}
	errs = append(errs, objectmeta.Validate(ctx, nil, obj, v.metaSchema, true)...)
	var celOptions []cel.Option
	switch {
	case old == nil:
		errs = append(errs, validation.ValidateCustomResource(nil, obj, v.validator)...)
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
	default:
		correlated := common.NewCorrelatedObject(obj, old, v.tree)
		celOptions = append(celOptions, cel.WithRatcheting(correlated))
		switch {
		case status && v.statusValidator != nil:
			if st, ok := obj["status"]; ok {
				errs = append(errs, validation.ValidateCustomResourceUpdate(field.NewPath("status"), st, old["status"], v.statusValidator,
					validation.WithRatcheting(correlated.Key("status")))...)
			}
		case !status:
			errs = append(errs, validation.ValidateCustomResourceUpdate(nil, obj, old, v.validator, validation.WithRatcheting(correlated))...)
		}
		if listErrs := structurallisttype.ValidateListSetsAndMaps(nil, v.structural, obj); len(listErrs) > 0 &&
			len(structurallisttype.ValidateListSetsAndMaps(nil, v.structural, old)) == 0 {
			errs = append(errs, listErrs...)
		}
	}
	if v.rules != nil {
		if blocking(errs) {
			return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		}
		errs = append(errs, v.celErrors(ctx, obj, old, celOptions)...)
	}
	return errs
}

// celErrors checks obj against the CEL rules: the root rules first on
// their own (rootRules), then the rules below with the budget they left;
// when a root rule does not hold, all of them through the upstream
// validator, which then says why.
func (v *Version) celErrors(ctx context.Context, obj, old map[string]any, options []cel.Option) field.ErrorList {
	var oldObj any
	if old != nil {
		oldObj = old
	}
	if v.root != nil {
		if budget, ok := v.root.hold(ctx, obj, old, celCostBudget); ok {
			if v.root.below == nil {
				return nil
			}
			errs, _ := v.root.below.Validate(ctx, nil, v.structural, obj, oldObj, budget, options...)
			return errs
		}
	}
	errs, _ := v.rules.Validate(ctx, nil, v.structural, obj, oldObj, celCostBudget, options...)
	return errs
}

// blocking reports whether errs hold an error after which the real server
// does not evaluate the CEL rules (they might read a value of the wrong
// type, or one missing).
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// FieldValues calls add with the value of each selectable field of obj
// that it has (as a field selector compares them: strings, integers and
// booleans in their JSON form).
func (v *Version) FieldValues(obj map[string]any, add func(name, value string)) {
	for _, path := range v.SelectableFields {
		x, ok := nested(obj, strings.Split(path, ".")...)
		if !ok {
			continue
		}
		switch x := x.(type) {
		case string:
			add(path, x)
		case bool:
			add(path, strconv.FormatBool(x))
		case int64:
			add(path, strconv.FormatInt(x, 10))
		case float64:
			add(path, strconv.FormatFloat(x, 'f', -1, 64))
		default:
			add(path, fmt.Sprint(x))
		}
	}
}

func nested(obj map[string]any, path ...string) (any, bool) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func withoutMetadata(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "metadata" {
			out[k] = v
		}
	}
	return out
}

func generation(obj map[string]any) int64 {
	g, _ := nested(obj, "metadata", "generation")
	switch g := g.(type) {
	case int64:
		return g
	case float64:
		return int64(g)
	}
	return 0
}

func setGeneration(obj map[string]any, g int64) {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	meta["generation"] = g
}
