package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/outputs"
	"github.com/batkube/batkube/pkg/settle/signalclient"
	"github.com/batkube/batkube/pkg/simtime/simclock"
	"github.com/batkube/batkube/pkg/translate"
)

// simulation is one run of launch.Run in a test, with a client-go watch on
// the pods and nodes of the cluster from before Batsim starts.
type simulation struct {
	t       testing.TB
	cfg     launch.Config
	cluster launch.Cluster
	client  kubernetes.Interface
	obs     *observer
	// onReady runs once the cluster is up, before Batsim starts.
	onReady func(*simulation)
}

// newSimulation prepares a run of the given platform and workloads (paths
// relative to the repository) with the bundled kube-scheduler 1.37.
func newSimulation(t testing.TB, platform string, workloads ...string) *simulation {
	root := repoRoot()
	cfg := launch.Config{
		Platform: abs(root, platform),
		OutDir:   t.TempDir(),
		BinDir:   batkubeBinaries(t),
		Batsim:   launch.BatsimEmbedded,
	}
	for _, w := range workloads {
		cfg.Workloads = append(cfg.Workloads, abs(root, w))
	}
	keepOutputsOfFailure(t, cfg.OutDir)
	return &simulation{t: t, cfg: cfg, obs: newObserver()}
}

// keepOutputsOfFailure copies a failed test's output folder (logs, CSV
// files, kube-scheduler's configuration), which t.TempDir removes at the
// test's end, into $BATKUBE_E2E_KEEP/<test name>-<id> (one folder per
// failed run, so -count=N keeps them all), when that is set: a rare
// failure can then be read after the fact.
func keepOutputsOfFailure(t testing.TB, dir string) {
	keep := os.Getenv("BATKUBE_E2E_KEEP")
	if keep == "" {
		return
	}
	t.Cleanup(func() { // before t.TempDir's removal: cleanups run last first
		if !t.Failed() {
			return
		}
		dst := filepath.Join(keep, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
		if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
			t.Logf("keeping the outputs of the failed run: %v", err)
			return
		}
		t.Logf("the failed run's outputs are kept in %s", dst)
	})
}

// newHeldSimulation prepares a run of testdata/hold.json, which keeps a
// simulation going in real time while a test acts on it: a job runs for a
// million simulated seconds beside one that never fits, and the server
// settles on silence (--settle=quiet), polling the scheduler with
// back-off wake-ups, so every step takes a wall-clock window. (Exact
// settling would finish the run at once.)
func newHeldSimulation(t testing.TB) *simulation {
	s := newSimulation(t, "examples/platforms/platform_4.xml", "pkg/e2e/testdata/hold.json")
	s.cfg.ServerArgs = []string{"--settle=quiet"}
	return s
}

// abs resolves a path relative to the repository, leaving absolute ones.
func abs(root, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(root, path)
}

// run runs the simulation; it fails the test if the run does not end
// within timeout.
func (s *simulation) run(timeout time.Duration) (launch.Summary, error) {
	t := s.t
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s.cfg.Logf = t.Logf
	s.cfg.Ready = func(c launch.Cluster) {
		s.cluster = c
		rc, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
		if err != nil {
			t.Errorf("kubeconfig: %v", err)
			return
		}
		rc.QPS = -1 // no client-side rate limit: the tests' clients act as schedulers
		if s.client, err = kubernetes.NewForConfig(rc); err != nil {
			t.Errorf("client: %v", err)
			return
		}
		if s.obs != nil {
			if err := s.obs.start(ctx, s.client); err != nil {
				t.Errorf("watching the cluster: %v", err)
				return
			}
		}
		if s.onReady != nil {
			s.onReady(s)
		}
	}
	sum, err := launch.Run(ctx, s.cfg)
	if ctx.Err() != nil {
		t.Fatalf("the simulation did not end within %s (%v); logs in %s", timeout, err, s.cfg.OutDir)
	}
	if s.obs != nil {
		s.obs.wait()
	}
	return sum, err
}

// idleClient returns a client for the idle signal of a stand-in scheduler
// named name (once the cluster is up).
func (s *simulation) idleClient(name string) *signalclient.Client {
	rc, err := clientcmd.BuildConfigFromFlags("", s.cluster.Kubeconfig)
	if err != nil {
		s.t.Errorf("kubeconfig: %v", err)
		return nil
	}
	c, err := signalclient.New(rc, name)
	if err != nil {
		s.t.Errorf("idle signal client: %v", err)
		return nil
	}
	return c
}

