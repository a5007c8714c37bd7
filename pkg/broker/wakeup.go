package broker

import (
	"context"
	"math"
	"time"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/simtime/simclock"
)

// wakeups are the calls (CALL_ME_LATER) the broker asks Batsim for. A
// simulation moves from one Batsim event to the next: the broker asks for
// a call only when something can happen in between that Batsim does not
// know of:
//   - a timer of a time-virtualised scheduler (its instant);
//   - pods pending while nothing runs and no job is left to submit: each
//     job is rejected once pending for PendingTimeout;
//   - pods pending when the policy could not tell the scheduler was idle
//     (it settled on silence or on MaxSettle), or when clients may create
//     pods (dynamic jobs): calls that back off from BackoffMin to
//     BackoffMax, so that a scheduler that polls on its own gets its
//     chances. The back-off starts again whenever a pod is bound or room
//     is freed.
type wakeups struct {
	backoff time.Duration
	// nextCall is the earliest CALL_ME_LATER asked for and not yet
	// answered; 0 if none.
	nextCall float64
	// earliest is the earliest instant a call of this step may be asked
	// for: callNoise after the reply's now. Batsim refuses a call that is
	// not after its clock when the call reaches its server, and its
	// messages between actors take time (the master host's links) that
	// the reply's now does not show: a call asked a nanosecond after now
	// (a timer due then) was refused at now + 261 ns. Asked callNoise
	// later, the call fires every timer due by then (called).
	earliest float64
}

// callNoise is how far (seconds) a REQUESTED_CALL's now may fall before the
// instant asked for (float rounding through Batsim).
const callNoise = 1e-6

// called records a REQUESTED_CALL at now.
func (w *wakeups) called(clock *simclock.Clock, now float64) {
	if w.nextCall-now < callNoise {
		// The call asked for; rounding may put now a hair before the
		// timer it was asked for.
		clock.Advance(max(now, w.nextCall))
		w.nextCall = 0
	}
}

// scheduleWakeUps asks for the calls the run needs after a step at now
// (replied at replyNow).
func (r *run) scheduleWakeUps(now, replyNow float64) {
	r.wakeups.earliest = replyNow + callNoise
	r.pendingWakeUps(now, replyNow)
	r.timerWakeUp(replyNow)
	r.objectWakeUp(replyNow)
	r.nodeReadyWakeUp(replyNow)
	r.lingerWakeUp(now, replyNow)
	r.endAtWakeUp(replyNow)
}

// callAt asks Batsim for a REQUESTED_CALL at `at`, unless an earlier one is
// already asked for.
func (r *run) callAt(at float64) {
	at = max(at, r.wakeups.earliest)
	if w := &r.wakeups; w.nextCall == 0 || w.nextCall > at {
		r.step.decisions = append(r.step.decisions, batsim.CallMeLater{At: at})
		w.nextCall = at
	}
}

// timerWakeUp asks for a call at the next timer of a time-virtualised
// scheduler or of a controller, as long as the simulation has jobs to run
// (a scheduler's periodic timer must not keep a finished simulation
// alive), or at the controllers' next work while Jobs are unfinished.
func (r *run) timerWakeUp(replyNow float64) {
	if r.noMoreJobs && r.jobs.pending == 0 && r.jobs.running == 0 {
		if at, ok := r.controllersOwe(); ok && at > replyNow {
			r.callAt(at)
		}
		return
	}
	at, ok := r.opts.Clock.NextTimerSeconds()
	if !ok || at <= replyNow {
		return
	}
	r.callAt(at)
}

func (r *run) pendingWakeUps(now, replyNow float64) {
	w := &r.wakeups
	if r.jobs.pending == 0 {
		w.backoff = 0
		return
	}
	if r.deadlocked() {
		r.timeoutCall(now)
	}
	polling := r.settle.Last() == settle.Silent || r.settle.Last() == settle.MaxWait || r.dynamicEnabled.Load()
	if !polling || r.opts.Clock.Pending() > 0 {
		// The scheduler is known to be done until something changes, or
		// a time-virtualised scheduler decides at its timers, which
		// timerWakeUp asks for: no need to poll.
		w.backoff = 0
		return
	}
	if r.step.bound || r.step.freed || w.backoff == 0 {
		w.backoff = r.opts.BackoffMin
	} else {
		w.backoff = min(2*w.backoff, r.opts.BackoffMax)
	}
	r.callAt(replyNow + w.backoff.Seconds())
}

// deadlocked reports whether nothing can free room for the pending jobs
// any more: nothing runs and no job is left to submit.
func (r *run) deadlocked() bool {
	return r.jobs.pending > 0 && r.jobs.running == 0 && r.noMoreJobs
}

// rejectTimedOut rejects, when nothing can free room any more, the jobs
// pending for PendingTimeout, in submission order, and stops after one that
// held part of the nodes: that job's pods leave room that another job may
// fit in at this very instant, and the scheduler must get its chance
// before the next is rejected. It reports whether it stopped so.
func (r *run) rejectTimedOut(ctx context.Context, now float64) (freed bool) {
	if !r.deadlocked() {
		return false
	}
	timeout := r.opts.PendingTimeout.Seconds()
	for _, j := range r.jobs.pendingJobs() {
		if due := j.pendingSince + timeout; due-now >= callNoise {
			continue
		}
		held := len(j.nodes) > 0
		r.log.Warn("rejecting a job that stayed pending with nothing left to free room for it",
			"job", j.id, "pendingFor", now-j.pendingSince, "boundPods", len(j.nodes))
		r.reject(ctx, j)
		if held {
			r.step.freed = true
			return true
		}
	}
	return false
}

// timeoutCall asks for a call when the next pending job times out.
func (r *run) timeoutCall(now float64) {
	timeout := r.opts.PendingTimeout.Seconds()
	next := math.Inf(1)
	for _, j := range r.jobs.pendingJobs() {
		next = min(next, j.pendingSince+timeout)
	}
	if !math.IsInf(next, 1) {
		r.callAt(max(next, now))
	}
}
