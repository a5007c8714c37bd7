package broker_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/chantest"
	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/simtime/simclock"
	"github.com/batkube/batkube/pkg/store"
)

// harness is a broker behind a real API server, answering a scripted Batsim
// over real ZeroMQ sockets, with a tiny client-go scheduler that binds every
// pending pod to node0.
type harness struct {
	t      *testing.T
	ctx    context.Context
	client *batsim.Client
	cs     kubernetes.Interface
	clock  *simclock.Clock
	done   chan error
}

func start(t *testing.T, opts broker.Options) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	clk := simclock.New(simclock.DefaultEpoch)
	opts.Clock = clk
	b, err := broker.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := servertest.Start(t, server.Options{Clock: clk, Terminator: b, Admitter: b})
	conn, err := batsim.Listen("tcp://127.0.0.1:*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	h := &harness{t: t, ctx: ctx, clock: clk, done: make(chan error, 1)}
	go func() { h.done <- b.Run(ctx, conn, ts.API, ts.Store) }()
	if h.client, err = batsim.Dial(conn.Endpoint()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.client.Close() })
	h.cs = ts.Clientset()
	w, err := h.cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go bindAll(ctx, h.cs, w, "node0")
	return h
}

// startOnNode0 starts a harness and begins its simulation on one host,
// node0 (where bindAll binds).
func startOnNode0(t *testing.T, opts broker.Options) *harness {
	t.Helper()
	h := start(t, opts)
	h.send(0, begins("node0"))
	return h
}

// stuckLabel marks the pods bindAll leaves pending.
const stuckLabel = "batkube.test/stuck"

// bindAll is a trivial scheduler: it binds every pending pod to node, but
// those labelled stuckLabel.
func bindAll(ctx context.Context, cs kubernetes.Interface, w watch.Interface, node string) {
	defer w.Stop()
	for ev := range w.ResultChan() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type != watch.Added || p.Spec.NodeName != "" || p.Labels[stuckLabel] != "" {
			continue
		}
		_ = cs.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name},
			Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{})
	}
}

func (h *harness) send(now float64, data ...batsim.EventData) batsim.Message {
	h.t.Helper()
	m := batsim.Message{Now: now}
	for _, d := range data {
		m.Events = append(m.Events, batsim.Event{Timestamp: now, Data: d})
	}
	reply, err := h.client.Request(h.ctx, m)
	if err != nil {
		h.t.Fatalf("request at %g: %v", now, err)
	}
	if reply.Now < now {
		h.t.Fatalf("reply now %g before request now %g", reply.Now, now)
	}
	return reply
}

// end sends SIMULATION_ENDS at now and waits for Run to return without
// error.
func (h *harness) end(now float64) {
	h.t.Helper()
	h.send(now, batsim.SimulationEnds{})
	if err := <-h.done; err != nil {
		h.t.Fatalf("Run: %v", err)
	}
}

func begins(hosts ...string) batsim.SimulationBegins {
	d := batsim.SimulationBegins{NbResources: len(hosts), NbComputeResources: len(hosts), AllowComputeSharing: true,
		Workloads: map[string]string{"w": "w.json"},
		Profiles: map[string]map[string]batsim.Profile{"w": {
			"d10": {Type: "delay", Fields: map[string]json.RawMessage{"delay": json.RawMessage(`10`), "cpu": json.RawMessage(`1`)}},
			"stuck": {Type: "delay", Fields: map[string]json.RawMessage{"delay": json.RawMessage(`10`),
				"pod_template": json.RawMessage(`{"metadata": {"labels": {"` + stuckLabel + `": "yes"}}}`)}},
		}}}
	for i, h := range hosts {
		d.ComputeResources = append(d.ComputeResources, batsim.Resource{ID: i, Name: h, State: batsim.ResourceIdle,
			Properties: map[string]string{"role": "", "core": "4", "memory": "8Gi"}})
	}
	return d
}

