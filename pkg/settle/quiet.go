package settle

import (
	"context"
	"time"

	"github.com/batkube/batkube/pkg/store"
)

// Quiet is the last-resort policy: the scheduler is taken to be done once
// the API has seen no write for Window, and a scheduler is present. It
// knows nothing of the scheduler: a scheduler that thinks longer than the
// window without writing (a loaded machine, a slow algorithm) makes the
// step end before it decides, and the pods it would have bound wait for a
// later instant. Runs report how many steps ended this way.
type Quiet struct {
	Window time.Duration
	now    func() time.Time
}

// NewQuiet returns a Quiet policy with the given window.
func NewQuiet(window time.Duration) *Quiet { return &Quiet{Window: window, now: time.Now} }

// Name implements Policy.
func (q *Quiet) Name() string { return "quiet" }

// Abilities implements Policy: Check is all it does.
func (q *Quiet) Abilities() Abilities { return Abilities{} }

// Observe implements Policy: silence is all it looks at.
func (q *Quiet) Observe(store.Change) {}

// Check implements Policy.
func (q *Quiet) Check(_ context.Context, st State) (Verdict, error) {
	if !st.SchedulerPresent {
		return Verdict{RetryAfter: q.Window, Waiting: "no scheduler has shown itself yet"}, nil
	}
	if since := q.now().Sub(st.LastActivity); since < q.Window {
		return Verdict{RetryAfter: q.Window - since, Waiting: "the API is not quiet yet"}, nil
	}
	return Verdict{Done: true}, nil
}
