package qosdriven

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/batkube/batkube/examples/schedulers/qos/internal/ledger"
	"github.com/batkube/batkube/examples/schedulers/qos/internal/simtime"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "QoSDriven"

// QoSDriven is the plugin. Its methods are called by the framework.
type QoSDriven struct {
	cfg     config
	profile string
	ledger  *ledger.Ledger
	clock   *simtime.Clock
	logger  klog.Logger
	// stores are the scheduler's pod and node informers' stores: the
	// resourceVersion they hold keys the clock's readings.
	pods, nodes cache.Store
	unkeyed     atomic.Int64 // keys when the stores give none
	server      *http.Server
	// ended is closed, and replaced, whenever a pod ends.
	endedMu        sync.Mutex
	ended          chan struct{}
	catchUpTimeout time.Duration
}

var (
	_ fwk.QueueSortPlugin  = (*QoSDriven)(nil)
	_ fwk.PreEnqueuePlugin = (*QoSDriven)(nil)
	_ fwk.ReservePlugin    = (*QoSDriven)(nil)
	_ fwk.PreBindPlugin    = (*QoSDriven)(nil)
	_ fwk.PostBindPlugin   = (*QoSDriven)(nil)
)

// New is the plugin's factory, for app.WithPlugin(Name, New).
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	cfg, err := decodeArgs(obj)
	if err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx).WithName(Name)
	if h.KubeConfig() == nil || h.SharedInformerFactory() == nil {
		return nil, fmt.Errorf("%s: the framework gives no kubeconfig or informer factory", Name)
	}
	clock, err := simtime.New(ctx, h.KubeConfig(), logger, simtime.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	podInformer := h.SharedInformerFactory().Core().V1().Pods().Informer()
	nodeInformer := h.SharedInformerFactory().Core().V1().Nodes().Informer()
	pl := newPlugin(cfg, h.ProfileName(), clock, podInformer.GetStore(), nodeInformer.GetStore(), logger)
	if !clientfeatures.FeatureGates().Enabled(clientfeatures.AtomicFIFO) {
		logger.Info("Informer stores keep no resourceVersion (client-go feature AtomicFIFO off): the clock is read at every enqueue")
	}
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { pl.observe(ctx, obj) },
		UpdateFunc: func(_, obj any) { pl.observe(ctx, obj) },
		DeleteFunc: func(obj any) { pl.forget(ctx, obj) },
	}); err != nil {
		return nil, fmt.Errorf("%s: watching pods: %w", Name, err)
	}
	if cfg.debugAddress != "" {
		if err := pl.serveDebug(ctx); err != nil {
			return nil, err
		}
	}
	logger.Info("QoS-driven queue sort", "profile", pl.profile, "controllerLabel", cfg.controllerLabel, "sloKey", cfg.sloKey,
		"defaultSLO", cfg.defaultSLO, "safetyMargin", cfg.marginString(), "debugAddress", cfg.debugAddress, "simulatedTime", clock.Simulated())
	return pl, nil
}

// newPlugin returns a plugin for a profile, with an empty ledger; pods and
// nodes are the stores of the scheduler's pod and node informers.
func newPlugin(cfg config, profile string, clock *simtime.Clock, pods, nodes cache.Store, logger klog.Logger) *QoSDriven {
	return &QoSDriven{cfg: cfg, profile: profile, ledger: ledger.New(), clock: clock, logger: logger, pods: pods, nodes: nodes,
		ended: make(chan struct{}), catchUpTimeout: catchUpTimeout}
}

// Name implements fwk.Plugin.
func (pl *QoSDriven) Name() string { return Name }

