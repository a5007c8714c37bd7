package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/outputs"
	"github.com/batkube/batkube/pkg/settle/signalclient"
)

// The QoS-driven family (examples/schedulers/qos): kube-scheduler 1.37
// with the QoSDriven QueueSort plugin compiled in (bin/qos-scheduler).
const (
	qosExample       = "examples/schedulers/qos/workload.json"
	qosConfig        = "examples/schedulers/qos/config.yaml"
	qosPrioritySort  = "examples/schedulers/qos/prioritysort.yaml"
	qosControllerKey = "qos.batkube.io/controller"
	qosSLOKey        = "qos.batkube.io/slo"
)

// TestQoSDrivenServesControllersNearViolationFirst: on a contended
// workload of three controllers with SLOs 0.95, 0.8 and 0.5 (4-core pods
// on 8-core nodes: any waiting pod fits wherever another starts), at the
// instants where pods that were already waiting started while others kept
// waiting, the controllers served had no larger time to violation than
// those left waiting — TTV computed here from _pods.csv, in simulated
// time — but at one instant in ten at most (kube-scheduler's back-offs are
// in wall time). The TTV order of the controllers changes during the run, and
// kube-scheduler with its default PrioritySort (first come, first served)
// on the same workload breaks the property many times.
func TestQoSDrivenServesControllersNearViolationFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "qos.json")
	writeQoSWorkload(t, path, 30, 3)
	type result struct{ checks, violations, orderChanges int }
	results := map[string]result{}
	for _, queueSort := range []string{"QoSDriven", "PrioritySort"} {
		t.Run(queueSort, func(t *testing.T) {
			s := newQoSSimulation(t, queueSort, path)
			sum := s.mustRun(10 * time.Minute)
			if sum.Succeeded != 90 {
				t.Fatalf("%d of 90 jobs succeeded", sum.Succeeded)
			}
			var r result
			var lines []string
			r.checks, r.orderChanges, lines = checkServedByTTV(s.qosPods(t))
			r.violations = len(lines)
			results[queueSort] = r
			t.Logf("%d contended instants, %d changes of the controllers' TTV order, %d instants served out of TTV order", r.checks, r.orderChanges, r.violations)
			if queueSort == "QoSDriven" {
				// kube-scheduler retries a pod whose back-off (1 s of wall
				// time, see config.yaml) has not ended after the pods in its
				// active queue, whatever the QueueSort says: a step that
				// comes within a second of a pod's last failure may serve a
				// less urgent pod first. One such instant in ten is the
				// machine's load; more is the plugin's order.
				for _, l := range lines {
					t.Logf("served out of TTV order: %s", l)
				}
				if r.violations > r.checks/10 {
					t.Errorf("QoSDriven served out of TTV order at %d of %d contended instants, want at most %d", r.violations, r.checks, r.checks/10)
				}
			}
		})
	}
	// Whether the workload tells the orders apart, from the runs that
	// finished (-run may select one; a failed one has said why).
	if q, ok := results["QoSDriven"]; ok && (q.checks < 10 || q.orderChanges < 1) {
		t.Errorf("QoSDriven: %d contended instants, %d order changes; want ≥ 10 and ≥ 1, or the test shows nothing", q.checks, q.orderChanges)
	}
	if p, ok := results["PrioritySort"]; ok && (p.violations < 3 || p.violations <= 2*results["QoSDriven"].violations) {
		t.Errorf("PrioritySort served out of TTV order at %d instants, QoSDriven at %d; want ≥ 3 and more than twice as many: the workload does not tell the two orders apart", p.violations, results["QoSDriven"].violations)
	}
}

