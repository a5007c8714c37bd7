package broker

import (
	"context"

	"github.com/batkube/batkube/pkg/batsim"
)

// The end of a simulation cut at Options.EndAt. Batsim ends a simulation
// only once every job it knows is over, so the broker ends it in the
// protocol's terms: at the first step at or after EndAt it rejects the
// jobs still pending and kills the running ones (Batsim then reports them
// killed, at EndAt), and it rejects every job submitted later; timed
// objects still to create are dropped, and with dynamic jobs it tells
// Batsim that no more will be registered (pods created later are
// refused). The steps from then on do not wait for the scheduler or the
// controllers: what they do after EndAt is not part of the run.

// endDue reports whether the run must end at this step.
func (r *run) endDue(now float64) bool {
	return !r.ended && r.opts.EndAt > 0 && r.opts.EndAt.Seconds()-now < callNoise
}

// endRun ends the simulation at now (see above).
func (r *run) endRun(ctx context.Context, now float64) {
	r.ended = true
	pending := r.jobs.pendingJobs()
	for _, j := range pending {
		r.reject(ctx, j)
	}
	var running int
	for _, j := range r.jobs.sortedByID() {
		if j.phase == jobRunning {
			r.kill(j)
			running++
		}
	}
	dropped := len(r.objects)
	r.objects = nil
	if r.dynamicEnabled.Load() && !r.registrationOK.Load() {
		r.step.decisions = append(r.step.decisions, batsim.Notify{Type: batsim.RegistrationFinished})
		r.registrationOK.Store(true)
	}
	r.log.Info("ending the simulation (--end-at)", "simulatedTime", now,
		"pendingRejected", len(pending), "runningKilled", running, "timedObjectsDropped", dropped)
}

// endAtWakeUp asks for a call at EndAt while the run has work left that
// could go past it, so that it ends there even without a Batsim event at
// that instant.
func (r *run) endAtWakeUp(replyNow float64) {
	if r.opts.EndAt <= 0 || r.ended {
		return
	}
	if at := r.opts.EndAt.Seconds(); at > replyNow && (r.jobs.pending > 0 || r.jobs.running > 0 || !r.noMoreJobs || len(r.objects) > 0 || len(r.awaiting) > 0) {
		r.callAt(at)
	}
}
