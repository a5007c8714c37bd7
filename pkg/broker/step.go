package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/store"
	"github.com/batkube/batkube/pkg/translate"
)

var (
	podsGVR  = corev1.SchemeGroupVersion.WithResource("pods")
	nodesGVR = corev1.SchemeGroupVersion.WithResource("nodes")
)

// step holds what lives across the steps of one run.
type step struct {
	*Broker
	api   *apiserver.Server
	store *store.Store
	pods  *store.Watcher
	steps int

	backoff        time.Duration
	noWatcherSince time.Time
	// schedulerSeen is set once a scheduler has acted on a pod of the
	// workload (bound it, or marked it unschedulable); waitingSince is when
	// pods started waiting for that first sign of life.
	schedulerSeen bool
	waitingSince  time.Time

	// Per step.
	decisions []batsim.EventData
	toStart   []*job
	progress  bool
}

// handle applies one message of Batsim and computes the reply.
func (s *step) handle(ctx context.Context, msg batsim.Message) (batsim.Message, bool, error) {
	s.steps++
	st := s.state
	now := msg.Now
	s.opts.Clock.Advance(now)
	s.decisions, s.toStart, s.progress = s.decisions[:0], s.toStart[:0], false
	// Pods that finished in earlier steps go first, so that a pod finished
	// now stays visible at least until the next step.
	s.removeDueFinishedPods(ctx, now)
	for i, ev := range msg.Events {
		var err error
		switch d := ev.Data.(type) {
		case batsim.SimulationBegins:
			err = s.begin(ctx, d)
		case batsim.JobSubmitted:
			err = s.submit(ctx, d, now)
		case batsim.JobCompleted:
			err = s.completed(ctx, d, now)
		case batsim.JobKilled:
			for _, id := range d.JobIDs {
				s.removeJobPods(ctx, st.jobs[id])
			}
		case batsim.RequestedCall:
			if st.nextCall-now < callNoise {
				// The call asked for; rounding may put now a hair
				// before the timer it was asked for.
				s.opts.Clock.Advance(max(now, st.nextCall))
				st.nextCall = 0
			}
		case batsim.Notify:
			switch d.Type {
			case batsim.NoMoreStaticJobToSubmit:
				st.noMoreJobs = true
			case batsim.EventMachineUnavailable, batsim.EventMachineAvailable:
				err = s.setAvailability(ctx, d.Resources, d.Type == batsim.EventMachineAvailable)
			}
		case batsim.SimulationEnds:
			return batsim.Message{Now: now}, true, nil
		default:
			s.log.Debug("ignoring a Batsim event", "type", ev.Type())
		}
		if err != nil {
			return batsim.Message{}, false, fmt.Errorf("broker: event %d (%s) at %g: %w", i, ev.Type(), ev.Timestamp, err)
		}
	}
	// The timers of time-virtualised schedulers due now fire once the
	// step's events are applied; their schedulers get to act before time
	// moves on.
	woken := s.opts.Clock.Fire()
	start := time.Now()
	if err := s.settle(ctx, now, woken > 0); err != nil {
		return batsim.Message{}, false, err
	}
	replyNow := now
	if s.opts.ChargeDecisionTime {
		replyNow += time.Since(start).Seconds() * s.opts.DecisionTimeScale
		s.opts.Clock.Advance(replyNow)
	}
	for _, j := range s.toStart {
		if err := s.markRunning(ctx, j); err != nil {
			return batsim.Message{}, false, err
		}
	}
	s.scheduleWakeUp(ctx, now, replyNow)
	// With dynamic jobs, Batsim ends the simulation only once told that no
	// more jobs will be registered: that is when the workload is over and
	// nothing is left to run. Pods created later are refused.
	if st.dynamicEnabled.Load() && !st.registrationOK.Load() && st.noMoreJobs && st.pending == 0 && st.running == 0 {
		s.decisions = append(s.decisions, batsim.Notify{Type: batsim.RegistrationFinished})
		st.registrationOK.Store(true)
	}
	reply := batsim.Message{Now: replyNow, Events: make([]batsim.Event, len(s.decisions))}
	for i, d := range s.decisions {
		reply.Events[i] = batsim.Event{Timestamp: replyNow, Data: d}
	}
	return reply, false, nil
}