// TestQoSDrivenExampleMeetsEverySLO: the example workload, run as its
// README says: with the QoS-driven plugin every controller meets its SLO
// (QoS from _pods.csv). Meanwhile the test holds every step with the idle
// signal and reads the plugin's debug table: each one is at an instant of
// the simulation (in simulated seconds) and its numbers are the accounts
// computed here from the outputs at that instant. (The broker waits for
// schedulers only while pods are pending: one job for a scheduler that does
// not exist stays pending all along, so that every step waits for the test;
// it is rejected once the rest is done.)
func TestQoSDrivenExampleMeetsEverySLO(t *testing.T) {
	n := len(workloadJobs(t, qosExample))
	reader := &qosTableReader{}
	s := newQoSSimulation(t, "QoSDriven", withHoldingJob(t, abs(repoRoot(), qosExample)))
	s.onReady = reader.start
	sum := s.mustRun(10 * time.Minute)
	if sum.Succeeded != n || sum.Jobs != n+1 {
		t.Fatalf("%d jobs, %d succeeded; want %d, %d", sum.Jobs, sum.Succeeded, n+1, n)
	}
	pods := s.qosPods(t)
	for ctrl, a := range qosAccounts(pods, math.Inf(1)) {
		q := a.running / a.total()
		t.Logf("%-7s QoS %.3f (SLO %.2f): ran %.0f s, waited %.0f s", ctrl, q, a.slo, a.running, a.waiting)
		if q < a.slo {
			t.Errorf("%s: QoS %.3f below its SLO %.2f with the QoS-driven plugin", ctrl, q, a.slo)
		}
	}
	checkQoSTables(t, s, reader.finish(t), pods)
}

// qosHoldJob is the id of the job withHoldingJob adds.
const qosHoldJob = "hold"

// withHoldingJob writes a copy of a workload with one more job, submitted
// first, for a scheduler that does not exist: it stays pending until
// everything else is done, and the broker waits for the schedulers (and
// idle signals) at every step meanwhile.
func withHoldingJob(t *testing.T, workload string) string {
	t.Helper()
	data := readFile(t, workload)
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["jobs"] = append([]any{map[string]any{"id": qosHoldJob, "subtime": 0, "res": 1, "profile": qosHoldJob}}, doc["jobs"].([]any)...)
	doc["profiles"].(map[string]any)[qosHoldJob] = map[string]any{"type": "delay", "delay": 1, "cpu": 1, "memory": "1Gi", "scheduler": "nobody"}
	path := filepath.Join(t.TempDir(), "held-"+filepath.Base(workload))
	writeJSON(t, path, doc)
	return path
}

// newQoSSimulation prepares a run of workload on platform_4 with
// qos-scheduler and the example's configuration (queueSort QoSDriven), or
// with the bundled kube-scheduler and the comparison configuration
// (PrioritySort): the same but for the queue's order.
func newQoSSimulation(t *testing.T, queueSort, workload string) *qosSimulation {
	s := newSimulation(t, platform4, workload)
	switch queueSort {
	case "QoSDriven":
		s.cfg.KubeScheduler = binary(t, "qos-scheduler")
		s.cfg.SchedulerConfig = abs(repoRoot(), qosConfig)
	case "PrioritySort":
		s.cfg.SchedulerConfig = abs(repoRoot(), qosPrioritySort)
	default:
		t.Fatalf("queue sort %q", queueSort)
	}
	return &qosSimulation{s}
}

type qosSimulation struct{ *simulation }

// writeQoSWorkload writes n delay jobs for each of three controllers (gold
// SLO 0.95, silver 0.8, bronze 0.5) named in their pods' labels and
// annotations through pod_template: 4 cores and 10 to 40 s each, arriving
// 0 to 20 s apart — about twice what platform_4 runs. Deterministic for a
// seed.
func writeQoSWorkload(t testing.TB, path string, n int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	type job struct {
		ID      string  `json:"id"`
		Subtime float64 `json:"subtime"`
		Res     int     `json:"res"`
		Profile string  `json:"profile"`
	}
	profiles := map[string]any{}
	var jobs []job
	for _, c := range []struct{ name, slo string }{{"gold", "0.95"}, {"silver", "0.8"}, {"bronze", "0.5"}} {
		at := 0.0
		for i := range n {
			at += []float64{0, 0, 5, 10, 20}[rng.IntN(5)]
			d := []int{10, 20, 40}[rng.IntN(3)]
			name := fmt.Sprintf("%s_%d", c.name, d)
			profiles[name] = map[string]any{"type": "delay", "delay": d, "cpu": 4, "memory": "1Gi",
				"pod_template": map[string]any{"metadata": map[string]any{
					"labels":      map[string]string{qosControllerKey: c.name},
					"annotations": map[string]string{qosSLOKey: c.slo}}}}
			jobs = append(jobs, job{ID: fmt.Sprintf("%s-%d", c.name, i), Subtime: at, Res: 1, Profile: name})
		}
	}
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].Subtime < jobs[j].Subtime })
	writeJSON(t, path, map[string]any{"nb_res": 4, "jobs": jobs, "profiles": profiles})
}

