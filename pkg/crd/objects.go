package crd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
// obj's status (and managed fields).
func (v *Version) PrepareStatusUpdate(obj, old map[string]any) map[string]any {
	out := runtime.DeepCopyJSON(old)
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
// server does; the API server checks the metadata as for any object.
func (v *Version) Validate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	var errs field.ErrorList
	if v.structural == nil {
		return nil
	}
	errs = append(errs, objectmeta.Validate(ctx, nil, obj, v.structural, true)...)
	if old == nil {
		errs = append(errs, validation.ValidateCustomResource(nil, obj, v.validator)...)
	} else {
		errs = append(errs, validation.ValidateCustomResourceUpdate(nil, obj, old, v.validator)...)
	}
	if v.rules != nil {
		var oldObj any
		if old != nil {
			oldObj = old
		}
		celErrs, _ := v.rules.Validate(ctx, nil, v.structural, obj, oldObj, celCostBudget)
		errs = append(errs, celErrs...)
	}
	return errs
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
