package broker

import (
	"context"
	"time"

	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/simtime/simclock"
	"github.com/batkube/batkube/pkg/store"
)

// settler runs a step's wait for the scheduler, asking the run's policy.
type settler struct {
	policy settle.Policy
	stats  settle.Stats
	// last is how the latest step's wait ended.
	last settle.Reason
	// rv is the latest pod or node change taken in; storeRV and activity
	// the latest store write noticed (any resource) and when.
	rv       uint64
	storeRV  uint64
	activity time.Time
	// released is the store's resourceVersion and the simulated time at
	// the latest release of the controllers' pauses (releasePauses).
	released struct {
		rv uint64
		at time.Duration
	}
}

// releasePauses ends the controllers' scheduling-loop pauses (Kueue's 1 to
// 10 ms between two cycles that admitted nothing, simclock.Pause) before
// their instant, once the barrier proved every process idle, if a watched
// resource (rv: store.LatestWatchedRV) or the clock moved since the last
// release. It reports whether it released any: the processes then have a
// cycle to run.
//
// Exact: at a release each process had handled every event up to rv, so a
// loop's next cycle sees all there is to see at this instant; a cycle run
// again with nothing written that a process watches and no time passed
// since would decide as the last one did (the loop's state changes only
// through the API's events and its timers, which fire only as time
// passes). Without the release, a loop whose head waits for room (Kueue's
// StrictFIFO) would cost a step every 10 simulated ms; with pauses that
// take no time, it would spin. Writes no one watches do not count: the
// Events a cycle records (Kueue's "couldn't assign flavors" on each
// Workload it could not admit) would otherwise release the next cycle,
// which records them again, until client-go's event spam filter drops
// them (25 per object): a loop of cycles that decide nothing new.
func (s *settler) releasePauses(clock *simclock.Clock, rv uint64) bool {
	at := clock.Elapsed()
	if clock.Pauses() == 0 || (s.released.rv == rv && s.released.at == at) {
		return false
	}
	s.released.rv, s.released.at = rv, at
	if clock.ReleasePauses() == 0 {
		return false
	}
	s.stats.PauseReleases++
	return true
}

func (s *settler) observe(c *store.Change) {
	s.policy.Observe(*c)
	if c.GR != podGroupsGVR.GroupResource() {
		s.rv = c.RV
	}
}

// noticeActivity notes a write to the store since the last look.
func (s *settler) noticeActivity(st *store.Store) {
	if rv := st.CurrentRV(); rv != s.storeRV {
		s.storeRV, s.activity = rv, time.Now()
	}
}