// qosPod is a pod of a run: its controller and SLO (from its labels and
// annotations, as client-go saw them) and its instants (_pods.csv).
type qosPod struct {
	name, ctrl                        string
	slo                               float64
	created, bound, started, finished float64
}

func (s *qosSimulation) qosPods(t *testing.T) []qosPod {
	t.Helper()
	rows, err := outputs.ReadCSV(filepath.Join(s.cfg.OutDir, "_pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	s.obs.mu.Lock()
	defer s.obs.mu.Unlock()
	var pods []qosPod
	for _, row := range rows {
		if strings.HasSuffix(row["job_id"], "!"+qosHoldJob) {
			continue
		}
		rec := s.obs.pods[row["pod"]]
		if rec == nil || rec.final == nil {
			t.Fatalf("pod %s: never seen by the client-go watch", row["pod"])
		}
		slo, err := strconv.ParseFloat(rec.final.Annotations[qosSLOKey], 64)
		if err != nil {
			t.Fatalf("pod %s: SLO annotation: %v", row["pod"], err)
		}
		p := qosPod{name: row["pod"], ctrl: rec.final.Labels[qosControllerKey], slo: slo}
		for col, v := range map[string]*float64{"created": &p.created, "bound": &p.bound, "started": &p.started, "finished": &p.finished} {
			if *v, err = strconv.ParseFloat(row[col], 64); err != nil {
				t.Fatalf("pod %s: %s %q: %v", p.name, col, row[col], err)
			}
		}
		if p.ctrl == "" {
			t.Fatalf("pod %s has no %s label", p.name, qosControllerKey)
		}
		pods = append(pods, p)
	}
	return pods
}

// qosAccount is a controller's account at an instant, as the policy
// defines it: its pods wait from creation to binding, bind until they
// start, and run until they finish.
type qosAccount struct {
	slo, waiting, binding, running float64
}

func (a qosAccount) total() float64 { return a.waiting + a.binding + a.running }
func (a qosAccount) ttv() float64   { return a.running/a.slo - a.total() }

// qosAccounts returns every controller's account at instant at.
func qosAccounts(pods []qosPod, at float64) map[string]qosAccount {
	out := map[string]qosAccount{}
	span := func(from, to float64) float64 { return max(0, min(to, at)-from) }
	for _, p := range pods {
		if p.created > at {
			continue
		}
		a := out[p.ctrl]
		a.slo = p.slo
		a.waiting += span(p.created, p.bound)
		if p.bound <= at {
			a.binding += span(p.bound, p.started)
		}
		if p.started <= at {
			a.running += span(p.started, p.finished)
		}
		out[p.ctrl] = a
	}
	return out
}

// checkServedByTTV looks at every instant where a pod created before it
// started while another created before it kept waiting (pods created at
// the instant itself reach kube-scheduler one by one, and the first may be
// bound before the next arrives: they are left out), and returns how many
// there were, how many times the controllers' TTV order changed from one
// such instant to the next, and a line for each instant where a pod of a
// controller with a larger TTV started while one with a smaller TTV kept
// waiting. The pods all fit wherever another does (the workload's).
func checkServedByTTV(pods []qosPod) (checks, orderChanges int, violations []string) {
	instants := map[float64]bool{}
	for _, p := range pods {
		instants[p.bound] = true
	}
	var prev []string
	for _, at := range slices.Sorted(maps.Keys(instants)) {
		var served, waiting []qosPod
		for _, p := range pods {
			switch {
			case p.created >= at:
			case p.bound == at:
				served = append(served, p)
			case p.bound > at:
				waiting = append(waiting, p)
			}
		}
		if len(served) == 0 || len(waiting) == 0 {
			continue
		}
		checks++
		accounts := qosAccounts(pods, at)
		order := slices.SortedFunc(maps.Keys(accounts), func(a, b string) int {
			return cmpFloat(accounts[a].ttv(), accounts[b].ttv(), a, b)
		})
		if prev != nil && !slices.Equal(order, prev) {
			orderChanges++
		}
		prev = order
		const eps = 1e-6
		worstServed, bestWaiting := served[0], waiting[0]
		for _, p := range served {
			if accounts[p.ctrl].ttv() > accounts[worstServed.ctrl].ttv() {
				worstServed = p
			}
		}
		for _, p := range waiting {
			if accounts[p.ctrl].ttv() < accounts[bestWaiting.ctrl].ttv() {
				bestWaiting = p
			}
		}
		if s, w := accounts[worstServed.ctrl].ttv(), accounts[bestWaiting.ctrl].ttv(); s > w+eps {
			violations = append(violations, fmt.Sprintf("t=%g: %s (%s, TTV %.3f) started while %s (%s, TTV %.3f) kept waiting",
				at, worstServed.name, worstServed.ctrl, s, bestWaiting.name, bestWaiting.ctrl, w))
		}
	}
	return checks, orderChanges, violations
}

func cmpFloat(x, y float64, a, b string) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return strings.Compare(a, b)
}

// qosTable is one reading of the plugin's debug table.
type qosTable struct {
	seconds float64
	seenRV  uint64 // the latest pod or node change the informers had stored
	rows    map[string]qosRow
	text    string
}

type qosRow struct {
	qos                             string // "-" before any time elapsed
	slo, ttv, running, waiting, bnd float64
}

// qosTableReader holds every step of a run with the idle signal (the
// broker then waits for it as for kube-scheduler) and reads the debug
// table at each.
type qosTableReader struct {
	mu     sync.Mutex
	tables []qosTable
	err    error
	done   chan struct{}
}

// start runs once the cluster is up, before Batsim starts: it waits for
// the debug table to be served and starts holding the steps.
func (r *qosTableReader) start(s *simulation) {
	r.done = make(chan struct{})
	addr, err := qosDebugAddress(filepath.Join(s.cfg.OutDir, "kube-scheduler.yaml"))
	if err == nil {
		err = waitAccepting(addr, time.Minute)
	}
	gate := s.idleClient("qos-table-reader")
	if err != nil || gate == nil {
		r.err = fmt.Errorf("the debug table: %v", err)
		close(r.done)
		return
	}
	go func() {
		defer close(r.done)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		rv := "0"
		for {
			resp, err := gate.IdleAndWait(ctx, rv)
			if err != nil {
				if signalclient.ServerGone(err) {
					return // the server is gone: the run is over (if it failed, the run says so)
				}
				r.fail(fmt.Errorf("idle signal: %w", err))
				return
			}
			if resp.Ended {
				return
			}
			latest, err := strconv.ParseUint(resp.ResourceVersion, 10, 64)
			if err != nil {
				r.fail(fmt.Errorf("idle signal answered resourceVersion %q: %w", resp.ResourceVersion, err))
				return
			}
			tab, err := readCaughtUpQoSTable(ctx, "http://"+addr+"/", latest)
			if err != nil {
				r.fail(err)
				return
			}
			r.mu.Lock()
			r.tables = append(r.tables, tab)
			r.mu.Unlock()
			rv = resp.ResourceVersion
		}
	}()
}

func (r *qosTableReader) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// finish returns the tables read, once the run is over.
func (r *qosTableReader) finish(t *testing.T) []qosTable {
	t.Helper()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		t.Fatalf("reading the debug table: %v", r.err)
	}
	return r.tables
}

