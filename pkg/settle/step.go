package settle

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/store"
)

// Cluster is what a step's wait needs of the simulation that runs it (the
// broker).
type Cluster interface {
	// TakeIn applies what clients wrote since the last call (the changes
	// of pods and nodes, which it hands to Settler.Observe, and the pods
	// they delete) and reports how many things it took.
	TakeIn(ctx context.Context) (int, error)
	// Written has a token when clients wrote something not taken in yet;
	// Terminating when a client deleted a bound pod.
	Written() <-chan struct{}
	Terminating() <-chan struct{}
	// Pending counts the pods waiting for a scheduler.
	Pending() int
	// SchedulerPresent: a scheduler has shown itself and is still there.
	SchedulerPresent() bool
	// CheckScheduler fails when pods are pending and no scheduler came,
	// or the one that came is gone (it bounds a wait that would be
	// endless).
	CheckScheduler() error
	// ReleaseGroups applies a verdict's pod group actions.
	ReleaseGroups(ctx context.Context, actions []GroupAction) error
	// OwedInWallTime says what the controllers still have to do at this
	// instant on timers of wall time ("" if nothing).
	OwedInWallTime() string
	// StoreRV is the store's latest resourceVersion; WatchedRV the
	// latest of a resource a process watches (store.LatestWatchedRV).
	StoreRV() uint64
	WatchedRV() uint64
	// FireImminent fires the timers due less than Batsim's resolution
	// after the step's instant, the clock moved to theirs, as a real
	// cluster's would fire while its other work goes on: fired says
	// whether any did, wake whether one was a scheduler's.
	FireImminent() (fired, wake bool)
}

// Clock is the simulated clock as a step's wait sees it
// (simclock.Clock).
type Clock interface {
	// Elapsed is the simulated time.
	Elapsed() time.Duration
	// Pauses counts the scheduling loops' pauses waiting on the clock;
	// ReleasePauses ends them before their instant, and counts them;
	// TimePauses makes them ask for a call at their own instant.
	Pauses() int
	ReleasePauses() int
	TimePauses() int
	// TimerActivity has a token when a timer is set or cancelled.
	TimerActivity() (count uint64, changed <-chan struct{})
}

// Settler runs each step's wait for the scheduler (its Policy) and the
// controllers (their Barrier), decides when the step ends and says how:
// exact (the scheduler known idle, or no pod pending), or not (silence,
// the bound of wall time, a proof the system cannot give). One goroutine
// (the broker's) uses it.
type Settler struct {
	policy    Policy
	abilities Abilities
	opts      SettlerOptions
	stats     Stats
	// last is how the latest step's wait ended.
	last Reason
	// rv is the latest pod or node change taken in; storeRV and activity
	// the latest store write noticed (any resource) and when.
	rv       uint64
	storeRV  uint64
	activity time.Time
	// released is the watched resourceVersion and the simulated time at
	// the latest release of the controllers' pauses (releasePauses), and
	// how many releases that instant has had.
	released struct {
		rv    uint64
		at    time.Duration
		count int
		// timed: the instant's releases are spent (TimedPauses counted).
		timed bool
	}
}

// SettlerOptions are a run's settings for its steps' waits.
type SettlerOptions struct {
	// Barrier, when not nil, is the controllers' (package controllers):
	// every step waits for it, pods pending or not.
	Barrier Barrier
	// Clock is the run's simulated clock.
	Clock Clock
	// MaxSettle bounds a step's wait in wall time (--settle-max).
	MaxSettle time.Duration
	// MaxPauseReleases bounds the releases of the controllers' pauses
	// at one simulated instant (--pause-releases; 0: no bound). Beyond
	// it the pauses take their own time (releasePauses).
	MaxPauseReleases int
	Logger           *slog.Logger
}

// NewSettler returns the settler of a run with the given policy.
func NewSettler(policy Policy, opts SettlerOptions) *Settler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Settler{policy: policy, abilities: policy.Abilities(), opts: opts, stats: Stats{Policy: policy.Name()}}
}

// Abilities is what the run's policy does beside Check.
func (s *Settler) Abilities() Abilities { return s.abilities }

// Last is how the latest step's wait ended.
func (s *Settler) Last() Reason { return s.last }