// mustRun runs the simulation and fails the test if it fails.
func (s *simulation) mustRun(timeout time.Duration) launch.Summary {
	s.t.Helper()
	sum, err := s.run(timeout)
	if err != nil {
		s.t.Fatalf("simulation: %v", err)
	}
	return sum
}

// mustRunExact is mustRun, then wantEveryStepExact.
func (s *simulation) mustRunExact(timeout time.Duration) launch.Summary {
	s.t.Helper()
	sum := s.mustRun(timeout)
	wantEveryStepExact(s.t, sum)
	return sum
}

// addMachineOutage makes the hosts of a Batsim interval set ("0-1")
// unavailable from the simulated second down to the second up (Batsim
// external events machine_unavailable and machine_available).
func (s *simulation) addMachineOutage(hosts string, down, up float64) {
	s.addEvents(fmt.Sprintf(`{"timestamp": %g, "type": "machine_unavailable", "resources": %q}
{"timestamp": %g, "type": "machine_available", "resources": %q}
`, down, hosts, up, hosts))
}

// addEvents writes Batsim external events (one JSON object a line, e.g.
// machine_unavailable) to a file of the run's.
func (s *simulation) addEvents(events string) {
	path := filepath.Join(s.t.TempDir(), fmt.Sprintf("events-%d.txt", len(s.cfg.Events)))
	writeFile(s.t, path, []byte(events))
	s.cfg.Events = append(s.cfg.Events, path)
}

// wantEveryStepExact fails t if a step of the run could not be proven exact.
func wantEveryStepExact(t testing.TB, sum launch.Summary) {
	t.Helper()
	if sum.Settle.Inexact() > 0 {
		t.Errorf("settling: %+v, want every step exact", sum.Settle)
	}
}

// jobRow is a row of _jobs.csv.
type jobRow struct {
	id                    string // workload!id
	state                 string
	submit, start, finish float64
	// heard is when the scheduler could know of the job's end: when its
	// last pod finished in _pods.csv (Batsim's server hears of an end
	// after the latency of the route from the job's first host to the
	// master host); its finish if _pods.csv does not say.
	heard float64
	// placed is when its last pod was bound (_pods.csv): the job starts
	// once Batsim's server gets the EXECUTE_JOB, which takes time where
	// the master host's messages to itself do; its start if _pods.csv
	// does not say.
	placed float64
	// known is when the scheduler could know of the job: when its pods
	// were created (Batsim's server hears of a submission after its
	// submitter's message to it); its subtime if _pods.csv does not say.
	known                    float64
	alloc                    []int
	requestedTime, execution float64
}

// jobs reads _jobs.csv, keyed by workload!id.
func (s *simulation) jobs() map[string]jobRow {
	s.t.Helper()
	rows, err := outputs.ReadCSV(filepath.Join(s.cfg.OutDir, "_jobs.csv"))
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]jobRow{}
	for _, r := range rows {
		set, err := batsim.ParseIntervalSet(r["allocated_resources"])
		if err != nil && r["final_state"] != "REJECTED" {
			s.t.Fatalf("_jobs.csv: allocated_resources %q: %v", r["allocated_resources"], err)
		}
		j := jobRow{id: r["workload_name"] + "!" + r["job_id"], state: r["final_state"], alloc: set.IDs(),
			submit: num(s.t, r["submission_time"]), start: num(s.t, r["starting_time"]), finish: num(s.t, r["finish_time"]),
			requestedTime: num(s.t, r["requested_time"]), execution: num(s.t, r["execution_time"])}
		if _, dup := out[j.id]; dup {
			s.t.Errorf("_jobs.csv: job %s twice", j.id)
		}
		j.heard, j.placed, j.known = j.finish, j.start, j.submit
		out[j.id] = j
	}
	pods, err := outputs.ReadCSV(filepath.Join(s.cfg.OutDir, "_pods.csv"))
	if err != nil {
		return out
	}
	placed, created := map[string]float64{}, map[string]float64{}
	for _, r := range pods {
		j, ok := out[r["job_id"]]
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(r["finished"], 64); err == nil && f > j.heard {
			j.heard = f
			out[r["job_id"]] = j
		}
		if b, err := strconv.ParseFloat(r["bound"], 64); err == nil && b > placed[j.id] {
			placed[j.id] = b
		}
		if c, err := strconv.ParseFloat(r["created"], 64); err == nil {
			if old, ok := created[j.id]; !ok || c < old {
				created[j.id] = c
			}
		}
	}
	for id, c := range created {
		j := out[id]
		j.known = c
		out[id] = j
	}
	for id, b := range placed {
		j := out[id]
		j.placed = b
		out[id] = j
	}
	return out
}

