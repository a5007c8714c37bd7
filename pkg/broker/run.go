package broker

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/store"
	"github.com/batkube/batkube/pkg/translate"
)

var (
	podsGVR  = corev1.SchemeGroupVersion.WithResource("pods")
	nodesGVR = corev1.SchemeGroupVersion.WithResource("nodes")
)

// run is the state of one simulation, across its steps.
type run struct {
	*Broker
	api   *apiserver.Server
	store *store.Store
	// intake delivers every change of pods, nodes and pod groups, in
	// order.
	intake *store.Subscription
	buf    []store.Change

	jobs  *jobs
	nodes *nodes
	// profiles are the workloads' profiles, from SIMULATION_BEGINS;
	// profileCache holds them parsed for the translation into pods.
	profiles       map[string]map[string]batsim.Profile
	profileCache   *translate.Profiles
	computeSharing bool
	dynamicAck     bool
	noMoreJobs     bool
	profilesSent   map[string]bool
	// ended: the run reached Options.EndAt (endRun).
	ended bool

	settle   *settle.Settler
	live     liveness
	wakeups  wakeups
	rejected int // pods the kubelet refused
	steps    int
	// preemptions counts the jobs killed because a pod was preempted,
	// resubmitted those registered again; awaiting holds the resubmitted
	// jobs Batsim has not acknowledged yet.
	preemptions, resubmitted int
	awaiting                 map[batsim.JobID]resubmission
	// pods writes _pods.csv (nil: off).
	pods *podLog
	// gangs are the PodGroups of the gangs whose attempts the settle
	// policy decides (settle.Abilities.Hold), as translated (released).
	gangs map[settle.GroupRef]*schedulingv1beta1.PodGroup
	// objects are the timed objects still to create, by instant.
	objects []TimedObject
	// controlled is what the controllers still owe (Jobs); owners writes
	// _controllers.csv (nil: off).
	controlled controlled
	owners     *ownerLog
	workloads  *workloadLog
	// clusterQueues is the ClusterQueues' log (nil when off).
	clusterQueues *clusterQueueLog
	// controllersOnSimulatedTime: the controllers' clock is the simulated
	// clock (Options.ControllersOnSimulatedTime), known once they run.
	controllersOnSimulatedTime bool
	// pool is the capacity an autoscaler launches nodes onto (pool.go).
	pool poolState

	step stepState
}

// stepState is what one step gathers.
type stepState struct {
	// now is the step's instant (Batsim's message's); at is the latest
	// one fireImminent moved the clock to (now if none), imminent how
	// many times it did.
	now, at   float64
	imminent  int
	decisions []batsim.EventData
	// toStart are the jobs whose pods were all bound and admitted: they
	// start once the scheduler is done.
	toStart []*job
	// bound: a pod was bound (the scheduler made progress); freed: room
	// was freed on some node (a job ended, a machine came back).
	bound, freed bool
	// unbound counts the pods put back to pending because they were
	// bound to a node whose machine is unavailable (see unbind).
	unbound map[podRef]int
}

func newRun(b *Broker, api *apiserver.Server, st *store.Store) *run {
	followed := []schema.GroupResource{podsGVR.GroupResource(), nodesGVR.GroupResource(), podGroupsGVR.GroupResource(), jobsGR}
	if b.opts.WorkloadsCSV != nil {
		followed = append(followed, workloadsGR) // only for their log
	}
	if b.opts.ClusterQueuesCSV != nil {
		followed = append(followed, clusterQueuesGR) // only for their log
	}
	r := &run{
		Broker:        b,
		api:           api,
		store:         st,
		intake:        st.Subscribe(followed...),
		controlled:    newControlled(),
		owners:        newOwnerLog(b.opts.ControllersCSV),
		workloads:     newWorkloadLog(b.opts.WorkloadsCSV),
		clusterQueues: newClusterQueueLog(b.opts.ClusterQueuesCSV),
		jobs:          newJobs(),
		nodes:         newNodes(),
		profilesSent:  map[string]bool{},
		profileCache:  translate.NewProfiles(),
		awaiting:      map[batsim.JobID]resubmission{},
		gangs:         map[settle.GroupRef]*schedulingv1beta1.PodGroup{},
		pods:          newPodLog(b.opts.PodsCSV, st),
		objects:       slices.Clone(b.opts.Objects),
		pool:          newPoolState(),
	}
	r.settle = settle.NewSettler(b.opts.Settle, settle.SettlerOptions{
		Barrier: b.opts.Controllers, Clock: b.opts.Clock, MaxSettle: b.opts.MaxSettle,
		MaxPauseReleases: b.opts.MaxPauseReleases, Logger: b.log,
	})
	return r
}