// qosDebugAddress returns the plugin's debugAddress in a run's
// kube-scheduler configuration ({port:qos} replaced by the runner).
func qosDebugAddress(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var cfg struct {
		Profiles []struct {
			PluginConfig []struct {
				Name string `json:"name"`
				Args struct {
					DebugAddress string `json:"debugAddress"`
				} `json:"args"`
			} `json:"pluginConfig"`
		} `json:"profiles"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	for _, p := range cfg.Profiles {
		for _, pc := range p.PluginConfig {
			if pc.Name == "QoSDriven" && pc.Args.DebugAddress != "" {
				return pc.Args.DebugAddress, nil
			}
		}
	}
	return "", fmt.Errorf("%s: no QoSDriven debugAddress", path)
}

// waitAccepting waits until addr accepts connections, at most d.
func waitAccepting(addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %s: %w", addr, d, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a port that is not open yet
	}
}

var qosHeader = regexp.MustCompile(`^# simulated time ([0-9.]+) s \(.*; pods and nodes seen up to resourceVersion (\S+) and (\S+)$`)

// readCaughtUpQoSTable reads the table until the scheduler's informers
// have seen every change of pods and nodes up to resourceVersion rv (they
// follow the server a little behind; the step is held meanwhile).
func readCaughtUpQoSTable(ctx context.Context, url string, rv uint64) (qosTable, error) {
	for {
		tab, err := readQoSTable(ctx, url)
		if err != nil || tab.seenRV >= rv {
			return tab, err
		}
		select {
		case <-ctx.Done():
			return tab, fmt.Errorf("the table never saw resourceVersion %d (it is at %d): %w", rv, tab.seenRV, ctx.Err())
		case <-time.After(5 * time.Millisecond): // the informers catch up by themselves
		}
	}
}

// readQoSTable reads and parses the text table.
func readQoSTable(ctx context.Context, url string) (qosTable, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return qosTable{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return qosTable{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return qosTable{}, fmt.Errorf("GET %s: %s %v", url, resp.Status, err)
	}
	tab := qosTable{rows: map[string]qosRow{}, text: string(body)}
	sc := bufio.NewScanner(strings.NewReader(tab.text))
	for i := 0; sc.Scan(); i++ {
		line := sc.Text()
		switch i {
		case 0:
			m := qosHeader.FindStringSubmatch(line)
			if m == nil {
				return tab, fmt.Errorf("table header %q: not in simulated time", line)
			}
			tab.seconds, _ = strconv.ParseFloat(m[1], 64)
			for _, v := range m[2:] {
				if rv, err := strconv.ParseUint(v, 10, 64); err == nil {
					tab.seenRV = max(tab.seenRV, rv)
				}
			}
			continue
		case 1:
			if f := strings.Fields(line); len(f) < 6 || !slices.Equal(f[:6], []string{"CONTROLLER", "QOS/SLO", "TTV", "RUNNING", "WAITING", "BINDING"}) {
				return tab, fmt.Errorf("table columns %q", line)
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) != 7 {
			return tab, fmt.Errorf("table row %q", line)
		}
		qosSLO := strings.SplitN(f[1], "/", 2)
		var row qosRow
		row.qos = qosSLO[0]
		nums := []*float64{&row.slo, &row.ttv, &row.running, &row.waiting, &row.bnd}
		for j, v := range append([]string{qosSLO[len(qosSLO)-1]}, f[2:6]...) {
			if *nums[j], err = strconv.ParseFloat(v, 64); err != nil {
				return tab, fmt.Errorf("table row %q: %v", line, err)
			}
		}
		// Controllers are namespace/label value.
		tab.rows[strings.TrimPrefix(f[0], "default/")] = row
	}
	return tab, sc.Err()
}

// checkQoSTables checks the debug tables read at each step against the
// accounts computed from the run's outputs at the table's instant, which
// must be one of the instants of _pods.csv (a creation, binding, start or
// end of any pod).
func checkQoSTables(t *testing.T, s *qosSimulation, tables []qosTable, pods []qosPod) {
	t.Helper()
	rows, err := outputs.ReadCSV(filepath.Join(s.cfg.OutDir, "_pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	instants := map[float64]bool{}
	for _, row := range rows {
		for _, col := range []string{"created", "bound", "started", "finished"} {
			if v, err := strconv.ParseFloat(row[col], 64); err == nil {
				instants[v] = true
			}
		}
	}
	const eps = 0.0015 // three decimals printed
	withTime := 0
	for _, tab := range tables {
		if !instants[math.Round(tab.seconds*1000)/1000] {
			t.Errorf("table at %.3f s: not an instant of the simulation:\n%s", tab.seconds, tab.text)
			continue
		}
		want := qosAccounts(pods, tab.seconds)
		for ctrl, a := range want {
			row, ok := tab.rows[ctrl]
			if !ok {
				if a.total() > 0 {
					t.Errorf("table at %.3f s: no row for %s (%+v):\n%s", tab.seconds, ctrl, a, tab.text)
				}
				continue
			}
			if a.total() > 0 {
				withTime++
			}
			qos := "-"
			if a.total() > 0 {
				qos = fmt.Sprintf("%.3f", a.running/a.total())
			}
			if row.qos != qos || math.Abs(row.slo-a.slo) > eps || math.Abs(row.ttv-a.ttv()) > eps || math.Abs(row.running-a.running) > eps ||
				math.Abs(row.waiting-a.waiting) > eps || math.Abs(row.bnd-a.binding) > eps {
				t.Errorf("table at %.3f s, %s: %+v; from the outputs: QoS %s, %+v, TTV %.3f\n%s", tab.seconds, ctrl, row, qos, a, a.ttv(), tab.text)
			}
		}
	}
	if len(tables) < 5 || withTime == 0 {
		t.Errorf("%d tables read, %d rows with elapsed time: want one per step", len(tables), withTime)
	}
	if len(tables) > 0 {
		t.Logf("%d tables checked; the last:\n%s", len(tables), tables[len(tables)-1].text)
	}
}