// Less implements fwk.QueueSortPlugin: the pod whose controller has the
// smaller time to violation first; with a safety margin, among controllers
// both below it, the higher SLO first; then the higher priority, the older
// pod, and the name. It reads the time of the latest clock reading (no
// I/O) and takes the ledger's lock once.
func (pl *QoSDriven) Less(a, b fwk.QueuedEntityInfo) bool {
	pa, pb := podOf(a), podOf(b)
	if pa == nil || pb == nil {
		return pa != nil // entities without pods (none in practice) last
	}
	ua, ub, okA, okB := pl.ledger.Urgencies(pa.UID, pb.UID, pl.clock.Now())
	if !okA {
		ua = pl.unknownUrgency(pa)
	}
	if !okB {
		ub = pl.unknownUrgency(pb)
	}
	if c := pl.compareUrgency(ua, ub); c != 0 {
		return c < 0
	}
	if prA, prB := a.GetPriority(), b.GetPriority(); prA != prB {
		return prA > prB
	}
	if ca, cb := pa.CreationTimestamp.Time, pb.CreationTimestamp.Time; !ca.Equal(cb) {
		return ca.Before(cb)
	}
	if pa.Namespace != pb.Namespace {
		return pa.Namespace < pb.Namespace
	}
	return pa.Name < pb.Name
}

// compareUrgency orders two controllers' urgencies: negative when a goes
// first, positive when b does, zero for a tie.
func (pl *QoSDriven) compareUrgency(a, b ledger.Urgency) int {
	if pl.cfg.hasMargin && a.TTV < pl.cfg.safetyMargin && b.TTV < pl.cfg.safetyMargin && a.SLO != b.SLO {
		return cmp.Compare(b.SLO, a.SLO) // the higher SLO first
	}
	return cmp.Compare(a.TTV, b.TTV)
}

// unknownUrgency is the urgency of a pod the ledger does not know (every
// queued pod is admitted at PreEnqueue, so only in a race with its
// deletion): that of a new controller.
func (pl *QoSDriven) unknownUrgency(pod *corev1.Pod) ledger.Urgency {
	id, _ := pl.cfg.identify(pod)
	return ledger.Urgency{SLO: id.SLO}
}

// podOf returns the pod of a queued entity: the pod itself, or the first
// pod of a pod group.
func podOf(e fwk.QueuedEntityInfo) *corev1.Pod {
	switch e := e.(type) {
	case interface{ GetPodInfo() fwk.PodInfo }:
		if pi := e.GetPodInfo(); pi != nil {
			return pi.GetPod()
		}
	case interface{ GetUnscheduledPods() []*corev1.Pod }:
		if pods := e.GetUnscheduledPods(); len(pods) > 0 {
			return pods[0]
		}
	}
	return nil
}

// PreEnqueue implements fwk.PreEnqueuePlugin. It never gates a pod: it
// brings the clock up to the instant of the changes the scheduler is
// acting on (one reading per change of the informers' stores) and admits
// the pod into the ledger, so that Less finds both ready.
func (pl *QoSDriven) PreEnqueue(ctx context.Context, pod *corev1.Pod) *fwk.Status {
	if _, read := pl.clock.ReadIfChanged(ctx, pl.storeKey()); read {
		pl.catchUp(ctx)
	}
	pl.observePod(ctx, pod)
	return nil
}

// catchUpTimeout bounds the wait for the deletions of pods gone from the
// store (they reach the plugin's handler within microseconds).
const catchUpTimeout = 10 * time.Second

// catchUp brings the ledger up to the scheduler's pod store, which an
// informer updates before it tells any handler, so that the accounts are
// those of the changes the scheduler is acting on even if the plugin's own
// handler lags: pods the store has are admitted and moved as their status
// says (with the instants it gives); pods it no longer has have finished or
// been deleted, and the instant comes with the deletion, already handed to
// the plugin's handler: catchUp waits for it.
func (pl *QoSDriven) catchUp(ctx context.Context) {
	// The pods known before the store is listed: one of them missing from
	// the list has left the store (a pod admitted later, by the handler,
	// may be missing from it only because it came after).
	known := pl.ledger.Open()
	inStore := map[types.UID]bool{}
	for _, obj := range pl.pods.List() {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Spec.SchedulerName != pl.profile {
			continue
		}
		inStore[pod.UID] = true
		if phase, seen := pl.ledger.PhaseOf(pod.UID); !seen || phase < storedPhase(pod) {
			pl.observePod(ctx, pod)
		}
	}
	var gone []types.UID
	for _, uid := range known {
		if !inStore[uid] {
			gone = append(gone, uid)
		}
	}
	timeout := time.NewTimer(pl.catchUpTimeout)
	defer timeout.Stop()
	for {
		ended := pl.endedSignal()
		gone = slices.DeleteFunc(gone, func(uid types.UID) bool {
			_, open := pl.ledger.PhaseOf(uid)
			return !open
		})
		if len(gone) == 0 {
			return
		}
		select {
		case <-ended:
		case <-ctx.Done():
			return
		case <-timeout.C:
			at := pl.clock.Read(ctx)
			pl.logger.Error(nil, "Pods gone from the informer's store, their deletion not handled: ending them now", "pods", gone, "after", pl.catchUpTimeout)
			for _, uid := range gone {
				pl.ledger.Move(uid, ledger.Ended, at)
			}
			return
		}
	}
}