// Stats counts the steps so far by how they ended, with the policy's name
// and probes.
func (s *Settler) Stats() Stats {
	st := s.stats
	st.Policy = s.policy.Name()
	if s.abilities.Probes != nil {
		st.Probes = s.abilities.Probes()
	}
	return st
}

// Observe takes in one change of a pod, a node or a pod group, in
// resourceVersion order.
func (s *Settler) Observe(c store.Change) {
	s.policy.Observe(c)
	if c.GR != podGroupsGR {
		s.rv = c.RV
	}
}

// podGroupsGR: pod groups' changes are the policy's, not the step's
// resourceVersion (State.RV).
var podGroupsGR = schema.GroupResource{Group: "scheduling.k8s.io", Resource: "podgroups"}

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
//
// The releases of one instant are bounded (MaxPauseReleases): a loop
// whose every cycle writes (Kueue preempting a Workload that its job
// reconciler then gives back, admitted again at the next cycle, preempted
// again) would otherwise run at one instant for ever, each release
// granted by the previous cycle's own write, while the other processes'
// retries wait for time to pass. Beyond the bound the pauses take their
// own time, as on a real cluster (TimePauses: a call at each pause's
// instant, 1 to 10 ms later): a cycle then comes no later than it would
// there, so the step stays exact.
func (s *Settler) releasePauses(rv uint64) bool {
	clock := s.opts.Clock
	at := clock.Elapsed()
	if clock.Pauses() == 0 || (s.released.rv == rv && s.released.at == at) {
		return false
	}
	if s.released.at != at {
		s.released.count, s.released.timed = 0, false
	}
	s.released.rv, s.released.at = rv, at
	if limit := s.opts.MaxPauseReleases; limit > 0 && s.released.count >= limit {
		if clock.TimePauses() > 0 && !s.released.timed {
			s.released.timed = true
			s.stats.TimedPauses++
			s.opts.Logger.Info("the controllers' scheduling loops ran their bound of cycles at this instant (--pause-releases): their pauses now take their own time",
				"simulatedTime", at.Seconds(), "releases", s.released.count)
		}
		return false
	}
	if clock.ReleasePauses() == 0 {
		return false
	}
	s.released.count++
	s.stats.PauseReleases++
	return true
}

// noticeActivity notes a write to the store since the last look.
func (s *Settler) noticeActivity(c Cluster) {
	if rv := c.StoreRV(); rv != s.storeRV {
		s.storeRV, s.activity = rv, time.Now()
	}
}