// scheduleWakeUp asks Batsim to call back at the earliest of: the next
// timer of a time-virtualised scheduler, and, while pods stay pending, a
// delay that backs off while nothing gets bound. Jobs that stay pending when
// nothing else can happen are rejected after PendingTimeout.
func (s *step) scheduleWakeUp(ctx context.Context, now, replyNow float64) {
	s.pendingWakeUp(ctx, now, replyNow)
	s.timerWakeUp(replyNow)
}

// callNoise is how far (seconds) a REQUESTED_CALL's now may fall before the
// instant asked for (float rounding through Batsim).
const callNoise = 1e-6

// timerWakeUp asks for a call at the next timer of a time-virtualised
// scheduler, as long as the simulation has jobs to run: a scheduler's
// periodic timer must not keep a finished simulation alive.
func (s *step) timerWakeUp(replyNow float64) {
	st := s.state
	if st.noMoreJobs && st.pending == 0 && st.running == 0 {
		return
	}
	at, ok := s.opts.Clock.NextTimerSeconds()
	if !ok || at <= replyNow {
		return
	}
	s.callAt(at)
}

// callAt asks Batsim for a REQUESTED_CALL at `at`, unless an earlier one is
// already asked for.
func (s *step) callAt(at float64) {
	st := s.state
	if st.nextCall == 0 || st.nextCall > at {
		s.decisions = append(s.decisions, batsim.CallMeLater{At: at})
		st.nextCall = at
	}
}

func (s *step) pendingWakeUp(ctx context.Context, now, replyNow float64) {
	st := s.state
	if !st.hasPending() {
		s.backoff = 0
		return
	}
	// Only when nothing else can happen is it worth looking at the pending
	// jobs one by one (the scan is over every job).
	if st.running == 0 && st.noMoreJobs && !st.dynamicEnabled.Load() {
		pending := st.pendingJobs()
		oldest := math.Inf(1)
		for _, j := range pending {
			oldest = min(oldest, j.pendingSince)
		}
		if now-oldest >= s.opts.PendingTimeout.Seconds() {
			for _, j := range pending {
				s.log.Warn("rejecting a job whose pods stayed pending with nothing left to free resources",
					"job", j.id, "pendingFor", now-oldest)
				s.reject(ctx, j)
			}
			return
		}
	}
	if s.opts.Clock.Pending() > 0 {
		// A time-virtualised scheduler decides at its timers, which
		// timerWakeUp asks for: no need to poll it.
		s.backoff = 0
		return
	}
	if s.progress || s.backoff == 0 {
		s.backoff = s.opts.BackoffMin
	} else {
		s.backoff = min(2*s.backoff, s.opts.BackoffMax)
	}
	s.callAt(replyNow + s.backoff.Seconds())
}