// storedPhase is the phase a pod's object says it is in.
func storedPhase(pod *corev1.Pod) ledger.Phase {
	if _, started := startedAt(pod); started {
		return ledger.Running
	}
	if pod.Spec.NodeName != "" {
		return ledger.Binding
	}
	return ledger.Pending
}

// endedSignal returns a channel closed at the next end of a pod.
func (pl *QoSDriven) endedSignal() <-chan struct{} {
	pl.endedMu.Lock()
	defer pl.endedMu.Unlock()
	return pl.ended
}

// storeKey is the resourceVersion stored by the scheduler's pod and node
// informers. Stores that do not report it (client-go's AtomicFIFO off) give
// a key never seen before, so that every keyed reading reads.
func (pl *QoSDriven) storeKey() string {
	pods, nodes := pl.pods.LastStoreSyncResourceVersion(), pl.nodes.LastStoreSyncResourceVersion()
	if pods == "" && nodes == "" {
		return strconv.FormatInt(pl.unkeyed.Add(1), 10)
	}
	return pods + "/" + nodes
}

// Reserve implements fwk.ReservePlugin; only its Unreserve matters.
func (pl *QoSDriven) Reserve(context.Context, fwk.CycleState, *corev1.Pod, string) *fwk.Status {
	return nil
}

// Unreserve implements fwk.ReservePlugin: a pod whose binding failed waits
// again.
func (pl *QoSDriven) Unreserve(ctx context.Context, _ fwk.CycleState, pod *corev1.Pod, _ string) {
	if phase, ok := pl.ledger.PhaseOf(pod.UID); ok && phase == ledger.Binding {
		at := pl.clock.Read(ctx)
		pl.move(pod, ledger.Pending, at)
		pl.logger.V(4).Info("Binding failed: waiting again", "pod", klog.KObj(pod), "at", pl.clock.SinceStart(at))
	}
}

// PreBindPreFlight implements fwk.PreBindPlugin: PreBind runs for every
// pod, in parallel with other PreBind plugins.
func (pl *QoSDriven) PreBindPreFlight(context.Context, fwk.CycleState, *corev1.Pod, string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	return &fwk.PreBindPreFlightResult{AllowParallel: true}, nil
}

// PreBind implements fwk.PreBindPlugin: the pod stops waiting and starts
// binding, at the simulated instant read now.
func (pl *QoSDriven) PreBind(ctx context.Context, _ fwk.CycleState, pod *corev1.Pod, node string) *fwk.Status {
	at := pl.clock.Read(ctx)
	pl.admit(pod) // not observePod: the assumed pod has its node already
	pl.move(pod, ledger.Binding, at)
	return nil
}

// PostBind implements fwk.PostBindPlugin: the binding is done; the pod
// counts as binding until it runs (its status's startTime), which the
// informer reports.
func (pl *QoSDriven) PostBind(ctx context.Context, _ fwk.CycleState, pod *corev1.Pod, node string) {
	if pl.logger.V(4).Enabled() {
		at := pl.clock.Read(ctx)
		pl.logger.V(4).Info("Bound", "pod", klog.KObj(pod), "node", node, "at", pl.clock.SinceStart(at))
	}
}

