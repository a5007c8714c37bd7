// Command random is a Kubernetes scheduler that places each pending pod on
// a node chosen at random among those with room for it, in some 150 lines
// a student can read. It follows the cluster through client-go informers
// (as kube-scheduler does), binds with a Binding, and sends Batkube's idle
// signal when it has nothing left to do, so that simulated time moves on
// the instant it is done. Its choices come from --seed: it decides on whole
// states of the cluster (every change up to the one the server reports),
// so the same seed gives the same placements run after run, and another
// seed other placements.
//
//	batkube-run -p PLATFORM -w WORKLOAD --scheduler-cmd 'bin/random --kubeconfig {kubeconfig} --seed 7'
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/batkube/batkube/examples/internal/exmain"
	"github.com/batkube/batkube/examples/internal/room"
)

type options struct {
	exmain.Options
	Seed uint64 `long:"seed" default:"1" description:"seed of the random choices: the same seed gives the same placements"`
}

func main() { exmain.Main("random", run) }

// scheduler holds the informers' view of the cluster and the random source.
type scheduler struct {
	opts  options
	cs    kubernetes.Interface
	pods  cache.Indexer
	nodes cache.Indexer
	rand  *rand.Rand
	// seen is, per resource ("pods", "nodes"), the resourceVersion of the
	// latest change its informer delivered: each informer delivers its own
	// resource's changes in order, but not in step with the other's.
	seen    map[string]*atomic.Uint64
	changed chan struct{} // a token when the informers delivered something
	// assumed are the pods bound but not yet seen bound, with their node.
	assumed map[string]string
}

func run(ctx context.Context, opts options) error {
	cs, idle, err := exmain.ClientsWithIdleSignal(opts.Kubeconfig, "random")
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	podInformer, nodeInformer := factory.Core().V1().Pods().Informer(), factory.Core().V1().Nodes().Informer()
	s := &scheduler{opts: opts, cs: cs, rand: rand.New(rand.NewPCG(opts.Seed, 0)),
		seen:    map[string]*atomic.Uint64{"pods": new(atomic.Uint64), "nodes": new(atomic.Uint64)},
		changed: make(chan struct{}, 1), assumed: map[string]string{},
		pods: podInformer.GetIndexer(), nodes: nodeInformer.GetIndexer()}
	for resource, inf := range map[string]cache.SharedIndexInformer{"pods": podInformer, "nodes": nodeInformer} {
		saw := func(obj any) { s.saw(resource, obj) }
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: saw, UpdateFunc: func(_, obj any) { saw(obj) }, DeleteFunc: saw}); err != nil {
			return err
		}
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	factory.WaitForCacheSync(ctx.Done())
	// Nothing decided yet: the first answer comes once the broker has
	// written a whole instant, so that the first draws, like every later
	// one, are made on a whole state (the informers may have listed in the
	// middle of the first instant's writes).
	seen := "0"
	for {
		// Idle at what we saw; the server answers at once if something
		// newer exists (our own bindings included), else when the next
		// change comes, and only once the broker has written all of it.
		answer, err := idle.IdleAndWait(ctx, seen)
		if err != nil {
			return err
		}
		if answer.Ended {
			return nil
		}
		// Decide on a whole state: wait until each informer has delivered
		// its resource's latest change up to the one the server reports.
		for !s.caughtUp(answer.Latest) {
			select {
			case <-s.changed:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		seen = answer.ResourceVersion
		if _, err := s.schedule(ctx); err != nil {
			return err
		}
	}
}

// caughtUp reports whether each informer has delivered its resource's
// change of latest (the server's answer: resourceVersions by resource).
func (s *scheduler) caughtUp(latest map[string]string) bool {
	for resource, seen := range s.seen {
		want, _ := strconv.ParseUint(latest[resource], 10, 64)
		if seen.Load() < want {
			return false
		}
	}
	return true
}

// saw records the resourceVersion of a change of resource an informer
// delivered.
func (s *scheduler) saw(resource string, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, err := meta.Accessor(obj); err == nil {
		rv, _ := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
		seen := s.seen[resource]
		for old := seen.Load(); rv > old && !seen.CompareAndSwap(old, rv); old = seen.Load() {
		}
	}
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// schedule binds each pending pod to a random node with room for it and
// returns how many it bound.
func (s *scheduler) schedule(ctx context.Context) (int, error) {
	var nodes []*corev1.Node
	free := map[string]corev1.ResourceList{}
	for _, obj := range s.nodes.List() {
		n := obj.(*corev1.Node)
		if !n.Spec.Unschedulable {
			nodes = append(nodes, n)
			free[n.Name] = n.Status.Allocatable.DeepCopy()
		}
	}
	slices.SortFunc(nodes, func(a, b *corev1.Node) int { return compareNames(a.Name, b.Name) })
	var pending []*corev1.Pod
	for _, obj := range s.pods.List() {
		p := obj.(*corev1.Pod)
		key := p.Namespace + "/" + p.Name
		node := p.Spec.NodeName
		if node == "" {
			node = s.assumed[key]
		} else {
			delete(s.assumed, key)
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
		case node != "":
			room.Take(free[node], room.Requests(p))
		case p.Spec.SchedulerName == s.opts.SchedulerName && p.DeletionTimestamp == nil:
			pending = append(pending, p)
		}
	}
	// A fixed order, so that the same states give the same random draws.
	slices.SortFunc(pending, func(a, b *corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return compareNames(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	bound := 0
	for _, p := range pending {
		req := room.Requests(p)
		var feasible []string
		for _, n := range nodes {
			if room.Admits(n, p) && room.Fits(free[n.Name], req) {
				feasible = append(feasible, n.Name)
			}
		}
		if len(feasible) == 0 {
			continue // it waits for room
		}
		node := feasible[s.rand.IntN(len(feasible))]
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
			Target: corev1.ObjectReference{Kind: "Node", Name: node}}
		if err := s.cs.CoreV1().Pods(p.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
			return bound, fmt.Errorf("binding %s/%s to %s: %w", p.Namespace, p.Name, node, err)
		}
		s.assumed[p.Namespace+"/"+p.Name] = node
		room.Take(free[node], req)
		bound++
	}
	return bound, nil
}

// compareNames orders names by length then bytes, so that node2 comes
// before node10.
func compareNames(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