// num parses a number of _jobs.csv; rejected jobs have empty times (NaN).
func num(t testing.TB, s string) float64 {
	t.Helper()
	if s == "" {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("_jobs.csv: number %q: %v", s, err)
	}
	return f
}

// workloadJobs returns the ids (workload!id) of the jobs of workload files,
// named w0, w1... in order as Batsim does.
func workloadJobs(t testing.TB, workloads ...string) []string {
	var ids []string
	for i, w := range workloads {
		var doc struct {
			Jobs []struct {
				ID json.RawMessage `json:"id"`
			} `json:"jobs"`
		}
		b := readFile(t, filepath.Join(repoRoot(), w))
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		for _, j := range doc.Jobs {
			ids = append(ids, fmt.Sprintf("w%d!%s", i, strings.Trim(string(j.ID), `"`)))
		}
	}
	sort.Strings(ids)
	return ids
}

// observer records what a client-go watch sees of pods and nodes.
type observer struct {
	mu    sync.Mutex
	pods  map[string]*podRecord // by name
	nodes map[string]*corev1.Node
	// running is signalled (non-blocking) each time a pod turns Running.
	running chan string
	// pending is signalled each time a pod is marked unschedulable.
	unschedulable chan string
	done          sync.WaitGroup
}

// podRecord is the history of one pod.
type podRecord struct {
	job       string // workload!id
	phases    []corev1.PodPhase
	node      string
	requests  corev1.ResourceList
	startTime time.Time
	final     *corev1.Pod // last version seen before deletion
	deleted   bool
}

func newObserver() *observer {
	return &observer{pods: map[string]*podRecord{}, nodes: map[string]*corev1.Node{},
		running: make(chan string, 1024), unschedulable: make(chan string, 1024)}
}

func (o *observer) start(ctx context.Context, cs kubernetes.Interface) error {
	watchPods := func(rv string) (watch.Interface, error) {
		return cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	}
	watchNodes := func(rv string) (watch.Interface, error) {
		return cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	}
	pw, err := watchPods("")
	if err != nil {
		return err
	}
	nw, err := watchNodes("")
	if err != nil {
		pw.Stop()
		return err
	}
	o.done.Add(2)
	go follow(&o.done, nw, watchNodes, func(ev watch.Event) {
		if n, ok := ev.Object.(*corev1.Node); ok && ev.Type != watch.Deleted {
			o.mu.Lock()
			o.nodes[n.Name] = n
			o.mu.Unlock()
		}
	})
	go follow(&o.done, pw, watchPods, func(ev watch.Event) {
		if p, ok := ev.Object.(*corev1.Pod); ok {
			o.pod(ev.Type, p)
		}
	})
	return nil
}

// follow hands the events of w to handle, and watches again from the
// latest resourceVersion seen whenever the server ends a watch (its
// timeout), until a new watch fails: the server is gone.
func follow(done *sync.WaitGroup, w watch.Interface, again func(rv string) (watch.Interface, error), handle func(watch.Event)) {
	defer done.Done()
	rv := ""
	for {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				continue
			}
			if m, err := meta.Accessor(ev.Object); err == nil && m.GetResourceVersion() != "" {
				rv = m.GetResourceVersion()
			}
			if ev.Type != watch.Bookmark {
				handle(ev)
			}
		}
		w.Stop()
		var err error
		if w, err = again(rv); err != nil {
			return
		}
	}
}

func (o *observer) pod(typ watch.EventType, p *corev1.Pod) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.pods[p.Name]
	if r == nil {
		r = &podRecord{job: p.Annotations[translate.JobIDKey]}
		o.pods[p.Name] = r
	}
	if typ == watch.Deleted {
		r.deleted = true
		return
	}
	r.final = p
	if p.Spec.NodeName != "" {
		r.node = p.Spec.NodeName
	}
	if len(r.phases) == 0 || r.phases[len(r.phases)-1] != p.Status.Phase {
		r.phases = append(r.phases, p.Status.Phase)
		if p.Status.Phase == corev1.PodRunning {
			select {
			case o.running <- p.Name:
			default:
			}
		}
	}
	if p.Status.StartTime != nil {
		r.startTime = p.Status.StartTime.Time
	}
	r.requests = podRequests(p)
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			select {
			case o.unschedulable <- p.Name:
			default:
			}
		}
	}
}

// wait returns once the watches have ended (the server is gone).
func (o *observer) wait() { o.done.Wait() }

