package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/outputs"
)

// The tiny run (testdata/tiny, on testdata/platform.xml: n0 with 4 cores
// and 8Gi, n1 with 2 cores and 4Gi; testdata/workload.json):
//
//	job  submit  start  finish  pods       requests per pod
//	0    0       0      10      n0         2 cpu, 2Gi (p1)
//	1    0       0      10      n0         2 cpu, 2Gi (p1)
//	2    2       10     15      n0         1 cpu, 1Gi (p2)
//	3    4       10     15      n0, n1     1 cpu, 1Gi (p2, res 2)
//	4    5       15     25      n0         3 cpu (pod_template), 2Gi
//	5    6       rejected at 20 (_pods.csv)
func loadTiny(t *testing.T) *Run {
	t.Helper()
	r, err := Load("testdata/tiny", Inputs{}) // inputs from summary.json
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tinyOutputs is a run folder named name with the tiny run's Batsim
// outputs alone (_jobs.csv, _schedule.csv).
func tinyOutputs(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"_jobs.csv", "_schedule.csv"} {
		data, err := os.ReadFile(filepath.Join("testdata/tiny", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// reportPage is the HTML report of the run whose outputs are in dir.
func reportPage(t *testing.T, dir string) string {
	t.Helper()
	r, err := Load(dir, Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := New("t", []*Run{r})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestFigures(t *testing.T) {
	r := loadTiny(t)
	if len(r.Notes) != 0 {
		t.Errorf("notes %q, want none", r.Notes)
	}
	f := r.Figures()
	want := Figures{
		Jobs: 6, Succeeded: 5, Rejected: 1,
		Makespan:    25,
		MeanWaiting: 24.0 / 5, P95Waiting: 10, MaxWaiting: 10, // waits 0 0 6 8 10
		MeanSlowdown: (1 + 1 + 2.6 + 2.2 + 2) / 5, MaxSlowdown: 2.6,
		// cpu: 4 of 6 cores for 10 s, then 3 for 5 s, then 3 for 10 s.
		CPUUtilisation: (10*4.0/6 + 5*3.0/6 + 10*3.0/6) / 25,
		// memory: 4Gi of 12Gi for 10 s, 3Gi for 5 s, 2Gi for 10 s.
		MemoryUtilisation: (10*4.0/12 + 5*3.0/12 + 10*2.0/12) / 25,
		HasUtilisation:    true,
	}
	got := reflect.ValueOf(f)
	for i := range got.NumField() {
		g, w := got.Field(i).Interface(), reflect.ValueOf(want).Field(i).Interface()
		if gf, ok := g.(float64); ok && near(gf, w.(float64)) {
			continue
		}
		if g != w {
			t.Errorf("%s = %v, want %v", got.Type().Field(i).Name, g, w)
		}
	}
}

func TestUtilisation(t *testing.T) {
	cpu, mem := loadTiny(t).Utilisation()
	wantCPU := []Step{{0, 4.0 / 6}, {10, 3.0 / 6}, {25, 0}}
	wantMem := []Step{{0, 4.0 / 12}, {10, 3.0 / 12}, {15, 2.0 / 12}, {25, 0}}
	// cpu does not change at 15: job 2 and 3 (3 cores) end as job 4 (3) starts.
	checkSteps(t, "cpu", cpu, wantCPU)
	checkSteps(t, "memory", mem, wantMem)
}

func TestQueue(t *testing.T) {
	// Pending: job 2 [2,10), 3 [4,10), 4 [5,15), 5 [6,20) (rejected).
	want := []Step{{0, 0}, {2, 1}, {4, 2}, {5, 3}, {6, 4}, {10, 2}, {15, 1}, {20, 0}}
	checkSteps(t, "queue", loadTiny(t).Queue(), want)
}

func TestWaitingCDF(t *testing.T) {
	want := []Point{{0, 0.4}, {6, 0.6}, {8, 0.8}, {10, 1}}
	if got := loadTiny(t).WaitingCDF(); !reflect.DeepEqual(got, want) {
		t.Errorf("CDF %v, want %v", got, want)
	}
}

func TestPercentileAndMean(t *testing.T) {
	for _, tc := range []struct {
		values []float64
		q      float64
		want   float64
	}{{nil, 0.95, 0}, {[]float64{3}, 0.95, 3}, {[]float64{1, 2, 3, 4}, 0.5, 2}, {[]float64{1, 2, 3, 4}, 0.95, 4}, {[]float64{1, 2, 3, 4}, 0.75, 3}} {
		if got := Percentile(tc.values, tc.q); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.values, tc.q, got, tc.want)
		}
	}
	// 1 on [0,2), 3 on [2,4), 0 after: over [0,5], (2+6)/5.
	if got := Mean([]Step{{0, 1}, {2, 3}, {4, 0}}, 5); !near(got, 8.0/5) {
		t.Errorf("Mean = %v, want 1.6", got)
	}
}

func TestGantt(t *testing.T) {
	nodes, bars := loadTiny(t).Gantt()
	if !reflect.DeepEqual(nodes, []string{"n0", "n1"}) {
		t.Fatalf("nodes %v, want [n0 n1]", nodes)
	}
	want := []Bar{
		{Node: 0, Lane: 0, Lanes: 2, Start: 0, End: 10, Job: "w0!0"},
		{Node: 0, Lane: 1, Lanes: 2, Start: 0, End: 10, Job: "w0!1"},
		{Node: 0, Lane: 0, Lanes: 2, Start: 10, End: 15, Job: "w0!2"},
		{Node: 0, Lane: 1, Lanes: 2, Start: 10, End: 15, Job: "w0!3"},
		{Node: 1, Lane: 0, Lanes: 1, Start: 10, End: 15, Job: "w0!3"},
		{Node: 0, Lane: 0, Lanes: 2, Start: 15, End: 25, Job: "w0!4"},
	}
	if !reflect.DeepEqual(bars, want) {
		t.Errorf("bars\n%v, want\n%v", bars, want)
	}
}

// TestWithoutPodsOrInputs: a folder with only Batsim's outputs still makes
// a report; the Gantt chart comes from allocated_resources, named after
// the platform's hosts when it is given.
func TestWithoutPodsOrInputs(t *testing.T) {
	dir := tinyOutputs(t, "bare")
	r, err := Load(dir, Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if f := r.Figures(); f.HasUtilisation || f.Makespan != 25 || !near(f.MeanWaiting, 4.8) {
		t.Errorf("figures without inputs: %+v", f)
	}
	if len(r.Notes) != 3 {
		t.Errorf("notes %q, want 3 (no _pods.csv, no platform, no workload)", r.Notes)
	}
	nodes, bars := r.Gantt()
	if !reflect.DeepEqual(nodes, []string{"resource 0", "resource 1"}) || len(bars) != 6 {
		t.Errorf("nodes %v, %d bars; want resource 0 and 1, 6 bars", nodes, len(bars))
	}
	r, err = Load(dir, Inputs{Platform: "testdata/platform.xml"})
	if err != nil {
		t.Fatal(err)
	}
	if nodes, _ := r.Gantt(); !reflect.DeepEqual(nodes, []string{"n0", "n1"}) {
		t.Errorf("nodes %v, want the platform's n0 n1", nodes)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(t.TempDir(), Inputs{}); err == nil || !strings.Contains(err.Error(), "_jobs.csv") {
		t.Errorf("an empty folder: %v, want an error naming _jobs.csv", err)
	}
	if _, err := Load("testdata/tiny", Inputs{Workloads: []string{"testdata/nope.json"}}); err == nil || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("a missing workload: %v, want an error naming it", err)
	}
}

// TestHTML: the page holds the figures, one inline SVG per chart, and
// nothing that would load from elsewhere; the charts' files are written.
func TestHTML(t *testing.T) {
	a, b := loadTiny(t), loadTiny(t)
	rep, err := New("tiny", []*Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "tiny" || b.Name != "tiny-2" {
		t.Errorf("names %q %q, want tiny tiny-2", a.Name, b.Name)
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{
		`<td data-metric="makespan">25.000</td>`, `<td data-metric="mean-waiting">4.800</td>`,
		`<td data-metric="p95-waiting">10.000</td>`, `<td data-metric="cpu-utilisation">56.7 %</td>`,
		`id="chart-tiny-gantt"`, `id="chart-tiny-2-waiting-cdf"`, `id="chart-compare-queue"`,
		`kube-scheduler: 9 steps, every one exact: 2 with nothing pending, 7 with the scheduler known idle,`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// 4 charts per run, 3 comparing them.
	if n := strings.Count(html, "<svg "); n != 11 {
		t.Errorf("%d <svg> elements, want 11", n)
	}
	if m := regexp.MustCompile(`(?i)<(script|link|img|iframe)\b|\b(src|href)=|url\(`).FindString(html); m != "" {
		t.Errorf("the page loads something: %q", m)
	}
	dir := t.TempDir()
	if err := rep.WriteCharts(dir, 72); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Charts() {
		for _, ext := range []string{".svg", ".png"} {
			if st, err := os.Stat(filepath.Join(dir, c.ID+ext)); err != nil || st.Size() < 1000 {
				t.Errorf("chart file %s%s: %v", c.ID, ext, err)
			}
		}
	}
}

func checkSteps(t *testing.T, what string, got, want []Step) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = near(got[i].T, want[i].T) && near(got[i].V, want[i].V)
	}
	if !ok {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// TestGroups: a group's figures are the mean and sample standard deviation
// of its runs' (the mean alone for one run), shown in the page's table of
// settings; a group naming an unknown run is refused.
func TestGroups(t *testing.T) {
	a, b, c := loadTiny(t), loadTiny(t), loadTiny(t)
	last := 0
	for i, j := range b.Jobs {
		if j.Finish > b.Jobs[last].Finish {
			last = i
		}
	}
	b.Jobs[last].Finish += 10 // b's makespan is 35, the others' 25
	rep, err := New("groups", []*Run{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	two, err := rep.AddGroup("a and b", "tiny", "tiny-2")
	if err != nil {
		t.Fatal(err)
	}
	mk := []float64{rep.Runs[0].Figures.Makespan, rep.Runs[1].Figures.Makespan}
	if mk[0] == mk[1] {
		t.Fatalf("makespans %v: the runs must differ for this test", mk)
	}
	mean := (mk[0] + mk[1]) / 2
	sd := math.Abs(mk[0]-mk[1]) / math.Sqrt2
	if !near(two.Makespan.Mean, mean) || !near(two.Makespan.StdDev, sd) || two.Jobs.Mean != float64(rep.Runs[0].Figures.Jobs) {
		t.Errorf("group makespan %+v, jobs %+v; want mean %g, sd %g", two.Makespan, two.Jobs, mean, sd)
	}
	if _, err := rep.AddGroup("c", "tiny-3"); err != nil {
		t.Fatal(err)
	}
	if _, err := rep.AddGroup("nobody", "tiny-9"); err == nil || !strings.Contains(err.Error(), "tiny-9") {
		t.Errorf("a group of an unknown run: %v, want an error naming it", err)
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{
		`<tr data-group="a and b">`,
		fmt.Sprintf(`<td data-metric="makespan" data-mean="%.3f">%.3f <span class="sd">± %.3f</span></td>`, mean, mean, sd),
		fmt.Sprintf(`<td data-metric="makespan" data-mean="%.3f">%.3f</td>`, mk[0], mk[0]),
		`<td data-metric="runs" title="tiny, tiny-2">2</td>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	dir := t.TempDir()
	if err := rep.Write(filepath.Join(dir, "sub", "report.html"), filepath.Join(dir, "charts"), 0); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "sub", "report.html")); err != nil || st.Size() < 1000 {
		t.Errorf("report.html: %v", err)
	}
}

func TestGanttNodesInNaturalOrder(t *testing.T) {
	r := &Run{Nodes: []Node{{Name: "node-10"}, {Name: "node-2"}, {Name: "node-1"}, {Name: "gpu-01"}},
		Pods: []Pod{{Node: "node-2", Started: 0, Finished: 5, JobID: "a"}, {Node: "node-10", Started: 1, Finished: 2, JobID: "b"}}}
	nodes, bars := r.Gantt()
	if got, want := strings.Join(nodes, " "), "gpu-01 node-1 node-2 node-10"; got != want {
		t.Fatalf("nodes %q, want %q", got, want)
	}
	for _, b := range bars {
		if want := map[string]string{"a": "node-2", "b": "node-10"}[b.Job]; nodes[b.Node] != want {
			t.Errorf("job %s's bar on %s, want %s", b.Job, nodes[b.Node], want)
		}
	}
}

// A run with kube-controller-manager has _controllers.csv: the report
// shows each controller object's row.
func TestControllersTable(t *testing.T) {
	dir := tinyOutputs(t, "controllers")
	csv := "kind,namespace,name,created,first_start,last_end,pods,succeeded,failed,killed,final_state,reason\n" +
		"Job,default,flaky,20.000000,20.000000,30.000000,2,0,2,0,Failed,BackoffLimitExceeded\n"
	if err := os.WriteFile(filepath.Join(dir, "_controllers.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	page := reportPage(t, dir)
	for _, want := range []string{`<table class="controllers">`, "<td>Job default/flaky</td>", "<td>Failed BackoffLimitExceeded</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report has no %q", want)
		}
	}
}

// A run with Karpenter has _nodes.csv and its summary the nodes' totals:
// the report shows each launched node's row and the totals.
func TestNodesTable(t *testing.T) {
	dir := tinyOutputs(t, "nodes")
	csv := "node,instance_type,host,resource_id,created,ready,deleted,lifetime,price,cost,jobs,state\n" +
		"kwok-a,c-16x,pool16-0,2,1.000000,31.000000,130.000000,129.000000,0.68,0.024367,1,deleted\n"
	if err := os.WriteFile(filepath.Join(dir, "_nodes.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := launch.Summary{Status: launch.StatusSucceeded, Nodes: &outputs.NodesSummary{Launched: 1, Deleted: 1, Peak: 1, NodeHours: 129.0 / 3600, Cost: 0.024367}}
	if err := launch.WriteJSON(filepath.Join(dir, "summary.json"), sum); err != nil {
		t.Fatal(err)
	}
	page := reportPage(t, dir)
	for _, want := range []string{`<table class="controllers nodes">`, "<td>kwok-a</td><td>c-16x</td><td>pool16-0</td>", "1 (1 deleted, 0 on no pool host), at most 1 at once; 0.036 node-hours, cost 0.0244", "nodes launched by the autoscaler"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report has no %q", want)
		}
	}
}

// The nodes over time: a step per creation and deletion, per instance
// type, and all of them together when there are several types; a node
// still running at the end counts to the end.
func TestNodeCounts(t *testing.T) {
	nan := math.NaN()
	r := &Run{launched: []outputs.Node{
		{InstanceType: "c-16x", Created: 1, Deleted: 130},
		{InstanceType: "c-32x", Created: 6, Deleted: 145},
		{InstanceType: "c-16x", Created: 21, Deleted: nan},
		{InstanceType: "c-16x", Created: 130, Deleted: 200}, // replaces the first at its instant
	}}
	want := map[string][]Step{
		"c-16x":     {{0, 0}, {1, 1}, {21, 2}, {200, 1}},
		"c-32x":     {{0, 0}, {6, 1}, {145, 0}},
		"all nodes": {{0, 0}, {1, 1}, {6, 2}, {21, 3}, {145, 2}, {200, 1}},
	}
	if got := r.NodeCounts(); !reflect.DeepEqual(got, want) {
		t.Errorf("node counts\n got %v\nwant %v", got, want)
	}
	if got := (&Run{}).NodeCounts(); got != nil {
		t.Errorf("no launched nodes: %v, want nil", got)
	}
}

// A run's batch/v1 Jobs wait from their creation to their first pod's
// start (a Kueue queue included); other controllers and Jobs that never
// started are not counted.
func TestJobWaitingFromControllers(t *testing.T) {
	r := &Run{Controllers: []map[string]string{
		{"kind": "Job", "created": "0.000000", "first_start": "1.000000"},
		{"kind": "Job", "created": "5.000000", "first_start": "66.000000"},
		{"kind": "Job", "created": "10.000000", "first_start": "31.000000"},
		{"kind": "Job", "created": "12.000000", "first_start": ""},
		{"kind": "ReplicaSet", "created": "0.000000", "first_start": "100.000000"},
	}}
	f := r.Figures()
	if f.KubeJobs != 3 || f.MeanJobWaiting != (1+61+21)/3.0 || f.P95JobWaiting != 61 {
		t.Errorf("Jobs %d, mean wait %g, p95 %g; want 3, %g, 61", f.KubeJobs, f.MeanJobWaiting, f.P95JobWaiting, (1+61+21)/3.0)
	}
	if f := (&Run{}).Figures(); f.KubeJobs != 0 || f.MeanJobWaiting != 0 {
		t.Errorf("no controllers: %+v", f)
	}
}

// Utilisation needs every job's requests: with a dynamic job among them
// (not in the workload: its requests unknown), a run has none rather than a
// figure too low.
func TestNoUtilisationWithUnknownRequests(t *testing.T) {
	workload := filepath.Join(t.TempDir(), "w.json")
	if err := os.WriteFile(workload, []byte(`{"nb_res": 1, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p"}],
		"profiles": {"p": {"type": "delay", "delay": 10, "cpu": 2, "memory": "512Mi"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(jobs ...Job) Figures {
		r := &Run{Nodes: []Node{{Name: "n", Allocatable: Request{CPU: 4, Memory: 1 << 30}}}, Jobs: jobs}
		if err := r.readRequests([]string{workload}); err != nil {
			t.Fatal(err)
		}
		return r.Figures()
	}
	static := Job{ID: "w0!1", Profile: "p", Res: 1, Started: true, Start: 0, Finish: 10}
	if f := run(static); !f.HasUtilisation || f.CPUUtilisation != 0.5 {
		t.Fatalf("known requests: utilisation %v %g, want 0.5", f.HasUtilisation, f.CPUUtilisation)
	}
	if f := run(static, Job{ID: "dyn!default.pod", Profile: "unknown", Started: true, Start: 0, Finish: 10}); f.HasUtilisation {
		t.Errorf("a dynamic job's requests unknown: utilisation %g given", f.CPUUtilisation)
	}
}