// move moves a pod in the ledger, logging the move at verbosity 5.
func (pl *QoSDriven) move(pod *corev1.Pod, to ledger.Phase, at time.Time) {
	if !pl.ledger.Move(pod.UID, to, at) {
		return
	}
	pl.logger.V(5).Info("Pod moved", "pod", klog.KObj(pod), "phase", to, "at", pl.clock.SinceStart(at))
	if to == ledger.Ended {
		pl.endedMu.Lock()
		close(pl.ended)
		pl.ended = make(chan struct{})
		pl.endedMu.Unlock()
	}
}

// Close implements io.Closer: the framework calls it at shutdown.
func (pl *QoSDriven) Close() error {
	if pl.server == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return pl.server.Shutdown(ctx)
}

// observe handles a pod added or updated in the scheduler's informer.
func (pl *QoSDriven) observe(ctx context.Context, obj any) {
	if pod, ok := obj.(*corev1.Pod); ok {
		pl.observePod(ctx, pod)
	}
}

// observePod brings the ledger up to a pod's state: admitted (pending since
// its creation), binding if bound but not started, running since its
// start, ended if finished.
func (pl *QoSDriven) observePod(ctx context.Context, pod *corev1.Pod) {
	if pod.Spec.SchedulerName != pl.profile {
		return
	}
	if terminal(pod) {
		pl.end(ctx, pod)
		return
	}
	pl.admit(pod)
	if at, ok := startedAt(pod); ok {
		pl.move(pod, ledger.Running, at)
		return
	}
	if phase, _ := pl.ledger.PhaseOf(pod.UID); pod.Spec.NodeName != "" && phase == ledger.Pending {
		// Bound by another scheduler, or before this one started (its
		// own bindings pass PreBind first): binding since the binding.
		at, ok := scheduledAt(pod)
		if !ok {
			at = pl.clock.Read(ctx)
		}
		pl.move(pod, ledger.Binding, at)
	}
}

// admit enters the pod in the ledger, waiting since its creation, unless it
// is there already.
func (pl *QoSDriven) admit(pod *corev1.Pod) {
	id, badSLO := pl.cfg.identify(pod)
	if pl.ledger.Admit(pod.UID, id, pod.CreationTimestamp.Time) && badSLO {
		pl.logger.Info("Invalid SLO: using the default", "pod", klog.KObj(pod), "key", pl.cfg.sloKey, "defaultSLO", pl.cfg.defaultSLO)
	}
}

// forget handles a pod deleted from the scheduler's informer: deleted, or
// finished (the informer keeps only unfinished pods).
func (pl *QoSDriven) forget(ctx context.Context, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		d, isTombstone := obj.(cache.DeletedFinalStateUnknown)
		if !isTombstone {
			return
		}
		if pod, ok = d.Obj.(*corev1.Pod); !ok {
			return
		}
	}
	if pod.Spec.SchedulerName == pl.profile {
		pl.end(ctx, pod)
	}
}

// end ends a pod at the instant its containers finished, if its status
// says it, else now.
func (pl *QoSDriven) end(ctx context.Context, pod *corev1.Pod) {
	if _, known := pl.ledger.PhaseOf(pod.UID); !known {
		return
	}
	at, ok := finishedAt(pod)
	if !ok {
		at = pl.clock.Read(ctx)
	}
	pl.move(pod, ledger.Ended, at)
}

// serveDebug serves the debug table on cfg.debugAddress until ctx ends or
// the plugin is closed.
func (pl *QoSDriven) serveDebug(ctx context.Context) error {
	l, err := net.Listen("tcp", pl.cfg.debugAddress)
	if err != nil {
		return fmt.Errorf("%s: debug address: %w", Name, err)
	}
	pl.server = &http.Server{Handler: pl.debugHandler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		if err := pl.server.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			pl.logger.Error(err, "Serving the debug table")
		}
	}()
	go func() {
		<-ctx.Done()
		_ = pl.Close()
	}()
	return nil
}