// wait takes in what clients do until the scheduler is done at this
// instant: at once when no pod is pending (and no timer of a
// time-virtualised scheduler fired: woken), else when the policy says so,
// or after MaxSettle of wall time.
func (s *settler) wait(ctx context.Context, r *run, now float64, woken bool) error {
	end := func(reason settle.Reason) error {
		s.last = reason
		s.stats.Add(reason)
		r.log.Debug("step settled", "simulatedTime", now, "reason", reason, "pending", r.jobs.pending, "rv", s.rv)
		return nil
	}
	if _, err := r.takeIn(ctx); err != nil {
		return err
	}
	barrier := r.opts.Controllers
	if r.jobs.pending == 0 && !woken && barrier == nil {
		return end(settle.NothingPending)
	}
	if g, ok := s.policy.(settle.Gate); ok {
		g.Open()
		defer g.Shut()
	}
	start := time.Now()
	s.noticeActivity(r.store)
	s.activity = start // the step's own writes
	deadline := time.NewTimer(r.opts.MaxSettle)
	defer deadline.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	var wake <-chan struct{}
	if w, ok := s.policy.(settle.Waker); ok {
		wake = w.Wake()
	}
	_, timers := r.opts.Clock.TimerActivity()
	// The controllers' barrier holds at barrierRV (proven), with
	// unproven saying why it could not be shown on this system.
	var barrierRV uint64
	proven, unproven := false, ""
	var barrierBackoff time.Duration
	for {
		if _, err := r.takeIn(ctx); err != nil {
			return err
		}
		s.noticeActivity(r.store)
		if barrier != nil && (!proven || r.store.CurrentRV() != barrierRV) {
			bv, err := barrier.Check(ctx)
			if err != nil {
				return err
			}
			s.stats.BarrierChecks++
			wait := barrierBackoff
			if owed := r.owedInWallTime(); bv.Idle && owed != "" {
				// Idle on a timer of the controllers' own, which ends
				// in a write to a pod or a Job (taken in): no need to
				// look at the process meanwhile.
				bv, wait = settle.BarrierVerdict{Waiting: owed}, time.Second
			} else {
				barrierBackoff = min(max(2*barrierBackoff, 100*time.Microsecond), 10*time.Millisecond)
				wait = barrierBackoff
			}
			if !bv.Idle {
				proven = false
				retry.Reset(wait)
				select {
				case <-r.intake.Ready():
				case <-retry.C:
				case <-deadline.C:
					r.log.Info("the controllers' time for this step is up (--settle-max): time moves on although they may not be done", "simulatedTime", now, "controllers", barrier.Name(), "waiting", bv.Waiting, "after", time.Since(start))
					return end(settle.MaxWait)
				case <-ctx.Done():
					return ctx.Err()
				}
				retry.Stop()
				continue
			}
			barrierBackoff, proven, barrierRV, unproven = 0, true, bv.RV, bv.Unproven
			if s.releasePauses(r.opts.Clock, r.store.LatestWatchedRV()) {
				proven = false // the loops' next cycles are to be waited for
			}
			continue // take in what the controllers did before the proof
		}
		pending := r.jobs.pending > 0
		if !pending && !woken {
			if unproven != "" {
				r.log.Debug("step not proven exact", "simulatedTime", now, "why", unproven)
				return end(settle.Unproven)
			}
			return end(settle.NothingPending)
		}
		if pending {
			if err := r.checkScheduler(); err != nil {
				return err
			}
		}
		s.stats.Checks++
		v, err := s.policy.Check(ctx, settle.State{RV: s.rv, LastActivity: s.activity, Since: start, SchedulerPresent: r.schedulerPresent()})
		if err != nil {
			return err
		}
		if v.Done {
			// The verdict compared the scheduler's state with the changes
			// taken in before it: any change since (a binding that landed
			// while the policy looked) voids it.
			if n, err := r.takeIn(ctx); err != nil {
				return err
			} else if n > 0 {
				continue
			}
			if barrier != nil && r.store.CurrentRV() != barrierRV {
				continue // the controllers may have something new to do
			}
			switch {
			case v.Exact && unproven != "":
				r.log.Debug("step not proven exact", "simulatedTime", now, "why", unproven)
				return end(settle.Unproven)
			case v.Exact:
				return end(settle.Idle)
			case v.Unproven != "":
				r.log.Debug("step not proven exact", "simulatedTime", now, "why", v.Unproven)
				return end(settle.Unproven)
			}
			return end(settle.Silent)
		}
		if len(v.Groups) > 0 {
			if err := r.actOnGroups(ctx, v.Groups); err != nil {
				return err
			}
			s.stats.Releases += len(v.Groups)
			for _, a := range v.Groups {
				if a.Renew {
					s.stats.Renewals++
				}
			}
			s.activity = time.Now()
			continue
		}
		if v.RetryAfter > 0 {
			retry.Reset(v.RetryAfter)
		}
		select {
		case <-r.intake.Ready():
		case <-r.terminating.ready:
		case <-wake:
		case <-timers:
			// A scheduler set or cancelled a timer: it is still acting.
			_, timers = r.opts.Clock.TimerActivity()
			s.activity = time.Now()
		case <-retry.C:
		case <-deadline.C:
			if pending && !r.schedulerPresent() {
				// Not a slow scheduler but none (yet, or any more): time
				// must not move on; checkScheduler bounds the wait.
				deadline.Reset(r.opts.MaxSettle)
				continue
			}
			r.log.Info("the scheduler's time for this step is up (--settle-max): time moves on although the scheduler may not be done", "simulatedTime", now, "waiting", v.Waiting, "after", time.Since(start))
			return end(settle.MaxWait)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