// handle applies one message of Batsim and computes the reply.
func (r *run) handle(ctx context.Context, msg batsim.Message) (batsim.Message, bool, error) {
	r.steps++
	now := msg.Now
	if r.steps == 1 && r.opts.Controllers != nil {
		if err := r.awaitControllers(ctx); err != nil {
			return batsim.Message{}, false, fmt.Errorf("broker: %w", err)
		}
		r.controllersOnSimulatedTime = r.opts.ControllersOnSimulatedTime != nil && r.opts.ControllersOnSimulatedTime()
		r.log.Info("the controllers run", "clock", map[bool]string{true: "simulated", false: "wall (their delays are waited out in wall time)"}[r.controllersOnSimulatedTime])
	}
	r.opts.Clock.Advance(now)
	r.step = stepState{now: now, at: now, decisions: r.step.decisions[:0], toStart: r.step.toStart[:0]}
	// Pods that finished in earlier steps go first, so that a pod finished
	// now stays visible at least until the next step.
	r.removeDueFinishedPods(ctx, now)
	for i, ev := range msg.Events {
		if _, ends := ev.Data.(batsim.SimulationEnds); ends {
			if end := r.settle.Abilities().End; end != nil {
				end()
			}
			return batsim.Message{Now: now}, true, nil
		}
		if err := r.apply(ctx, ev, now); err != nil {
			return batsim.Message{}, false, fmt.Errorf("broker: event %d (%s) at %g: %w", i, ev.Type(), ev.Timestamp, err)
		}
	}
	if r.endDue(now) {
		r.endRun(ctx, now)
	}
	if r.ended {
		return r.reply(now), false, nil
	}
	if r.begun.Load() {
		if err := r.createDueObjects(ctx, now); err != nil {
			return batsim.Message{}, false, fmt.Errorf("broker: %w", err)
		}
		if err := r.markDueNodesReady(ctx, now); err != nil {
			return batsim.Message{}, false, fmt.Errorf("broker: %w", err)
		}
	}
	// The timers due now fire once the step's events are applied: the
	// schedulers and controllers whose timers they are get to act before
	// time moves on (a scheduler's own timers make the step ask it even
	// with nothing pending; the controllers' barrier sees to theirs).
	fired := r.opts.Clock.Fire()
	start := time.Now()
	if err := r.wait(ctx, now, fired.Wake > 0); err != nil {
		return batsim.Message{}, false, err
	}
	// Jobs rejected at their pending timeout free what their bound pods
	// held: the scheduler gets its chance at this instant.
	for r.rejectTimedOut(ctx, now) {
		if err := r.wait(ctx, now, false); err != nil {
			return batsim.Message{}, false, err
		}
	}
	replyNow, err := r.settleImminentTimers(ctx)
	if err != nil {
		return batsim.Message{}, false, err
	}
	if r.opts.ChargeDecisionTime {
		replyNow += time.Since(start).Seconds() * r.opts.DecisionTimeScale
		r.opts.Clock.Advance(replyNow)
	}
	for _, j := range r.step.toStart {
		j.startedAt = r.opts.Clock.Seconds()
		r.owners.started(j)
		r.pods.started(r, j)
		if err := r.setStage(ctx, j.pods, stageRunning, 0); err != nil {
			return batsim.Message{}, false, err
		}
	}
	r.endServices()
	r.step.decisions = append(r.step.decisions, r.pool.power.switches(r.pool.pool.Used)...)
	r.scheduleWakeUps(now, replyNow)
	// With dynamic jobs, Batsim ends the simulation only once told that no
	// more jobs will be registered: that is when the workload is over and
	// nothing is left to run. Pods created later are refused.
	_, linger := r.lingerUntil(replyNow)
	if _, owe := r.controllersOwe(); !owe && !linger && r.dynamicEnabled.Load() && !r.registrationOK.Load() && r.noMoreJobs && r.jobs.pending == 0 && r.jobs.running == 0 && len(r.awaiting) == 0 && len(r.objects) == 0 {
		r.step.decisions = append(r.step.decisions, batsim.Notify{Type: batsim.RegistrationFinished})
		r.registrationOK.Store(true)
		r.pool.endAt = replyNow
	}
	return r.reply(replyNow), false, nil
}

