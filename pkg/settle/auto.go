package settle

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

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

// End tells the schedulers waiting on an idle signal that the simulation
// is over, so that their long polls return at once.
func (a *Auto) End() {
	if a.signals != nil {
		a.signals.End()
	}
}

// Listening reports whether a scheduler waits on the idle signal or sent
// one within the last d.
func (a *Auto) Listening(d time.Duration) bool { return a.signals != nil && a.signals.Listening(d) }

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

// Probes implements Prober.
func (a *Auto) Probes() int {
	n := 0
	for _, p := range a.exact {
		if pr, ok := p.(Prober); ok {
			n += pr.Probes()
		}
	}
	return n
}

// Wake implements Waker.
func (a *Auto) Wake() <-chan struct{} {
	if a.signals == nil {
		return nil
	}
	return a.signals.Wake()
}

// Open implements Gate.
func (a *Auto) Open() {
	if a.signals != nil {
		a.signals.Open()
	}
}

// Shut implements Gate.
func (a *Auto) Shut() {
	if a.signals != nil {
		a.signals.Shut()
	}
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

// ReleasesGroups implements GroupReleaser: one of the exact policies
// releases pod groups (then the only one to: Hold goes to it).
func (a *Auto) ReleasesGroups() bool { return a.releaser() != nil }

// Hold implements GroupReleaser.
func (a *Auto) Hold(g GroupRef) {
	if r := a.releaser(); r != nil {
		r.Hold(g)
	}
}

func (a *Auto) releaser() GroupReleaser {
	for _, p := range a.exact {
		if r, ok := p.(GroupReleaser); ok && r.ReleasesGroups() {
			return r
		}
	}
	return nil
}

func (a *Auto) note(p Policy) {
	if !slices.Contains(a.used, p.Name()) {
		a.used = append(a.used, p.Name())
	}
}
