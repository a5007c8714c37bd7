package e2e

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/batkube/batkube/pkg/settle/signalclient"
)

// firstFit is a trivial scheduler: it binds pending pods, first come first
// served, to the first node with room for their cpu and memory requests,
// and frees the room when a pod ends. A pod that does not fit waits, and
// so do the pods after it (strict FIFO), so that a backlog of 100,000 pods
// costs nothing per event. It stands in for kube-scheduler where the
// benchmark or test measures Batkube, not the scheduler.
type firstFit struct {
	cs kubernetes.Interface
	// idle, if set, receives the stand-in's idle signal: once it has
	// handled every event it has been sent and placed what it can.
	idle   *signalclient.Client
	seenRV uint64 // the resourceVersion of the latest event handled
	nodes  []string
	free   map[string]*room
	placed map[string]placement // pod → where it runs, and what it takes
	// waiting pods, in the order they came; head is the first one.
	waiting []*corev1.Pod
	head    int
	// blocked: the head did not fit, and no room was freed since.
	blocked bool
}

// room is what a node has left, in millicores and bytes.
type room struct{ cpu, mem int64 }

type placement struct {
	node string
	take room
}

// scheduleFirstFit makes the first-fit stand-in the simulation's scheduler,
// with its idle signal.
func (s *simulation) scheduleFirstFit(tb testing.TB) {
	s.cfg.NoScheduler = true
	s.onReady = func(s *simulation) {
		ff := &firstFit{cs: s.client, idle: s.idleClient("first-fit")}
		go ff.run(context.Background(), tb)
	}
}

func (f *firstFit) run(ctx context.Context, b testing.TB) {
	f.free, f.placed = map[string]*room{}, map[string]placement{}
	nw, err := f.cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		b.Errorf("first-fit: %v", err)
		return
	}
	defer nw.Stop()
	pw, err := f.cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		b.Errorf("first-fit: %v", err)
		return
	}
	defer pw.Stop()
	nodes, pods := nw.ResultChan(), pw.ResultChan()
	// No event for a moment: say so (each signal names the latest event
	// handled, so an early one does no harm).
	quiet := time.NewTimer(time.Hour)
	defer quiet.Stop()
	signalled := uint64(0)
	for nodes != nil || pods != nil {
		var ev watch.Event
		var open bool
		var handle func(context.Context, watch.Event)
		select {
		case <-quiet.C:
			if f.idle != nil && f.seenRV != signalled {
				signalled = f.seenRV
				_, err := f.idle.Idle(ctx, strconv.FormatUint(f.seenRV, 10))
				if err != nil && ctx.Err() == nil && !signalclient.ServerGone(err) { // gone: the run is over
					b.Logf("first-fit: idle signal: %v", err)
				}
			}
			continue
		case ev, open = <-nodes:
			if !open {
				nodes = nil
				continue
			}
			handle = f.nodeEvent
		case ev, open = <-pods:
			if !open {
				pods = nil
				continue
			}
			handle = f.podEvent
		}
		f.saw(ev.Object)
		quiet.Reset(2 * time.Millisecond)
		handle(ctx, ev)
	}
}

// nodeEvent takes a node added as room to place the waiting pods on.
func (f *firstFit) nodeEvent(ctx context.Context, ev watch.Event) {
	if n, isNode := ev.Object.(*corev1.Node); isNode && ev.Type == watch.Added {
		f.nodes = append(f.nodes, n.Name)
		f.free[n.Name] = &room{n.Status.Allocatable.Cpu().MilliValue(), n.Status.Allocatable.Memory().Value()}
		f.blocked = false
		f.retry(ctx)
	}
}

// podEvent queues a pod created pending, and frees the room of a placed
// pod that has ended or been deleted.
func (f *firstFit) podEvent(ctx context.Context, ev watch.Event) {
	p, isPod := ev.Object.(*corev1.Pod)
	if !isPod {
		return
	}
	switch {
	case ev.Type == watch.Added && p.Spec.NodeName == "":
		f.waiting = append(f.waiting, p)
		f.retry(ctx)
	case ev.Type == watch.Deleted || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
		if pl, ok := f.placed[p.Name]; ok {
			delete(f.placed, p.Name)
			r := f.free[pl.node]
			r.cpu, r.mem = r.cpu+pl.take.cpu, r.mem+pl.take.mem
			f.blocked = false
			f.retry(ctx)
		}
	}
}

// saw notes the resourceVersion of an event's object.
func (f *firstFit) saw(obj runtime.Object) {
	if m, err := meta.Accessor(obj); err == nil {
		if rv, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64); err == nil {
			f.seenRV = max(f.seenRV, rv)
		}
	}
}

// retry places the waiting pods in order, up to the first that does not fit.
func (f *firstFit) retry(ctx context.Context) {
	if f.blocked {
		return
	}
	for f.head < len(f.waiting) {
		if !f.place(ctx, f.waiting[f.head]) {
			f.blocked = true
			return
		}
		f.waiting[f.head] = nil
		f.head++
	}
	if f.head == len(f.waiting) {
		f.waiting, f.head = f.waiting[:0], 0
	}
}

func (f *firstFit) place(ctx context.Context, p *corev1.Pod) bool {
	req := podRequests(p)
	take := room{req.Cpu().MilliValue(), req.Memory().Value()}
	for _, n := range f.nodes {
		r := f.free[n]
		if take.cpu > r.cpu || take.mem > r.mem {
			continue
		}
		err := f.cs.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name},
			Target: corev1.ObjectReference{Kind: "Node", Name: n}}, metav1.CreateOptions{})
		if err != nil {
			return true // gone or already bound: nothing to place
		}
		r.cpu, r.mem = r.cpu-take.cpu, r.mem-take.mem
		f.placed[p.Name] = placement{n, take}
		return true
	}
	return false
}

func podRequests(p *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourceCPU: resource.Quantity{}, corev1.ResourceMemory: resource.Quantity{}}
	for _, c := range p.Spec.Containers {
		add(out, c.Resources.Requests, 1)
	}
	return out
}

func add(to, r corev1.ResourceList, sign int) {
	for k, v := range r {
		q := to[k]
		if sign > 0 {
			q.Add(v)
		} else {
			q.Sub(v)
		}
		to[k] = q
	}
}