// maxImminent bounds the instants fireImminent moves the clock to in one
// step.
const maxImminent = 64

// fireImminent fires the timers due less than a Batsim call's resolution
// (callNoise) after the step's instant: the clock moves to the earliest
// one's instant and fires what is due, up to maxImminent instants a step.
// Asked as calls, each would be a step of its own at now + 1 µs or later
// (Batsim cannot call sooner), later than its instant: Karpenter's
// provisioner requeues itself 1 ns after each of its 1 s waits for a
// pending pod (singleton.RequeueImmediately), which made half the steps
// of a run with it. The step's wait calls it while it waits (a real
// cluster's timer fires while other work goes on; the wait's proof then
// covers the later instant too), and settleImminentTimers after it.
func (r *run) fireImminent() (fired, wake bool) {
	if r.step.imminent >= maxImminent {
		return false, false
	}
	next, ok := r.opts.Clock.NextTimerSeconds()
	if !ok || next-r.step.now >= callNoise || next <= r.step.at {
		return false, false
	}
	r.step.imminent++
	r.step.at = next
	r.opts.Clock.Advance(next)
	return true, r.opts.Clock.Fire().Wake > 0
}

// settleImminentTimers handles the imminent timers (fireImminent) set at
// the end of the step's wait: each fired, the step waits again. It
// returns the instant the step ends at (its reply's now).
func (r *run) settleImminentTimers(ctx context.Context) (float64, error) {
	for {
		fired, wake := r.fireImminent()
		if !fired {
			return r.step.at, nil
		}
		if err := r.wait(ctx, r.step.at, wake); err != nil {
			return r.step.at, err
		}
	}
}

// reply carries the step's decisions, at replyNow.
func (r *run) reply(replyNow float64) batsim.Message {
	reply := batsim.Message{Now: replyNow, Events: make([]batsim.Event, len(r.step.decisions))}
	for i, d := range r.step.decisions {
		reply.Events[i] = batsim.Event{Timestamp: replyNow, Data: d}
	}
	return reply
}

// wait takes in what happens until the scheduler is done at this instant.
func (r *run) wait(ctx context.Context, now float64, woken bool) error {
	return r.settle.Wait(ctx, stepCluster{r}, now, woken)
}

func (r *run) progress(now float64) Progress {
	total := -1
	if r.noMoreJobs {
		total = r.jobs.submitted
	}
	stats := r.settle.Stats()
	return Progress{Now: now, Submitted: r.jobs.submitted, Pending: r.jobs.pending, Running: r.jobs.running, Done: r.jobs.done,
		Total: total, Steps: r.steps, Settle: stats, AdmissionRejected: r.rejected,
		Preempted: r.preemptions, Resubmitted: r.resubmitted,
		Launched: len(r.pool.order), Unmapped: r.pool.unmapped, PoolInUse: r.pool.pool.InUse(),
		TimedObjectsLeft: len(r.objects), Workloads: r.workloads.counts()}
}

var podsGR = schema.GroupResource{Resource: "pods"}
