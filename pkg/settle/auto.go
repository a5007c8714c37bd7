package settle

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/batkube/batkube/pkg/store"
)

// Auto combines the policies of a run: the exact ones it is given (the
// kube-scheduler policy when the run has one), the idle signals once a
// scheduler has sent one, and silence when neither applies. With several
// exact policies active, a step ends when all of them say so.
type Auto struct {
	exact   []Policy
	signals *Signals
	quiet   *Quiet
	// used names the policies that have decided a step, for Stats.
	used []string
}

// NewAuto combines the given policies; signals and quiet may be nil (no
// signals; no fallback: the step then waits for settle-max).
func NewAuto(signals *Signals, quiet *Quiet, exact ...Policy) *Auto {
	return &Auto{exact: exact, signals: signals, quiet: quiet}
}

// Name implements Policy: the policies that have decided steps so far,
// joined by "+" (e.g. "kube-scheduler", "signal", "quiet").
func (a *Auto) Name() string {
	if len(a.used) > 0 {
		return strings.Join(a.used, "+")
	}
	var names []string
	for _, p := range a.exact {
		names = append(names, p.Name())
	}
	if len(names) == 0 && a.signals != nil && (a.signals.Active() || a.quiet == nil) {
		names = append(names, a.signals.Name())
	}
	if len(names) == 0 && a.quiet != nil {
		names = append(names, a.quiet.Name())
	}
	return strings.Join(names, "+")
}

// Observe implements Policy. The idle signals are about pods and nodes
// only (a scheduler states the resourceVersion it has seen of them).
func (a *Auto) Observe(c store.Change) {
	for _, p := range a.exact {
		p.Observe(c)
	}
	if a.signals != nil && (c.GR.Resource == "pods" || c.GR.Resource == "nodes") && c.GR.Group == "" {
		a.signals.Observe(c)
	}
}

// Abilities implements Policy: the idle signals' (waking a step, gating
// the schedulers, ending their waits, telling whether one is alive), the
// exact policies' probes, summed, and the hold of pod groups of the one
// exact policy that releases them.
func (a *Auto) Abilities() Abilities {
	var ab Abilities
	if a.signals != nil {
		ab = a.signals.Abilities()
	}
	var probes []func() int
	for _, p := range a.exact {
		pa := p.Abilities()
		if pa.Probes != nil {
			probes = append(probes, pa.Probes)
		}
		if pa.Hold != nil && ab.Hold == nil {
			ab.Hold = pa.Hold
		}
	}
	if len(probes) > 0 {
		ab.Probes = func() int {
			n := 0
			for _, f := range probes {
				n += f()
			}
			return n
		}
	}
	return ab
}

// Check implements Policy.
func (a *Auto) Check(ctx context.Context, st State) (Verdict, error) {
	active := a.exact
	if a.signals != nil && a.signals.Active() {
		active = append(active[:len(active):len(active)], a.signals)
	}
	if len(active) == 0 {
		if a.quiet == nil {
			return Verdict{Waiting: "no policy can tell whether the scheduler is done"}, nil
		}
		v, err := a.quiet.Check(ctx, st)
		if v.Done {
			a.note(a.quiet)
		}
		return v, err
	}
	done := Verdict{Done: true, Exact: true}
	for _, p := range active {
		v, err := p.Check(ctx, st)
		if err != nil || !v.Done {
			return v, err
		}
		if !v.Exact {
			done.Exact = false
			done.Unproven = strings.Join(slices.DeleteFunc([]string{done.Unproven, cmp.Or(v.Unproven, p.Name()+": not exact")}, func(s string) bool { return s == "" }), "; ")
		}
	}
	for _, p := range active {
		a.note(p)
	}
	return done, nil
}

func (a *Auto) note(p Policy) {
	if !slices.Contains(a.used, p.Name()) {
		a.used = append(a.used, p.Name())
	}
}