// settle lets the scheduler react: it returns once no pod is pending (at
// once if none was), or the API has been quiet for Quiet, or MaxSettle has
// passed. When timers of a time-virtualised scheduler fired this step
// (woken), it waits for quiet even with no pod pending.
func (s *step) settle(ctx context.Context, now float64, woken bool) error {
	st := s.state
	if !st.hasPending() && !woken && len(s.pods.Events()) == 0 && len(s.terminating) == 0 {
		return nil
	}
	deadline := time.NewTimer(s.opts.MaxSettle)
	defer deadline.Stop()
	quiet := time.NewTimer(s.opts.Quiet)
	defer quiet.Stop()
	tick := time.NewTicker(max(s.opts.Quiet/5, time.Millisecond))
	defer tick.Stop()
	lastRV := s.store.CurrentRV()
	_, timers := s.opts.Clock.TimerActivity()
	resetQuiet := func() {
		quiet.Reset(s.opts.Quiet)
	}
	for {
		// Take in whatever is already there.
		for drained := false; !drained; {
			select {
			case ev, ok := <-s.pods.Events():
				if err := s.podEvent(ctx, ev, ok, now); err != nil {
					return err
				}
				resetQuiet()
			case pod := <-s.terminating:
				s.podTerminating(ctx, pod)
				resetQuiet()
			default:
				drained = true
			}
		}
		pending := st.hasPending()
		if !pending && !woken {
			s.noWatcherSince = time.Time{}
			return nil
		}
		if pending {
			if err := s.checkScheduler(); err != nil {
				return err
			}
		}
		select {
		case ev, ok := <-s.pods.Events():
			if err := s.podEvent(ctx, ev, ok, now); err != nil {
				return err
			}
			resetQuiet()
		case pod := <-s.terminating:
			s.podTerminating(ctx, pod)
			resetQuiet()
		case <-timers:
			// A scheduler set or cancelled a timer: it is still acting.
			_, timers = s.opts.Clock.TimerActivity()
			resetQuiet()
		case <-tick.C:
			if rv := s.store.CurrentRV(); rv != lastRV {
				lastRV = rv
				resetQuiet()
			}
		case <-quiet.C:
			if pending && !s.schedulerAlive() {
				// No scheduler has shown itself yet (it is starting, or
				// waiting to lead), or it has stopped watching: silence
				// means nothing; checkScheduler bounds the wait.
				resetQuiet()
				continue
			}
			return nil
		case <-deadline.C:
			if pending && !s.schedulerAlive() {
				// Not a slow scheduler but none (yet, or any more): time
				// must not move on; checkScheduler bounds the wait.
				continue
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// schedulerAlive reports whether a scheduler has shown itself and is still
// there: it has acted on a pod and still watches pods, or it waits for a
// timer of the simulated clock (a time-virtualised scheduler).
func (s *step) schedulerAlive() bool {
	return s.opts.Clock.Pending() > 0 || (s.schedulerSeen && s.api.SchedulerWatching())
}

// checkScheduler reports a scheduler that never came or is gone: pods are
// pending and no scheduler has acted on any for StartTimeout, or the
// scheduler that did has held no watch on pods for SchedulerTimeout.
func (s *step) checkScheduler() error {
	if s.opts.Clock.Pending() > 0 {
		// A time-virtualised scheduler waits for its timer: alive, and
		// done deciding until simulated time reaches it.
		s.noWatcherSince, s.waitingSince = time.Time{}, time.Time{}
		return nil
	}
	if !s.schedulerSeen {
		if s.waitingSince.IsZero() {
			s.waitingSince = time.Now()
		} else if waited := time.Since(s.waitingSince); waited > s.opts.StartTimeout {
			return fmt.Errorf("broker: pods have been pending for %s and no scheduler has bound or examined any: is a scheduler running, pointed at this server, with the pods' schedulerName (%q by default)?",
				waited.Round(time.Second), s.opts.Pods.SchedulerName)
		}
		return nil
	}
	if s.api.SchedulerWatching() {
		s.noWatcherSince = time.Time{}
		return nil
	}
	if s.noWatcherSince.IsZero() {
		s.noWatcherSince = time.Now()
		return nil
	}
	if waited := time.Since(s.noWatcherSince); waited > s.opts.SchedulerTimeout {
		return fmt.Errorf("broker: pods are pending and the scheduler has not watched pods for %s: it has exited or crashed (see its log)", waited.Round(time.Second))
	}
	return nil
}

// podEvent follows what clients do to pods: bindings, deletions, creations.
func (s *step) podEvent(ctx context.Context, ev store.Event, ok bool, now float64) error {
	if !ok {
		return fmt.Errorf("broker: the watch on pods ended: %w", s.pods.Err())
	}
	if ev.Type == watch.Bookmark || ev.Object == nil {
		return nil
	}
	if ev.Type == watch.Error {
		return fmt.Errorf("broker: the watch on pods failed: %w", ev.Err)
	}
	pod, isPod := ev.Object.Object().(*corev1.Pod)
	if !isPod {
		return nil
	}
	st := s.state
	ref := podRef{pod.Namespace, pod.Name}
	j := st.byPod[ref]
	if !s.schedulerSeen && j != nil && hasCondition(pod, corev1.PodScheduled) {
		s.schedulerSeen = true
	}
	switch ev.Type {
	case watch.Added:
		if j == nil {
			return s.registerDynamic(ctx, pod, now)
		}
	case watch.Modified:
		if j == nil || j.phase != jobPending || pod.Spec.NodeName == "" || j.nodes[ref] != "" {
			return nil
		}
		if st.unavailable[pod.Spec.NodeName] {
			// Bound before the scheduler saw the node cordoned: Batsim
			// would abort on it. The pod goes back to pending.
			return s.unbind(ctx, pod)
		}
		j.nodes[ref] = pod.Spec.NodeName
		s.progress = true
		if len(j.nodes) == len(j.pods) {
			return s.execute(j)
		}
	case watch.Deleted:
		if st.removing[ref] {
			delete(st.removing, ref)
			return nil
		}
		if j == nil {
			return nil
		}
		switch j.phase {
		case jobPending:
			s.reject(ctx, j)
		case jobRunning:
			s.kill(j)
		}
	}
	return nil
}

// setAvailability cordons (or uncordons) the nodes of machines that an
// external event made unavailable (or available again): spec.unschedulable
// and the node.kubernetes.io/unschedulable taint, as kubectl cordon and the
// node controller do, so that schedulers leave them alone.
func (s *step) setAvailability(ctx context.Context, resources batsim.IntervalSet, available bool) error {
	st := s.state
	for _, id := range resources.IDs() {
		name, ok := st.nodeByID[id]
		if !ok {
			continue // the master host, or a storage resource
		}
		if available {
			delete(st.unavailable, name)
		} else {
			st.unavailable[name] = true
		}
		_, err := s.store.Update(ctx, nodesGVR.GroupResource(), "", name, func(cur store.Object) (store.Object, error) {
			node, ok := cur.(*corev1.Node)
			if !ok {
				return nil, fmt.Errorf("stored node is a %T", cur)
			}
			node.Spec.Unschedulable = !available
			taints := node.Spec.Taints[:0]
			for _, t := range node.Spec.Taints {
				if t.Key != corev1.TaintNodeUnschedulable {
					taints = append(taints, t)
				}
			}
			if !available {
				taints = append(taints, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
			}
			node.Spec.Taints = taints
			return node, nil
		})
		if err != nil {
			return fmt.Errorf("setting node %s (resource %d) available=%t: %w", name, id, available, err)
		}
	}
	return nil
}

// unbind puts a pod bound to an unavailable node back to pending: a pod's
// node cannot change, so it is removed and created again, unbound (as a
// controller would recreate it).
func (s *step) unbind(ctx context.Context, pod *corev1.Pod) error {
	s.log.Warn("a pod was bound to a node whose machine is unavailable: it is recreated, pending", "pod", pod.Namespace+"/"+pod.Name, "node", pod.Spec.NodeName)
	fresh := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace,
		Labels: maps.Clone(pod.Labels), Annotations: maps.Clone(pod.Annotations)}, Spec: *pod.Spec.DeepCopy()}
	fresh.Spec.NodeName = ""
	s.remove(ctx, podRef{pod.Namespace, pod.Name})
	if _, err := s.api.Create(ctx, podsGVR, fresh); err != nil {
		return fmt.Errorf("recreating pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// podTerminating handles a client's deletion of a bound pod.
func (s *step) podTerminating(ctx context.Context, pod *corev1.Pod) {
	st := s.state
	j := st.byPod[podRef{pod.Namespace, pod.Name}]
	switch {
	case j == nil || j.phase == jobFinished:
		s.remove(ctx, podRef{pod.Namespace, pod.Name})
	case j.phase == jobPending:
		s.reject(ctx, j)
	default:
		s.kill(j)
	}
}

func (s *step) kill(j *job) {
	if !j.killSent {
		j.killSent = true
		s.decisions = append(s.decisions, batsim.KillJob{JobIDs: []batsim.JobID{j.id}})
	}
}

// reject refuses a job that has not started and removes its pods.
func (s *step) reject(ctx context.Context, j *job) {
	s.decisions = append(s.decisions, batsim.RejectJob{JobID: j.id})
	s.state.setPhase(j, jobFinished)
	j.rejected = true
	s.state.done++
	s.removeJobPods(ctx, j)
}

// execute turns the bindings of a job's pods into EXECUTE_JOB.
func (s *step) execute(j *job) error {
	st := s.state
	ids := make([]int, len(j.pods))
	for i, p := range j.pods {
		node := j.nodes[p]
		id, ok := st.nodes[node]
		if !ok {
			return fmt.Errorf("broker: pod %s/%s of job %s was bound to node %q, which is not a Batsim host", p.namespace, p.name, j.id, node)
		}
		if !st.computeSharing && st.busy[node] > 0 {
			return fmt.Errorf("broker: pod %s/%s of job %s was bound to node %s, which already runs a job, but Batsim runs without compute sharing: run batsim with --enable-compute-sharing", p.namespace, p.name, j.id, node)
		}
		ids[i] = id
	}
	alloc, err := batsim.IntervalSetFromIDs(ids)
	if err != nil {
		return fmt.Errorf("broker: job %s: %w", j.id, err)
	}
	exec := batsim.ExecuteJob{JobID: j.id, Alloc: alloc}
	unique := alloc.IDs()
	if len(unique) != len(ids) {
		exec.Mapping = make(map[int]int, len(ids))
		for i, id := range ids {
			exec.Mapping[i] = slices.Index(unique, id)
		}
	}
	for _, node := range j.nodes {
		st.busy[node]++
	}
	s.decisions = append(s.decisions, exec)
	st.setPhase(j, jobRunning)
	st.running++
	s.toStart = append(s.toStart, j)
	return nil
}

// begin creates the nodes of the platform.
func (s *step) begin(ctx context.Context, d batsim.SimulationBegins) error {
	st := s.state
	st.computeSharing = d.AllowComputeSharing
	st.dynamicEnabled.Store(d.Config.DynamicJobsEnabled)
	st.dynamicAck = d.Config.DynamicJobsAcknowledged
	st.profiles = d.Profiles
	if !d.AllowComputeSharing {
		s.log.Warn("Batsim runs without compute sharing: a node can run one pod at a time; run batsim with --enable-compute-sharing for Kubernetes semantics")
	}
	for _, r := range d.ComputeResources {
		h := translate.Host{ID: r.ID, Name: r.Name, Properties: r.Properties, ZoneProperties: r.ZoneProperties}
		if translate.IsMaster(h) {
			continue
		}
		node, err := translate.Node(h, s.opts.Nodes)
		if err != nil {
			return err
		}
		if _, err := s.api.Create(ctx, nodesGVR, node); err != nil {
			return fmt.Errorf("creating node %s: %w", node.Name, err)
		}
		st.nodes[node.Name] = r.ID
		st.nodeByID[r.ID] = node.Name
	}
	st.begun.Store(true)
	return nil
}

// submit creates the pods of a submitted job.
func (s *step) submit(ctx context.Context, d batsim.JobSubmitted, now float64) error {
	st := s.state
	if _, known := st.jobs[d.JobID]; known {
		return nil // a dynamic job, registered for a pod that exists
	}
	profile := d.Profile
	if profile == nil {
		p, ok := st.profiles[d.JobID.Workload()][d.Job.Profile]
		if !ok {
			return fmt.Errorf("job %s: profile %q of workload %q is unknown", d.JobID, d.Job.Profile, d.JobID.Workload())
		}
		profile = &p
	}
	fields := make(map[string]json.RawMessage, len(profile.Fields)+1)
	for k, v := range profile.Fields {
		fields[k] = v
	}
	typ, _ := json.Marshal(profile.Type)
	fields["type"] = typ
	pods, err := translate.Pods(translate.Job{ID: string(d.JobID), Res: d.Job.Res, Walltime: d.Job.Walltime, Fields: d.Job.Extra, Profile: fields}, s.opts.Pods)
	if err != nil {
		return err
	}
	j := &job{id: d.JobID, nodes: map[podRef]string{}, pendingSince: now}
	for _, p := range pods {
		j.pods = append(j.pods, podRef{p.Namespace, p.Name})
	}
	st.add(j)
	for _, p := range pods {
		if _, err := s.api.Create(ctx, podsGVR, p); err != nil {
			return fmt.Errorf("creating pod %s/%s of job %s: %w", p.Namespace, p.Name, d.JobID, err)
		}
	}
	return nil
}

// registerDynamic turns a pod created through the API into a Batsim job.
func (s *step) registerDynamic(ctx context.Context, pod *corev1.Pod, now float64) error {
	st := s.state
	if !st.dynamicEnabled.Load() || st.registrationOK.Load() {
		return nil // refused by admission; nothing to do
	}
	delay := s.opts.DynamicJobDelay.Seconds()
	if v, ok := pod.Annotations[DelayAnnotation]; ok {
		d, err := strconv.ParseFloat(v, 64)
		if err != nil || d < 0 {
			s.log.Warn("ignoring a malformed annotation", "pod", pod.Name, "annotation", DelayAnnotation, "value", v)
		} else {
			delay = d
		}
	}
	profileName := "batkube-delay-" + strconv.FormatFloat(delay, 'f', -1, 64)
	id := batsim.JobID("dyn!" + pod.Namespace + "." + pod.Name)
	if !st.profilesSent[profileName] {
		delayJSON, _ := json.Marshal(delay)
		s.decisions = append(s.decisions, batsim.RegisterProfile{WorkloadName: "dyn", ProfileName: profileName,
			Profile: batsim.Profile{Type: "delay", Fields: map[string]json.RawMessage{"delay": delayJSON}}})
		st.profilesSent[profileName] = true
	}
	s.decisions = append(s.decisions, batsim.RegisterJob{JobID: id, Job: batsim.Job{ID: id, Subtime: now, Res: 1, Profile: profileName, Walltime: batsim.NoWalltime}})
	ref := podRef{pod.Namespace, pod.Name}
	j := &job{id: id, pods: []podRef{ref}, nodes: map[podRef]string{}, pendingSince: now, dynamic: true}
	st.add(j)
	if pod.Spec.NodeName != "" { // created already bound
		j.nodes[ref] = pod.Spec.NodeName
		return s.execute(j)
	}
	return nil
}

// AdmitCreate implements apiserver.Admitter: during a simulation, a pod
// created by a client becomes a dynamic job, which Batsim must allow.
func (b *Broker) AdmitCreate(gvr schema.GroupVersionResource, _ runtime.Object) error {
	if gvr.GroupResource() != podsGVR.GroupResource() {
		return nil
	}
	if !b.state.begun.Load() {
		return apierrors.NewServiceUnavailable("the simulation has not begun yet: pods come from the workload")
	}
	if !b.state.dynamicEnabled.Load() {
		return apierrors.NewForbidden(podsGVR.GroupResource(), "",
			errors.New("the simulation creates pods from its workload; pods created through the API need Batsim's dynamic jobs (batsim --enable-dynamic-jobs --acknowledge-dynamic-jobs)"))
	}
	if b.state.registrationOK.Load() {
		return apierrors.NewForbidden(podsGVR.GroupResource(), "",
			errors.New("the simulation is ending: its workload is over and Batsim was told no more jobs come"))
	}
	return nil
}

// completed records the end of a job in its pods' status.
func (s *step) completed(ctx context.Context, d batsim.JobCompleted, now float64) error {
	st := s.state
	j, ok := st.jobs[d.JobID]
	if !ok {
		s.log.Warn("Batsim completed a job the broker does not know", "job", d.JobID)
		return nil
	}
	if j.phase == jobRunning {
		st.running--
		st.done++
		for _, node := range j.nodes {
			st.busy[node]--
		}
	}
	st.setPhase(j, jobFinished)
	if j.killSent || d.JobState == batsim.JobStateRejected {
		s.removeJobPods(ctx, j)
		return nil
	}
	phase, reason := corev1.PodSucceeded, "Completed"
	switch d.JobState {
	case batsim.JobStateCompletedSuccessfully:
	case batsim.JobStateCompletedWalltimeReached:
		phase, reason = corev1.PodFailed, "DeadlineExceeded"
	case batsim.JobStateCompletedKilled:
		phase, reason = corev1.PodFailed, "Killed"
	default:
		phase, reason = corev1.PodFailed, "Error"
	}
	exit := int32(d.ReturnCode)
	if phase == corev1.PodFailed && exit == 0 {
		exit = 1
	}
	finish := metav1.NewTime(s.opts.Clock.Now())
	for _, ref := range j.pods {
		_, err := s.store.Change(ctx, podsGVR.GroupResource(), ref.namespace, ref.name, func(cur store.Object) (store.Object, error) {
			pod, ok := cur.(*corev1.Pod)
			if !ok {
				return nil, fmt.Errorf("stored pod is a %T", cur)
			}
			pod.Status.Phase = phase
			if reason == "DeadlineExceeded" {
				pod.Status.Reason = reason
				pod.Status.Message = "Pod was active on the node longer than the specified deadline"
			}
			for _, c := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
				setCondition(&pod.Status, c, corev1.ConditionFalse, finish, "PodCompleted")
			}
			for i := range pod.Status.ContainerStatuses {
				cs := &pod.Status.ContainerStatuses[i]
				started := finish
				if cs.State.Running != nil {
					started = cs.State.Running.StartedAt
				}
				cs.Ready = false
				cs.Started = new(bool)
				cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: exit, Reason: reason, StartedAt: started, FinishedAt: finish}}
			}
			return pod, nil
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("marking pod %s/%s finished: %w", ref.namespace, ref.name, err)
		}
		st.finished = append(st.finished, finishedPod{ref: ref, at: now + s.opts.FinishedPodTTL.Seconds()})
	}
	return nil
}

// markRunning sets the pods of a started job Running, as a kubelet would.
func (s *step) markRunning(ctx context.Context, j *job) error {
	start := metav1.NewTime(s.opts.Clock.Now())
	for _, ref := range j.pods {
		_, err := s.store.Change(ctx, podsGVR.GroupResource(), ref.namespace, ref.name, func(cur store.Object) (store.Object, error) {
			pod, ok := cur.(*corev1.Pod)
			if !ok {
				return nil, fmt.Errorf("stored pod is a %T", cur)
			}
			pod.Status.Phase = corev1.PodRunning
			pod.Status.StartTime = &start
			pod.Status.HostIP = pod.Spec.NodeName
			for _, c := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
				setCondition(&pod.Status, c, corev1.ConditionTrue, start, "")
			}
			started := true
			pod.Status.ContainerStatuses = pod.Status.ContainerStatuses[:0]
			for _, c := range pod.Spec.Containers {
				pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
					Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: &started,
					ContainerID: "batkube://" + pod.Name + "/" + c.Name,
					State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}},
				})
			}
			return pod, nil
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("marking pod %s/%s running: %w", ref.namespace, ref.name, err)
		}
	}
	return nil
}