// Wait takes in what clients do until the scheduler and the controllers
// are done at the instant now: at once when no pod is pending, no
// controller runs and no timer of a time-virtualised scheduler fired
// (woken); else when the barrier holds and the policy says so at one
// state of the store, or after MaxSettle of wall time.
func (s *Settler) Wait(ctx context.Context, c Cluster, now float64, woken bool) error {
	log := s.opts.Logger
	end := func(reason Reason, why string) error {
		s.last = reason
		s.stats.Add(reason)
		if why != "" {
			log.Debug("step not proven exact", "simulatedTime", now, "why", why)
		}
		log.Debug("step settled", "simulatedTime", now, "reason", reason, "pending", c.Pending(), "rv", s.rv)
		return nil
	}
	if _, err := c.TakeIn(ctx); err != nil {
		return err
	}
	barrier := s.opts.Barrier
	if c.Pending() == 0 && !woken && barrier == nil {
		return end(NothingPending, "")
	}
	if g := s.abilities.Gate; g != nil {
		g.Open()
		defer g.Shut()
	}
	start := time.Now()
	s.noticeActivity(c)
	s.activity = start // the step's own writes
	deadline := time.NewTimer(s.opts.MaxSettle)
	defer deadline.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	_, timers := s.opts.Clock.TimerActivity()
	// The controllers' barrier holds at barrierRV (proven), with
	// unproven saying why it could not be shown on this system.
	var barrierRV uint64
	proven, unproven := false, ""
	var barrierBackoff time.Duration
	for {
		if _, err := c.TakeIn(ctx); err != nil {
			return err
		}
		s.noticeActivity(c)
		if fired, wake := c.FireImminent(); fired {
			// A timer set for a nanosecond on (Karpenter's provisioner
			// requeues itself so) fires now, not after a proof that all
			// else is done: one proof then covers both instants.
			proven, woken = false, woken || wake
			s.stats.Imminent++
		}
		if barrier != nil && (!proven || c.StoreRV() != barrierRV) {
			bv, err := barrier.Check(ctx)
			if err != nil {
				return err
			}
			s.stats.BarrierChecks++
			wait := barrierBackoff
			if owed := c.OwedInWallTime(); bv.Idle && owed != "" {
				// Idle on a timer of the controllers' own, which ends
				// in a write to a pod or a Job (taken in): no need to
				// look at the process meanwhile.
				bv, wait = BarrierVerdict{Waiting: owed}, time.Second
			} else {
				barrierBackoff = min(max(2*barrierBackoff, 100*time.Microsecond), 10*time.Millisecond)
				wait = barrierBackoff
			}
			if !bv.Idle {
				proven = false
				retry.Reset(wait)
				select {
				case <-c.Written():
				case <-retry.C:
				case <-deadline.C:
					log.Info("the controllers' time for this step is up (--settle-max): time moves on although they may not be done", "simulatedTime", now, "controllers", barrier.Name(), "waiting", bv.Waiting, "after", time.Since(start))
					return end(MaxWait, "")
				case <-ctx.Done():
					return ctx.Err()
				}
				retry.Stop()
				continue
			}
			barrierBackoff, proven, barrierRV, unproven = 0, true, bv.RV, bv.Unproven
			if s.releasePauses(c.WatchedRV()) {
				proven = false // the loops' next cycles are to be waited for
			}
			continue // take in what the controllers did before the proof
		}
		pending := c.Pending() > 0
		var v Verdict
		if !pending && !woken {
			deciding := s.deciding()
			if deciding == "" {
				if unproven != "" {
					return end(Unproven, unproven)
				}
				return end(NothingPending, "")
			}
			// Nothing to decide, but a scheduler still reads this
			// instant's state: the next instant's writes wait for its
			// signal (Wake), or it would see them half-way.
			v = Verdict{Waiting: "scheduler " + deciding + " still deciding on this instant"}
		} else {
			if pending {
				if err := c.CheckScheduler(); err != nil {
					return err
				}
			}
			s.stats.Checks++
			var err error
			v, err = s.policy.Check(ctx, State{RV: s.rv, LastActivity: s.activity, Since: start, SchedulerPresent: c.SchedulerPresent()})
			if err != nil {
				return err
			}
			if v.Done {
				// The verdict compared the scheduler's state with the changes
				// taken in before it: any change since (a binding that landed
				// while the policy looked) voids it.
				if n, err := c.TakeIn(ctx); err != nil {
					return err
				} else if n > 0 {
					continue
				}
				if barrier != nil && c.StoreRV() != barrierRV {
					continue // the controllers may have something new to do
				}
				return end(label(v, unproven))
			}
			if len(v.Groups) > 0 {
				if err := c.ReleaseGroups(ctx, v.Groups); err != nil {
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
		}
		select {
		case <-c.Written():
		case <-c.Terminating():
		case <-s.abilities.Wake:
		case <-timers:
			// A scheduler set or cancelled a timer: it is still acting.
			_, timers = s.opts.Clock.TimerActivity()
			s.activity = time.Now()
		case <-retry.C:
		case <-deadline.C:
			if pending && !c.SchedulerPresent() {
				// Not a slow scheduler but none (yet, or any more): time
				// must not move on; CheckScheduler bounds the wait.
				deadline.Reset(s.opts.MaxSettle)
				continue
			}
			log.Info("the scheduler's time for this step is up (--settle-max): time moves on although the scheduler may not be done", "simulatedTime", now, "waiting", v.Waiting, "after", time.Since(start))
			return end(MaxWait, "")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// deciding names a scheduler let through the policy's gate that has not
// said it is done since ("" if none, or no gate).
func (s *Settler) deciding() string {
	if g := s.abilities.Gate; g != nil {
		return g.Deciding()
	}
	return ""
}

// label says how a step ends on a policy's Done verdict, the controllers'
// barrier having held (barrierUnproven: why it could not be proven on
// this system, "" if it was): Idle (exact) only when both are proven;
// Unproven with the reason when one is not; Silent when the policy went
// by silence alone.
func label(v Verdict, barrierUnproven string) (Reason, string) {
	switch {
	case v.Exact && barrierUnproven != "":
		return Unproven, barrierUnproven
	case v.Exact:
		return Idle, ""
	case v.Unproven != "":
		return Unproven, v.Unproven
	}
	return Silent, ""
}