// podsOf returns the records of a job's pods.
func (o *observer) podsOf(job string) []*podRecord {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*podRecord
	for _, r := range o.pods {
		if r.job == job {
			out = append(out, r)
		}
	}
	return out
}

// waitFor waits until pod events name a pod whose job is job (one of the
// channels of the observer) and returns it, or after d marks the test
// failed and returns false.
func waitFor(t *testing.T, ch <-chan string, o *observer, job string, d time.Duration) (string, bool) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case name := <-ch:
			o.mu.Lock()
			r := o.pods[name]
			o.mu.Unlock()
			if r != nil && r.job == job {
				return name, true
			}
		case <-timeout:
			// Called from the goroutines that act during a run: Errorf,
			// not Fatalf, which must not be called off the test's own.
			t.Errorf("no event for a pod of job %s within %s", job, d)
			return "", false
		}
	}
}

// checkNoOvercommit checks that at no simulated instant the pods running on
// a node (from _jobs.csv's start and finish times) request more of any
// resource (cpu, memory, extended ones) than the node has.
func checkNoOvercommit(t *testing.T, s *simulation, jobs map[string]jobRow) {
	t.Helper()
	eachNodeUsage(t, s, jobs, func(node string, allocatable, used corev1.ResourceList, at float64) {
		for name, q := range used {
			if capacity := allocatable[name]; q.Cmp(capacity) > 0 {
				t.Errorf("node %s: %s requested %s > allocatable %s at t=%g", node, name, q.String(), capacity.String(), at)
			}
		}
	})
}

// eachNodeUsage calls visit with what the pods running on a node request
// after each start or end of one of them (from _jobs.csv's times and the
// pods' nodes and requests as client-go saw them), node by node, in time
// order; ends come before starts at one instant, since a pod that finishes
// at t frees its room for one that starts at t.
func eachNodeUsage(t *testing.T, s *simulation, jobs map[string]jobRow, visit func(node string, allocatable, used corev1.ResourceList, at float64)) {
	t.Helper()
	type change struct {
		at    float64
		delta int // +1 start, -1 end
		req   corev1.ResourceList
	}
	perNode := map[string][]change{}
	for id, j := range jobs {
		if j.state == "REJECTED" {
			continue
		}
		pods := s.obs.podsOf(id)
		if len(pods) == 0 {
			t.Errorf("job %s ran but no pod of it was seen", id)
			continue
		}
		for _, p := range pods {
			if p.node == "" {
				t.Errorf("job %s ran but its pod was never seen bound", id)
				continue
			}
			perNode[p.node] = append(perNode[p.node], change{j.start, 1, p.requests}, change{j.finish, -1, p.requests})
		}
	}
	s.obs.mu.Lock()
	defer s.obs.mu.Unlock()
	for _, node := range slices.Sorted(maps.Keys(perNode)) {
		n := s.obs.nodes[node]
		if n == nil {
			t.Errorf("pods ran on node %s, which was never seen", node)
			continue
		}
		changes := perNode[node]
		sort.Slice(changes, func(i, j int) bool {
			if changes[i].at != changes[j].at {
				return changes[i].at < changes[j].at
			}
			return changes[i].delta < changes[j].delta
		})
		used := corev1.ResourceList{}
		for _, c := range changes {
			for name, req := range c.req {
				q := used[name]
				if c.delta > 0 {
					q.Add(req)
				} else {
					q.Sub(req)
				}
				used[name] = q
			}
			visit(node, n.Status.Allocatable, used, c.at)
		}
	}
}

// wireTime is simulated second s as a client reads it in an object: on the
// run's epoch, to the second (metav1.Time's precision in JSON).
func wireTime(s float64) time.Time {
	return simclock.DefaultEpoch.Add(simclock.FromSeconds(s)).Truncate(time.Second)
}

// freePort returns a loopback TCP port nobody listens on right now.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// watchObjects opens a watch with open until the test ends, and calls each
// with every object of type T it delivers; the channel it returns is closed
// when the watch has ended (the server stopped).
func watchObjects[T k8sruntime.Object](s *simulation, what string, open func(context.Context, metav1.ListOptions) (watch.Interface, error), each func(T)) <-chan struct{} {
	ctx, cancel := context.WithCancel(context.Background())
	s.t.Cleanup(cancel)
	w, err := open(ctx, metav1.ListOptions{})
	if err != nil {
		s.t.Fatalf("watching %s: %v", what, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if obj, ok := ev.Object.(T); ok {
				each(obj)
			}
		}
	}()
	return done
}