// hasCondition reports whether a pod carries a condition of type typ,
// whatever its status: PodScheduled is set by a binding, or by a scheduler
// that found no node for the pod.
func hasCondition(pod *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ {
			return true
		}
	}
	return false
}

func setCondition(st *corev1.PodStatus, typ corev1.PodConditionType, status corev1.ConditionStatus, at metav1.Time, reason string) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			if st.Conditions[i].Status != status {
				st.Conditions[i].LastTransitionTime = at
			}
			st.Conditions[i].Status = status
			st.Conditions[i].Reason = reason
			return
		}
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: typ, Status: status, LastTransitionTime: at, Reason: reason})
}

// removeDueFinishedPods deletes the finished pods whose time has come.
func (s *step) removeDueFinishedPods(ctx context.Context, now float64) {
	st := s.state
	n := 0
	for n < len(st.finished) && st.finished[n].at <= now {
		ref := st.finished[n].ref
		s.remove(ctx, ref)
		if j := st.byPod[ref]; j != nil && j.phase == jobFinished && j.pods[len(j.pods)-1] == ref {
			st.forget(j)
		}
		n++
	}
	st.finished = st.finished[n:]
}

// removeJobPods deletes the pods of a job and forgets it.
func (s *step) removeJobPods(ctx context.Context, j *job) {
	if j == nil {
		return
	}
	for _, ref := range j.pods {
		s.remove(ctx, ref)
	}
	s.state.forget(j)
}

// remove deletes a pod as its kubelet would once it is gone.
func (s *step) remove(ctx context.Context, ref podRef) {
	s.state.removing[ref] = true
	if err := s.api.RemovePod(ctx, ref.namespace, ref.name); err != nil {
		delete(s.state.removing, ref)
		if !apierrors.IsNotFound(err) {
			s.log.Error("removing a pod", "pod", ref.namespace+"/"+ref.name, "err", err)
		}
	}
}
