package broker

import (
	"fmt"
	"time"
)

// liveness follows whether a scheduler is there: it has shown itself once
// it acted on a pod of the workload (bound it, or marked it unschedulable),
// and it is still there while it holds a watch on pods or waits on the idle
// signal. The scheduler is
// the client (by User-Agent) that binds pods or writes their status, so
// other watchers (kubectl get -w, a monitoring tool) do not hide a
// scheduler that died.
type liveness struct {
	seen bool
	// waitingSince is when pods started waiting for a first sign of life,
	// noWatcherSince when the scheduler stopped watching pods, lastBound
	// when it last bound a pod.
	waitingSince, noWatcherSince, lastBound time.Time
}

// present reports whether a scheduler has shown itself and is still there,
// or waits on a timer of the simulated clock (a time-virtualised
// scheduler).
func (r *run) schedulerPresent() bool {
	return r.opts.Clock.Pending() > 0 || (r.live.seen && r.schedulerListening())
}

// schedulerListening reports whether the scheduler holds a watch on pods,
// or bound a pod, waits on the idle signal or sent one within
// SchedulerTimeout (a script that lists pods and binds them).
func (r *run) schedulerListening() bool {
	if !r.live.lastBound.IsZero() && time.Since(r.live.lastBound) < r.opts.SchedulerTimeout {
		return true
	}
	if listening := r.settle.Abilities().Listening; listening != nil && listening(r.opts.SchedulerTimeout) {
		return true
	}
	return r.api.SchedulerWatching()
}

// checkScheduler reports a scheduler that never came or is gone: pods are
// pending and no scheduler has acted on any for StartTimeout, or the
// scheduler that did has held no watch on pods for SchedulerTimeout.
func (r *run) checkScheduler() error {
	l := &r.live
	if r.opts.Clock.Pending() > 0 {
		// A time-virtualised scheduler waits for its timer: alive, and
		// done deciding until simulated time reaches it.
		l.noWatcherSince, l.waitingSince = time.Time{}, time.Time{}
		return nil
	}
	if !l.seen {
		if l.waitingSince.IsZero() {
			l.waitingSince = time.Now()
		} else if waited := time.Since(l.waitingSince); waited > r.opts.StartTimeout {
			return fmt.Errorf("broker: pods have been pending for %s and no scheduler has bound or examined any: is a scheduler running, pointed at this server, with the pods' schedulerName (%q by default)?",
				waited.Round(time.Second), r.opts.Pods.SchedulerName)
		}
		return nil
	}
	if r.schedulerListening() {
		l.noWatcherSince = time.Time{}
		return nil
	}
	if l.noWatcherSince.IsZero() {
		l.noWatcherSince = time.Now()
		return nil
	}
	if waited := time.Since(l.noWatcherSince); waited > r.opts.SchedulerTimeout {
		return fmt.Errorf("broker: pods are pending and the scheduler has neither watched pods, bound any nor waited on the idle signal for %s: it has exited or crashed (see its log)", waited.Round(time.Second))
	}
	return nil
}
