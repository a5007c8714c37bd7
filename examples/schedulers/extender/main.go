// Command extender is a kube-scheduler extender after the "safe" agent of
// extender-based schedulers: it keeps nodes out of overload. kube-scheduler
// calls it over HTTP (the extenders section of its configuration):
//
//   - filter: the nodes whose cpu utilisation would pass --overload once
//     the pod is placed are filtered out, with the reason;
//
//   - prioritize: the others are scored for balance, the emptier after
//     placement the better (0 to 10);
//
//   - bind: it binds the pod itself, so it knows every placement the moment
//     it is made.
//
// Safe means never above the threshold, whatever the timing: kube-scheduler
// filters the next pod while the previous one is still on its way to being
// bound, so a pod that passed the filter counts, until its binding comes,
// on every node it may land on.
//
// And exact: the pods on the nodes are read from the API server at each
// call (those bound and not finished), not from an informer. kube-scheduler
// retries a refused pod when its own informer shows a pod ending; an
// extender whose informer had not shown that end yet would refuse the pod
// again, with room on the node, and kube-scheduler would not ask again
// before the next event.
//
//	batkube-run -p … -w … --scheduler-config examples/schedulers/extender/config.yaml \
//	--sidecar-cmd 'bin/extender --kubeconfig {kubeconfig} --listen 127.0.0.1:{port:extender} --overload 0.75'
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/batkube/batkube/examples/internal/exmain"
)

type options struct {
	Kubeconfig string  `long:"kubeconfig" env:"KUBECONFIG" required:"true" description:"kubeconfig of the cluster (Batkube's server)"`
	Listen     string  `long:"listen" default:"127.0.0.1:8888" description:"address the extender serves kube-scheduler on"`
	Overload   float64 `long:"overload" default:"0.75" description:"a node whose cpu utilisation (requests over allocatable) would pass this once the pod is placed is filtered out"`
	FailRate   float64 `long:"fail-rate" value-name:"P" default:"0" description:"answer a filter call with HTTP 500 with probability P, as a flaky extender would (kube-scheduler then retries the pod after its error back-off); drawn from a generator seeded with --seed, so a run's failures come in the same order"`
	Seed       uint64  `long:"seed" default:"1" description:"seed of --fail-rate's draws"`
}

// The extender protocol's messages (k8s.io/kube-scheduler/extender/v1),
// whose JSON keys are the Go field names.
type (
	extenderArgs struct {
		Pod       *corev1.Pod
		Nodes     *corev1.NodeList
		NodeNames *[]string
	}
	filterResult struct {
		NodeNames   *[]string         `json:"NodeNames,omitempty"`
		FailedNodes map[string]string `json:"FailedNodes,omitempty"`
		Error       string            `json:"Error,omitempty"`
	}
	hostPriority struct {
		Host  string
		Score int64
	}
	bindingArgs struct {
		PodName, PodNamespace string
		PodUID                types.UID
		Node                  string
	}
	bindingResult struct {
		Error string `json:"Error,omitempty"`
	}
)

const maxScore = 10

// extender tracks the cpu requested on each node: the pods bound (read
// from the API server), those it is binding and those on their way to it.
type extender struct {
	opts  options
	cs    kubernetes.Interface
	nodes listersv1.NodeLister
	mu    sync.Mutex
	// assumed are the pods it bound, by namespace/name, with their node
	// and cpu, until a listing of the API server that started after their
	// binding was stored has shown them (or not: they ended); inFlight the
	// pods that passed the filter and are not bound yet, with the nodes
	// they passed.
	assumed  map[string]assumedPod
	inFlight map[string]inFlightPod
	// lists counts the listings started: a binding stored when it read N
	// is in every listing started after, whose number is N or more.
	lists uint64
	// listing makes one usage at a time (kube-scheduler asks one at a time
	// anyway): a listing that forgets a pod it shows bound, or one that
	// ended, must not overtake an older one still on its way.
	listing sync.Mutex
	// filteredUsage is the usage the latest filter call read, for the pod
	// filteredPod: the prioritize call that follows in the same cycle
	// scores with it rather than list again (scores need no newer view).
	filteredPod   string
	filteredUsage map[string]int64
	// filtered counts the nodes filtered out, for the log at exit.
	calls, filtered, failed atomic.Int64
	// rng draws the injected failures (--fail-rate).
	rngMu sync.Mutex
	rng   *rand.Rand
}

