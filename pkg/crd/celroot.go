package crd

import (
	"context"
	"math"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/features"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/utils/ptr"
)

// The CEL rules at the root of a custom resource's schema, evaluated here
// rather than by the apiextensions validator when they all hold.
//
// The upstream validator adapts the schema to CEL's values with
// model.Structural, whose Properties builds a map of every property's
// adaptor, copying each property's schema, at every field a rule reads.
// Root rules read the whole object: Kueue's Workload has seven, transition
// rules that look into status.conditions of self and oldSelf several times
// each: over a Workload's create and three status applies
// (BenchmarkServeKueueWorkload) those maps were 41 % of the bytes the
// server allocated, and the CEL rules 16 % of its CPU samples. Here the
// root rules run on the version's schemaTree, built once.
//
// Only the outcome "every root rule holds" is taken from here: the rules
// are the validator's own programs (cel.Compile, as the validator compiles
// them), run with the same variables and budget, and the rest of the
// validation is the upstream validator's (its nodes below the root, with
// the budget the root rules left). When a rule does not hold, fails or
// would exceed the budget, the whole object is validated again by the
// upstream validator, whose errors, warnings and ratcheting are then the
// answer: nothing here decides an error.

// rootRules are a schema's root rules, compiled.
type rootRules struct {
	rules    apiextensionsv1.ValidationRules
	compiled []cel.CompilationResult
	// schema is the root's adaptor, as the validator's root sees it (with
	// apiVersion, kind and metadata's name and generateName).
	schema common.Schema
	// below validates the rest: the upstream validator's nodes under the
	// root, without the root's rules (nil when there are none).
	below *cel.Validator
}

// newRootRules compiles the root rules of s, whose tree is tree and whole
// validator full; it returns nil when the root has no rules or they do not
// compile (the upstream validator then reports it).
func newRootRules(s *structuralschema.Structural, tree *schemaTree, full *cel.Validator, perCallLimit uint64) *rootRules {
	if full == nil || len(s.XValidations) == 0 {
		return nil
	}
	compiled, err := cel.Compile(s, model.SchemaDeclType(s, true), perCallLimit,
		environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), cel.StoredExpressionsEnvLoader())
	if err != nil {
		return nil
	}
	for _, c := range compiled {
		if c.Error != nil {
			return nil
		}
	}
	r := &rootRules{rules: s.XValidations, compiled: compiled, schema: tree.withTypeAndObjectMeta(s)}
	if full.Items != nil || full.AdditionalProperties != nil || len(full.Properties) > 0 || len(full.AllOfValidators) > 0 {
		r.below = &cel.Validator{Items: full.Items, Properties: full.Properties, AllOfValidators: full.AllOfValidators,
			AdditionalProperties: full.AdditionalProperties, Schema: full.Schema}
	}
	return r
}

// hold evaluates the root rules on obj (old: the stored object on update,
// nil on create) within budget. It reports whether every rule that the
// validator would evaluate held, and the budget left.
func (r *rootRules) hold(ctx context.Context, obj, old map[string]any, budget int64) (int64, bool) {
	if budget <= 0 {
		return budget, false
	}
	act := &ruleActivation{self: common.UnstructuredToVal(obj, r.schema)}
	if old != nil {
		act.oldSelf, act.hasOldSelf = common.UnstructuredToVal(old, r.schema), true
	}
	var optional *ruleActivation // for rules with optionalOldSelf, made at the first
	for i, c := range r.compiled {
		if c.Program == nil {
			continue // an empty rule
		}
		optionalOldSelf := ptr.Deref(r.rules[i].OptionalOldSelf, false)
		if c.UsesOldSelf && old == nil &&
			(!optionalOldSelf || !utilfeature.DefaultFeatureGate.Enabled(features.CRDValidationRatcheting)) {
			continue // a transition rule, on create
		}
		var a interpreter.Activation = act
		if optionalOldSelf {
			if optional == nil {
				optional = &ruleActivation{self: act.self, hasOldSelf: true, oldSelf: types.OptionalNone}
				if old != nil {
					optional.oldSelf = types.OptionalOf(act.oldSelf)
				}
			}
			a = optional
		}
		result, details, err := c.Program.ContextEval(ctx, a)
		if details == nil || details.ActualCost() == nil {
			return budget, false
		}
		cost := *details.ActualCost()
		if cost > math.MaxInt64 || int64(cost) > budget {
			return budget, false
		}
		budget -= int64(cost)
		if err != nil || result != types.True {
			return budget, false
		}
	}
	return budget, true
}

// ruleActivation binds self and oldSelf, as the validator's.
type ruleActivation struct {
	self, oldSelf ref.Val
	hasOldSelf    bool
}

func (a *ruleActivation) ResolveName(name string) (any, bool) {
	switch name {
	case cel.ScopedVarName:
		return a.self, true
	case cel.OldScopedVarName:
		return a.oldSelf, a.hasOldSelf
	}
	return nil, false
}

func (a *ruleActivation) Parent() interpreter.Activation { return nil }