func submitted(id string) batsim.JobSubmitted {
	return batsim.JobSubmitted{JobID: batsim.JobID(id), Job: batsim.Job{ID: batsim.JobID(id), Res: 1, Profile: "d10", Walltime: -1}}
}

func TestJobLifecycleBecomesPodPhases(t *testing.T) {
	h := start(t, broker.Options{Quiet: 50 * time.Millisecond})
	if r := h.send(0, begins("node0", "node1")); len(r.Events) != 0 {
		t.Fatalf("reply to SIMULATION_BEGINS: got %v, want no event", r.Events)
	}
	nodes, err := h.cs.CoreV1().Nodes().List(h.ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 2 {
		t.Fatalf("nodes: %v, %d, want 2", err, len(nodes.Items))
	}

	r := h.send(1, submitted("w!1"))
	if len(r.Events) != 1 {
		t.Fatalf("reply to JOB_SUBMITTED: got %+v, want one EXECUTE_JOB", r.Events)
	}
	exec, ok := r.Events[0].Data.(batsim.ExecuteJob)
	if !ok || exec.JobID != "w!1" || exec.Alloc.String() != "0" {
		t.Fatalf("got %+v, want EXECUTE_JOB w!1 on resource 0", r.Events[0].Data)
	}
	pod, err := h.cs.CoreV1().Pods("default").Get(h.ctx, "w-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantStart := simclock.DefaultEpoch.Add(time.Second)
	if pod.Status.Phase != corev1.PodRunning || pod.Status.StartTime == nil || !pod.Status.StartTime.Time.Equal(wantStart) {
		t.Errorf("after EXECUTE_JOB: phase %s start %v, want Running at %v", pod.Status.Phase, pod.Status.StartTime, wantStart)
	}
	if !pod.CreationTimestamp.Time.Equal(wantStart) {
		t.Errorf("creationTimestamp %v, want the simulated %v", pod.CreationTimestamp, wantStart)
	}

	h.send(11, batsim.JobCompleted{JobID: "w!1", JobState: batsim.JobStateCompletedSuccessfully, Alloc: exec.Alloc})
	pod, err = h.cs.CoreV1().Pods("default").Get(h.ctx, "w-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodSucceeded || pod.Status.ContainerStatuses[0].State.Terminated == nil {
		t.Errorf("after JOB_COMPLETED: phase %s statuses %+v, want Succeeded and terminated", pod.Status.Phase, pod.Status.ContainerStatuses)
	}
	h.send(12, batsim.RequestedCall{})
	if _, err := h.cs.CoreV1().Pods("default").Get(h.ctx, "w-1", metav1.GetOptions{}); err == nil {
		t.Error("the finished pod is still there after the next step")
	}
	h.end(13)
}

func TestDeletingPodsBecomesKillAndReject(t *testing.T) {
	h := startOnNode0(t, broker.Options{Quiet: 50 * time.Millisecond})
	r := h.send(1, submitted("w!1"))
	if len(r.Events) != 1 {
		t.Fatalf("got %+v, want EXECUTE_JOB", r.Events)
	}
	if err := h.cs.CoreV1().Pods("default").Delete(h.ctx, "w-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r = h.send(2, batsim.RequestedCall{})
	if len(r.Events) != 1 {
		t.Fatalf("after deleting a running pod: got %+v, want KILL_JOB", r.Events)
	}
	if k, ok := r.Events[0].Data.(batsim.KillJob); !ok || len(k.JobIDs) != 1 || k.JobIDs[0] != "w!1" {
		t.Fatalf("got %+v, want KILL_JOB w!1", r.Events[0].Data)
	}
	h.send(3, batsim.JobCompleted{JobID: "w!1", JobState: batsim.JobStateCompletedKilled, ReturnCode: -1},
		batsim.JobKilled{JobIDs: []batsim.JobID{"w!1"}})
	if _, err := h.cs.CoreV1().Pods("default").Get(h.ctx, "w-1", metav1.GetOptions{}); err == nil {
		t.Error("the killed pod is still there")
	}
	h.end(14)
}

func TestPodsFromClientsAreRefusedWithoutDynamicJobs(t *testing.T) {
	h := startOnNode0(t, broker.Options{Quiet: 50 * time.Millisecond})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	_, err := h.cs.CoreV1().Pods("default").Create(h.ctx, pod, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "--enable-dynamic-jobs") {
		t.Fatalf("a pod created through the API without dynamic jobs: got %v, want 403 naming --enable-dynamic-jobs", err)
	}
	h.end(1)
}

// TestTimersBecomeCallsAndFireAfterTheStepsEvents: a time-virtualised
// scheduler's timer makes the broker ask Batsim for a call at its instant,
// and fires at that step once the step's events are applied.
func TestTimersBecomeCallsAndFireAfterTheStepsEvents(t *testing.T) {
	h := startOnNode0(t, broker.Options{Quiet: 20 * time.Millisecond})
	tm := h.clock.NewTimer(h.clock.Epoch().Add(7500 * time.Millisecond))
	reply := h.send(1, submitted("w!1"))
	var calls []float64
	for _, ev := range reply.Events {
		if c, ok := ev.Data.(batsim.CallMeLater); ok {
			calls = append(calls, c.At)
		}
	}
	if len(calls) != 1 || calls[0] != 7.5 {
		t.Fatalf("reply at t=1: CALL_ME_LATER at %v, want [7.5] (the timer)", calls)
	}
	select {
	case <-tm.C:
		t.Fatal("the timer fired before its instant")
	default:
	}
	// At the call, a pod created in the same step must exist when the
	// timer fires.
	type firing struct {
		at     time.Time
		podErr error
	}
	fired := make(chan firing, 1)
	go func() {
		at := <-tm.C
		_, err := h.cs.CoreV1().Pods("default").Get(h.ctx, "w-2", metav1.GetOptions{})
		fired <- firing{at, err}
	}()
	h.send(7.5, batsim.RequestedCall{}, submitted("w!2"))
	f := chantest.Recv(t, fired, 10*time.Second, "the timer did not fire at its instant")
	if want := h.clock.Epoch().Add(7500 * time.Millisecond); !f.at.Equal(want) {
		t.Fatalf("the timer fired at %v, want %v", f.at, want)
	}
	if f.podErr != nil {
		t.Fatalf("when the timer fired, the pod of the job submitted at the same instant: %v", f.podErr)
	}
	h.send(100, batsim.Notify{Type: batsim.NoMoreStaticJobToSubmit})
	h.end(101)
}

// TestCallsAreAskedAfterBatsimsClock: a timer due less than callNoise
// (1 µs) after the step's instant, which Batsim could only call later
// (it refuses a call not after its clock when the call reaches its server,
// its messages taking time), is fired within the step: the clock moves to
// its instant, which is the reply's now, and no call is asked; a timer
// due 1.5 µs later is asked for at its instant.
func TestCallsAreAskedAfterBatsimsClock(t *testing.T) {
	h := startOnNode0(t, broker.Options{Quiet: 20 * time.Millisecond})
	soon := h.clock.NewTimer(h.clock.Epoch().Add(time.Second + time.Nanosecond))
	later := h.clock.NewTimer(h.clock.Epoch().Add(time.Second + 1500*time.Nanosecond))
	reply := h.send(1, submitted("w!1"))
	chantest.Recv(t, soon.C, 10*time.Second, "the timer due 1 ns after the step did not fire within it")
	if want := simclock.ToSeconds(time.Second + time.Nanosecond); reply.Now != want {
		t.Errorf("reply now %v, want %v (the imminent timer's instant)", reply.Now, want)
	}
	at, _ := calls(reply)
	if len(at) != 1 || at[0] != simclock.ToSeconds(time.Second+1500*time.Nanosecond) {
		t.Fatalf("CALL_ME_LATER at %v, want one at 1 s + 1.5 µs (the other timer)", at)
	}
	h.send(at[0], batsim.RequestedCall{})
	chantest.Recv(t, later.C, 10*time.Second, "the call did not fire the timer due at it")
	h.send(100, batsim.Notify{Type: batsim.NoMoreStaticJobToSubmit})
	h.end(101)
}

// countingPolicy says a step is done, exactly, and counts its checks.
type countingPolicy struct{ checks atomic.Int64 }

func (p *countingPolicy) Name() string                { return "counting" }
func (p *countingPolicy) Observe(store.Change)        {}
func (p *countingPolicy) Abilities() settle.Abilities { return settle.Abilities{} }
func (p *countingPolicy) Check(context.Context, settle.State) (settle.Verdict, error) {
	p.checks.Add(1)
	return settle.Verdict{Done: true, Exact: true}, nil
}

// TestControllersTimersLeaveTheSchedulerAlone: a controller's timer
// (Work) firing at a step where no pod is pending does not make the step
// ask the scheduler's policy (a Karpenter run's periodic reconciles made
// every such step scrape kube-scheduler: 8 of its 10 s of CPU while no pod
// waited); a time-virtualised scheduler's own timer (Wake) does.
func TestControllersTimersLeaveTheSchedulerAlone(t *testing.T) {
	p := &countingPolicy{}
	h := startOnNode0(t, broker.Options{Settle: p})
	work := h.clock.NewTimerOf(simclock.Work, h.clock.Epoch().Add(5*time.Second), nil)
	wake := h.clock.NewTimer(h.clock.Epoch().Add(8 * time.Second))
	h.send(1, batsim.RequestedCall{})
	h.send(5, batsim.RequestedCall{})
	chantest.Recv(t, work.C, 10*time.Second, "the controller's timer did not fire at its call")
	if n := p.checks.Load(); n != 0 {
		t.Errorf("the policy was asked %d times at steps with nothing pending and only a controller's timer, want 0", n)
	}
	h.send(8, batsim.RequestedCall{})
	chantest.Recv(t, wake.C, 10*time.Second, "the scheduler's timer did not fire at its call")
	if p.checks.Load() == 0 {
		t.Error("the scheduler's own timer fired and the step did not ask whether it was done")
	}
	h.send(100, batsim.Notify{Type: batsim.NoMoreStaticJobToSubmit})
	h.end(101)
}

// calls returns the CALL_ME_LATER instants and the other events of a reply.
func calls(m batsim.Message) (at []float64, others []batsim.EventData) {
	for _, ev := range m.Events {
		if c, ok := ev.Data.(batsim.CallMeLater); ok {
			at = append(at, c.At)
		} else {
			others = append(others, ev.Data)
		}
	}
	return at, others
}

func stuckJob(id string) batsim.JobSubmitted {
	j := submitted(id)
	j.Job.Profile = "stuck"
	return j
}

// TestPendingPodsGetBackedOffWakeUpsThenRejection: while a pod stays
// pending the broker asks for wake-ups 1, 2, 4... s later; with nothing left
// to run, it rejects the job after PendingTimeout.
func TestPendingPodsGetBackedOffWakeUpsThenRejection(t *testing.T) {
	h := startOnNode0(t, broker.Options{Quiet: 20 * time.Millisecond, PendingTimeout: 30 * time.Second})
	h.send(0, submitted("w!ok")) // the scheduler shows itself
	now := 1.0
	r := h.send(now, stuckJob("w!stuck"), batsim.Notify{Type: batsim.NoMoreStaticJobToSubmit})
	var gaps []float64
	for range 4 {
		at, _ := calls(r)
		if len(at) != 1 {
			t.Fatalf("reply at %g: CALL_ME_LATER %v, want one", now, at)
		}
		gaps = append(gaps, at[0]-now)
		now = at[0]
		r = h.send(now, batsim.RequestedCall{})
	}
	if want := []float64{1, 2, 4, 8}; !slices.Equal(gaps, want) {
		t.Fatalf("wake-ups %v s apart, want %v", gaps, want)
	}
	// The other job ends: nothing left to run. After PendingTimeout the
	// stuck job is rejected.
	next := now + 16 // the wake-up asked at the last step, still due
	r = h.send(20, batsim.JobCompleted{JobID: "w!ok", JobState: batsim.JobStateCompletedSuccessfully})
	for now = 20; now < 1000; {
		at, others := calls(r)
		if len(others) > 0 {
			if rj, ok := others[0].(batsim.RejectJob); !ok || rj.JobID != "w!stuck" || now < 31 {
				t.Fatalf("at %g: %+v, want REJECT_JOB w!stuck once pending 30 s", now, others)
			}
			h.end(now + 1)
			return
		}
		if len(at) == 1 {
			next = at[0]
		}
		if next <= now {
			t.Fatalf("at %g: no wake-up due while a pod is pending", now)
		}
		now = next
		r = h.send(now, batsim.RequestedCall{})
	}
	t.Fatal("the stuck job was never rejected")
}

// TestDecisionTimeIsChargedOnlyWhenAsked: the reply's now is the request's,
// unless ChargeDecisionTime adds the scheduler's wall time (scaled).
func TestDecisionTimeIsChargedOnlyWhenAsked(t *testing.T) {
	for _, charge := range []bool{false, true} {
		h := startOnNode0(t, broker.Options{Quiet: 20 * time.Millisecond, ChargeDecisionTime: charge, DecisionTimeScale: 1000})
		r := h.send(5, submitted("w!1"))
		switch {
		case !charge && r.Now != 5:
			t.Errorf("without charging: reply at %g, want 5", r.Now)
		case charge && r.Now <= 5:
			t.Errorf("charging 1000 s per wall second: reply at %g, want after 5", r.Now)
		}
		if charge {
			exec := r.Events[0]
			if exec.Timestamp != r.Now {
				t.Errorf("EXECUTE_JOB at %g, want at the charged time %g", exec.Timestamp, r.Now)
			}
			pod, err := h.cs.CoreV1().Pods("default").Get(h.ctx, "w-1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// (to the second: metav1.Time's precision in JSON)
			if want := simclock.DefaultEpoch.Add(simclock.FromSeconds(r.Now)).Truncate(time.Second); !pod.Status.StartTime.Time.Equal(want) {
				t.Errorf("pod started at %v, want the charged time %v", pod.Status.StartTime, want)
			}
		}
		h.end(r.Now + 1)
	}
}

// TestNoSchedulerIsReported: pending pods that no scheduler ever examines
// end the run with an error that says so, within StartTimeout.
func TestNoSchedulerIsReported(t *testing.T) {
	h := startOnNode0(t, broker.Options{Quiet: 20 * time.Millisecond, StartTimeout: 500 * time.Millisecond})
	reqCtx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	answered := make(chan error, 1)
	go func() {
		_, err := h.client.Request(reqCtx, batsim.Message{Now: 1, Events: []batsim.Event{{Timestamp: 1, Data: stuckJob("w!1")}}})
		answered <- err
	}()
	select {
	case err := <-h.done:
		if err == nil || !strings.Contains(err.Error(), "no scheduler has bound or examined any") {
			t.Fatalf("Run: %v, want an error saying no scheduler acted", err)
		}
	case err := <-answered:
		t.Fatalf("the broker answered (%v) although no scheduler acted", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no error 30 s after StartTimeout (500 ms)")
	}
}

// TestUnavailableMachines: Batsim's external events make a machine
// unavailable, then available. Its node goes NotReady with the
// node.kubernetes.io/unreachable taints (NoSchedule and NoExecute), and the
// job running on it is killed at that instant (KILL_JOB), as a lost
// machine runs nothing; when the machine comes back, its node is Ready and
// untainted again.
func TestUnavailableMachines(t *testing.T) {
	h := start(t, broker.Options{Quiet: 20 * time.Millisecond})
	h.send(0, begins("other", "node0")) // node0, where the test's scheduler binds, is resource 1
	set, err := batsim.ParseIntervalSet("1")
	if err != nil {
		t.Fatal(err)
	}
	lost := func() bool {
		t.Helper()
		n, err := h.cs.CoreV1().Nodes().Get(h.ctx, "node0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var noSchedule, noExecute bool
		for _, taint := range n.Spec.Taints {
			noSchedule = noSchedule || (taint.Key == corev1.TaintNodeUnreachable && taint.Effect == corev1.TaintEffectNoSchedule)
			noExecute = noExecute || (taint.Key == corev1.TaintNodeUnreachable && taint.Effect == corev1.TaintEffectNoExecute && taint.TimeAdded != nil)
		}
		ready := corev1.ConditionFalse
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = c.Status
			}
		}
		if noSchedule != noExecute || noSchedule != (ready == corev1.ConditionUnknown) {
			t.Fatalf("node0: taints %v, Ready %s: want both unreachable taints exactly when Ready is Unknown", n.Spec.Taints, ready)
		}
		return noSchedule
	}
	if r := h.send(1, submitted("w!1")); len(r.Events) != 1 {
		t.Fatalf("reply to JOB_SUBMITTED: %+v, want one EXECUTE_JOB", r.Events)
	}
	reply := h.send(5, batsim.Notify{Type: batsim.EventMachineUnavailable, Resources: set})
	if !lost() {
		t.Fatal("node0 is Ready after its machine became unavailable")
	}
	_, decisions := calls(reply)
	if len(decisions) != 1 || !slices.Contains(decisionKills(decisions[0]), batsim.JobID("w!1")) {
		t.Fatalf("the job on node0 was not killed at the instant its machine became unavailable: %+v", reply.Events)
	}
	h.send(5, batsim.JobKilled{JobIDs: []batsim.JobID{"w!1"}})
	h.send(9, batsim.Notify{Type: batsim.EventMachineAvailable, Resources: set})
	if lost() {
		t.Fatal("node0 is still NotReady after its machine became available")
	}
	h.end(10)
}

// decisionKills returns the jobs a KILL_JOB decision kills (none for
// another decision).
func decisionKills(d batsim.EventData) []batsim.JobID {
	if k, ok := d.(batsim.KillJob); ok {
		return k.JobIDs
	}
	return nil
}

// idlePolicy stands for a scheduler known to be idle at every instant (an
// exact settle policy).
type idlePolicy struct{}

func (idlePolicy) Name() string                { return "idle" }
func (idlePolicy) Observe(store.Change)        {}
func (idlePolicy) Abilities() settle.Abilities { return settle.Abilities{} }
func (idlePolicy) Check(context.Context, settle.State) (settle.Verdict, error) {
	return settle.Verdict{Done: true, Exact: true}, nil
}

// TestNoWakeUpsWhileTheSchedulerIsKnownIdle: with pods pending, a job
// running and the scheduler known idle, nothing can change before Batsim's
// next event: the broker asks for no call.
func TestNoWakeUpsWhileTheSchedulerIsKnownIdle(t *testing.T) {
	h := startOnNode0(t, broker.Options{Settle: idlePolicy{}})
	if at, _ := calls(h.send(1, submitted("w!ok"), stuckJob("w!stuck"))); len(at) != 0 {
		t.Fatalf("a job runs, the scheduler is idle: CALL_ME_LATER %v, want none", at)
	}
	h.send(11, batsim.JobCompleted{JobID: "w!ok", JobState: batsim.JobStateCompletedSuccessfully})
	h.end(12)
}

// TestPendingTimeoutAppliesPerJob: once nothing can free room, each pending
// job is rejected when it has waited PendingTimeout, not all at the first
// deadline.
func TestPendingTimeoutAppliesPerJob(t *testing.T) {
	h := startOnNode0(t, broker.Options{Settle: idlePolicy{}, PendingTimeout: 30 * time.Second})
	h.send(0, stuckJob("w!a"))
	r := h.send(10, stuckJob("w!b"), batsim.Notify{Type: batsim.NoMoreStaticJobToSubmit})
	rejected := map[string]float64{}
	now := 10.0
	for len(rejected) < 2 {
		at, others := calls(r)
		for _, ev := range others {
			if rj, ok := ev.(batsim.RejectJob); ok {
				rejected[string(rj.JobID)] = now
			}
		}
		if len(rejected) == 2 {
			break
		}
		if len(at) != 1 || at[0] <= now {
			t.Fatalf("at %g: CALL_ME_LATER %v, want one call at the next job's deadline (rejected so far %v)", now, at, rejected)
		}
		now = at[0]
		r = h.send(now, batsim.RequestedCall{})
	}
	if rejected["w!a"] != 30 || rejected["w!b"] != 40 {
		t.Errorf("rejected at %v, want w!a at 30 and w!b at 40 (30 s after each one's submission)", rejected)
	}
	h.end(now + 1)
}

// TestBackoffStartsAgainWhenRoomIsFreed: with a scheduler that only polls
// (the quiet policy), the back-off of the wake-ups starts again from
// BackoffMin when a job ends, not only when a pod gets bound.
func TestBackoffStartsAgainWhenRoomIsFreed(t *testing.T) {
	h := startOnNode0(t, broker.Options{Quiet: 20 * time.Millisecond})
	h.send(0, submitted("w!ok"))
	now := 1.0
	r := h.send(now, stuckJob("w!stuck"))
	for range 3 { // back off: 1, 2, 4
		at, _ := calls(r)
		now = at[0]
		r = h.send(now, batsim.RequestedCall{})
	}
	at, _ := calls(r)
	if gap := at[0] - now; gap != 8 {
		t.Fatalf("fourth wake-up %g s later, want 8", gap)
	}
	now = 9
	r = h.send(now, batsim.JobCompleted{JobID: "w!ok", JobState: batsim.JobStateCompletedSuccessfully})
	at, _ = calls(r)
	if len(at) != 1 || at[0]-now != 1 {
		t.Fatalf("after a job ended: CALL_ME_LATER %v at %g, want one 1 s later (back-off started again)", at, now)
	}
	h.end(now + 0.5)
}

// TestDynamicRunWithAnUnschedulablePodEnds: with dynamic jobs, a pod that
// never fits is rejected after PendingTimeout once nothing runs, and the
// broker then tells Batsim registration is over, so the run ends.
func TestDynamicRunWithAnUnschedulablePodEnds(t *testing.T) {
	h := start(t, broker.Options{Settle: idlePolicy{}, PendingTimeout: 30 * time.Second})
	b := begins("node0")
	b.Config.DynamicJobsEnabled, b.Config.DynamicJobsAcknowledged = true, true
	h.send(0, b)
	r := h.send(1, stuckJob("w!stuck"), batsim.Notify{Type: batsim.NoMoreStaticJobToSubmit})
	now := 1.0
	for range 100 {
		at, others := calls(r)
		for _, ev := range others {
			if n, ok := ev.(batsim.Notify); ok && n.Type == batsim.RegistrationFinished {
				h.end(now + 1)
				return
			}
		}
		if len(at) == 0 {
			t.Fatalf("at %g: no call and no registration_finished: the run would never end", now)
		}
		now = at[0]
		r = h.send(now, batsim.RequestedCall{})
	}
	t.Fatal("registration never finished")
}