// fails draws whether this filter call fails (--fail-rate).
func (e *extender) fails() bool {
	if e.opts.FailRate <= 0 {
		return false
	}
	e.rngMu.Lock()
	defer e.rngMu.Unlock()
	if e.rng.Float64() >= e.opts.FailRate {
		return false
	}
	e.failed.Add(1)
	return true
}

type assumedPod struct {
	node string
	cpu  int64 // millicores
	// bound: its binding is stored, at listing boundAt (see extender.lists).
	bound   bool
	boundAt uint64
}

type inFlightPod struct {
	nodes []string
	cpu   int64
}

func main() { exmain.Main("extender", run) }

func run(ctx context.Context, opts options) error {
	_, cs, err := exmain.Clients(opts.Kubeconfig)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	e, err := newExtender(opts, cs, factory)
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	factory.WaitForCacheSync(ctx.Done())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /filter", e.filter)
	mux.HandleFunc("POST /prioritize", e.prioritize)
	mux.HandleFunc("POST /bind", e.bind)
	l, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	slog.Info("extender serving", "address", l.Addr().String(), "overload", opts.Overload)
	err = srv.Serve(l)
	slog.Info("extender stopped", "filterCalls", e.calls.Load(), "nodesFilteredOut", e.filtered.Load(), "failedCalls", e.failed.Load())
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// newExtender makes the extender of the cluster cs, whose node lister and
// pod deletions come from factory (to be started by the caller).
func newExtender(opts options, cs kubernetes.Interface, factory informers.SharedInformerFactory) (*extender, error) {
	e := &extender{opts: opts, cs: cs, assumed: map[string]assumedPod{}, inFlight: map[string]inFlightPod{},
		rng: rand.New(rand.NewPCG(opts.Seed, 1)), nodes: factory.Core().V1().Nodes().Lister()}
	// A pod gone (deleted before it was bound, or finished and removed)
	// frees what was assumed of it, even if it was never seen bound.
	_, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				e.forget(p.Namespace + "/" + p.Name)
			}
		}})
	return e, err
}

func (e *extender) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.assumed, key)
	delete(e.inFlight, key)
}

// runningPods selects the pods bound and not finished: those that hold
// room on their nodes.
const runningPods = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"

// usage returns the cpu requested on each node (millicores), counting the
// pods in flight but the one being placed (key). The bound pods are read
// from the API server, so that the extender knows at least every pod end
// that kube-scheduler, which asks, knows of.
func (e *extender) usage(ctx context.Context, key string) (map[string]int64, error) {
	e.listing.Lock()
	defer e.listing.Unlock()
	e.mu.Lock()
	thisListing := e.lists
	e.lists++
	e.mu.Unlock()
	pods, err := e.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: runningPods})
	if err != nil {
		return nil, fmt.Errorf("listing the running pods: %w", err)
	}
	used := map[string]int64{}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range pods.Items {
		p := &pods.Items[i]
		k := p.Namespace + "/" + p.Name
		delete(e.assumed, k)
		delete(e.inFlight, k)
		used[p.Spec.NodeName] += podCPU(p)
	}
	for k, a := range e.assumed {
		if a.bound && a.boundAt <= thisListing {
			delete(e.assumed, k) // stored before this listing, which does not show it: ended
			continue
		}
		used[a.node] += a.cpu
	}
	for k, f := range e.inFlight {
		if k != key {
			for _, node := range f.nodes {
				used[node] += f.cpu
			}
		}
	}
	return used, nil
}

// utilisation is the node's cpu utilisation once cpu more is placed on it.
// A node the informer has not shown yet (just added) is read from the API
// server.
func (e *extender) utilisation(ctx context.Context, node string, used map[string]int64, cpu int64) (float64, error) {
	n, err := e.nodes.Get(node)
	if apierrors.IsNotFound(err) {
		n, err = e.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	}
	if err != nil {
		return 0, err
	}
	alloc := n.Status.Allocatable.Cpu().MilliValue()
	if alloc <= 0 {
		return 1, nil
	}
	return float64(used[node]+cpu) / float64(alloc), nil
}

func (e *extender) filter(w http.ResponseWriter, r *http.Request) {
	var args extenderArgs
	if !decode(w, r, &args) {
		return
	}
	e.calls.Add(1)
	if e.fails() {
		http.Error(w, "injected failure (--fail-rate)", http.StatusInternalServerError)
		return
	}
	key := args.Pod.Namespace + "/" + args.Pod.Name
	used, err := e.usage(r.Context(), key)
	if err != nil {
		writeJSON(w, filterResult{Error: err.Error()})
		return
	}
	cpu := podCPU(args.Pod)
	pass, failed := []string{}, map[string]string{}
	for _, node := range candidates(args) {
		u, err := e.utilisation(r.Context(), node, used, cpu)
		switch {
		case err != nil:
			failed[node] = err.Error()
		case u > e.opts.Overload:
			failed[node] = fmt.Sprintf("cpu utilisation would be %.0f%%, above the %.0f%% overload threshold", 100*u, 100*e.opts.Overload)
		default:
			pass = append(pass, node)
		}
	}
	e.filtered.Add(int64(len(failed)))
	e.mu.Lock()
	e.filteredPod, e.filteredUsage = key, used
	if len(pass) > 0 {
		e.inFlight[key] = inFlightPod{nodes: pass, cpu: cpu}
	} else {
		delete(e.inFlight, key)
	}
	e.mu.Unlock()
	writeJSON(w, filterResult{NodeNames: &pass, FailedNodes: failed})
}

func (e *extender) prioritize(w http.ResponseWriter, r *http.Request) {
	var args extenderArgs
	if !decode(w, r, &args) {
		return
	}
	key := args.Pod.Namespace + "/" + args.Pod.Name
	e.mu.Lock()
	used := e.filteredUsage
	if e.filteredPod != key {
		used = nil
	}
	e.mu.Unlock()
	if used == nil {
		var err error
		if used, err = e.usage(r.Context(), key); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	cpu := podCPU(args.Pod)
	scores := []hostPriority{}
	for _, node := range candidates(args) {
		u, err := e.utilisation(r.Context(), node, used, cpu)
		if err != nil {
			u = 1
		}
		scores = append(scores, hostPriority{Host: node, Score: int64(float64(maxScore) * (1 - min(u, 1)))})
	}
	writeJSON(w, scores)
}

func (e *extender) bind(w http.ResponseWriter, r *http.Request) {
	var args bindingArgs
	if !decode(w, r, &args) {
		return
	}
	key := args.PodNamespace + "/" + args.PodName
	// Assumed on its node while the binding is posted, so that no filter
	// in between misses it. Its cpu is the one its filter call gave, else
	// the API server's.
	e.mu.Lock()
	f, filtered := e.inFlight[key]
	e.mu.Unlock()
	cpu := f.cpu
	if !filtered {
		pod, err := e.cs.CoreV1().Pods(args.PodNamespace).Get(r.Context(), args.PodName, metav1.GetOptions{})
		if err != nil {
			writeJSON(w, bindingResult{Error: err.Error()})
			return
		}
		cpu = podCPU(pod)
	}
	e.mu.Lock()
	e.assumed[key] = assumedPod{node: args.Node, cpu: cpu}
	delete(e.inFlight, key)
	e.mu.Unlock()
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: args.PodName, Namespace: args.PodNamespace, UID: args.PodUID},
		Target: corev1.ObjectReference{Kind: "Node", Name: args.Node}}
	err := e.cs.CoreV1().Pods(args.PodNamespace).Bind(r.Context(), binding, metav1.CreateOptions{})
	e.mu.Lock()
	if a, ok := e.assumed[key]; ok && err == nil {
		// Every listing started from now on shows it while it runs; one
		// started before may not, and counts it from here.
		a.bound, a.boundAt = true, e.lists
		e.assumed[key] = a
	} else {
		delete(e.assumed, key) // refused (never placed), or listed bound already
	}
	e.mu.Unlock()
	if err != nil {
		writeJSON(w, bindingResult{Error: err.Error()})
		return
	}
	writeJSON(w, bindingResult{})
}

// candidates are the nodes kube-scheduler asks about.
func candidates(args extenderArgs) []string {
	if args.NodeNames != nil {
		return *args.NodeNames
	}
	var names []string
	if args.Nodes != nil {
		for _, n := range args.Nodes.Items {
			names = append(names, n.Name)
		}
	}
	return names
}

func podCPU(p *corev1.Pod) int64 {
	var sum int64
	for _, c := range p.Spec.Containers {
		sum += c.Resources.Requests.Cpu().MilliValue()
	}
	return sum
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(v); err != nil {
		http.Error(w, "extender: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
