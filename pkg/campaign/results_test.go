package campaign

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/outputs"
)

// tinyRun copies pkg/report's tiny run into run r's folder as a finished
// run; with longer, its last job runs 20 s instead of 10 (makespan 35).
func tinyRun(t *testing.T, r Run, out string, longer bool) {
	t.Helper()
	finishRun(t, r, out, launch.StatusSucceeded)
	dir := r.Dir(out)
	for _, f := range []string{"_jobs.csv", "_pods.csv", "_schedule.csv"} {
		data, err := os.ReadFile(filepath.Join("..", "report", "testdata", "tiny", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "_jobs.csv" && longer { // job 4: started at 15, ran 10 s
			data = bytes.Replace(data, []byte("15.000000,10.000000,25.000000"), []byte("15.000000,20.000000,35.000000"), 1)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := launch.WriteJSON(filepath.Join(dir, SummaryFile), launch.Summary{Status: launch.StatusSucceeded, Wall: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
}

// TestCollectGroupsRepetitions: the table has a row per setting with the
// mean ± standard deviation over its finished runs, names the runs that
// have not finished, and the report is written.
func TestCollectGroupsRepetitions(t *testing.T) {
	testdata, err := filepath.Abs(filepath.Join("..", "report", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, "platforms: ["+testdata+"/platform.xml]\nworkloads: ["+testdata+"/workload.json]\n"+
		"schedulers:\n  - {name: A, repetitions: 2}\n  - {name: B}\n")
	runs := c.Runs() // A 1, B 1, A 2
	out := t.TempDir()
	tinyRun(t, runs[0], out, false)
	tinyRun(t, runs[2], out, true)
	res, err := Collect(c, out, "tiny campaign")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Settings) != 1 || len(res.Runs) != 2 || len(res.Missing) != 1 || res.Missing[0].Name != runs[1].Name {
		t.Fatalf("settings %d, runs %d, missing %+v: want A's setting of 2 runs, B missing", len(res.Settings), len(res.Runs), res.Missing)
	}
	g := res.Settings[0].Group
	if g.Makespan.Mean != 30 || g.Makespan.Min != 25 || g.Makespan.Max != 35 {
		t.Errorf("A's makespan %+v, want 25 and 35", g.Makespan)
	}
	var table strings.Builder
	if err := res.Table(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| A | 2 | 6 ± 0 (5 ± 0) | 30.0 ± 7.1 |", "Not in the table: " + runs[1].Name + " (not started)"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}
	if err := res.Write(out, 0); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || !bytes.Contains(html, []byte(`<tr data-group="A">`)) || !bytes.Contains(html, []byte(`data-run="`+runs[2].Name+`"`)) {
		t.Errorf("report.html: %v; want the group of A and its runs", err)
	}
	var saved struct {
		Runs []RunResult `json:"runs"`
	}
	data, err := os.ReadFile(filepath.Join(out, "campaign.json"))
	if err != nil || json.Unmarshal(data, &saved) != nil || len(saved.Runs) != 2 || saved.Runs[1].Figures.Makespan != 35 {
		t.Errorf("campaign.json: %v, %+v", err, saved.Runs)
	}
}

// TestTableHasTheNodesKarpenterLaunched: runs whose summaries have nodes
// (Karpenter's, from _nodes.csv) get the nodes launched, their node-hours
// and their cost in the table, and the energy Batsim says they consumed
// where it does (--energy); a setting without them gets dashes.
func TestTableHasTheNodesKarpenterLaunched(t *testing.T) {
	testdata, err := filepath.Abs(filepath.Join("..", "report", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, "platforms: ["+testdata+"/platform.xml]\nworkloads: ["+testdata+"/workload.json]\n"+
		"schedulers:\n  - {name: K, repetitions: 2}\n  - {name: N}\n")
	runs := c.Runs() // K 1, N 1, K 2
	out := t.TempDir()
	for i, r := range runs {
		tinyRun(t, r, out, false)
		if r.Scheduler.Name != "K" {
			continue
		}
		nodes := &outputs.NodesSummary{Launched: 2 + i/2, NodeHours: 0.5, Cost: 1.5}
		energy := &launch.Energy{Joules: 60000 + 10000*float64(i/2)}
		if err := launch.WriteJSON(filepath.Join(r.Dir(out), SummaryFile), launch.Summary{Status: launch.StatusSucceeded, Wall: 2 * time.Second, Nodes: nodes, Energy: energy}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Collect(c, out, "nodes")
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := res.Table(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| nodes launched | node-hours | cost | energy (J) |", "| 2.5 ± 0.7 | 0.500 ± 0.000 | 1.5000 ± 0.0000 | 65000 ± 7071 |", "| — | — | — | — |"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}
}

// TestReportLabelsRunsAsTheCampaignNamesThem: the report reads each run's
// run.json and labels the run as the campaign does (Label): the scheduler's
// name, with the workload's here where the matrix has two, in the forms an
// entry takes ({name, files}, a list of paths).
func TestReportLabelsRunsAsTheCampaignNamesThem(t *testing.T) {
	testdata, err := filepath.Abs(filepath.Join("..", "report", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, "platforms: ["+testdata+"/platform.xml]\n"+
		"workloads:\n  - {name: tiny, files: ["+testdata+"/workload.json]}\n  - ["+testdata+"/workload.json, "+testdata+"/workload.json]\n"+
		"schedulers:\n  - {name: kube-scheduler 1.37 (bin-packing)}\n  - {name: B}\n")
	out := t.TempDir()
	for _, r := range c.Runs() {
		tinyRun(t, r, out, false)
	}
	res, err := Collect(c, out, "labels")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range c.Runs() {
		if got, want := res.Report.Runs[i].Run.Label, c.Label(r); got != want {
			t.Errorf("run %s: labelled %q, the campaign's label %q", r.Name, got, want)
		}
	}
}

// TestEmitJobRunsEveryIndexOnce: the manifest is an Indexed Job with one
// completion per run, whose pods read the campaign file, as it is, from
// the ConfigMap that follows, and write to the claim.
func TestEmitJobRunsEveryIndexOnce(t *testing.T) {
	c := mustParse(t, matrixFile)
	var b bytes.Buffer
	o := JobOptions{Name: "sweep", Namespace: "research", Image: "registry.example/batkube:v1", Parallelism: 50,
		OutputClaim: "results", RetriesPerRun: 2, CPU: "2", Memory: "3Gi", Args: []string{"--batsim", "embedded"}}
	if err := EmitJob(&b, c, []byte(matrixFile), o); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(b.String(), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want the Job and the ConfigMap", len(docs))
	}
	var job batchv1.Job
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &job); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &cm); err != nil {
		t.Fatal(err)
	}
	s := job.Spec
	if job.Kind != "Job" || job.APIVersion != "batch/v1" || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 20 || *s.Parallelism != 20 {
		t.Errorf("job %s %s: mode %v, completions %d, parallelism %d; want Indexed, 20, 20 (no more than the runs)",
			job.APIVersion, job.Kind, *s.CompletionMode, *s.Completions, *s.Parallelism)
	}
	if *s.BackoffLimitPerIndex != 2 || job.Namespace != "research" || cm.Namespace != "research" {
		t.Errorf("backoffLimitPerIndex %d, namespaces %q %q", *s.BackoffLimitPerIndex, job.Namespace, cm.Namespace)
	}
	pod := s.Template.Spec
	ctr := pod.Containers[0]
	if ctr.Image != o.Image || strings.Join(ctr.Args, " ") != "--out /out/sweep --batsim embedded /etc/batkube-campaign/campaign.yaml" {
		t.Errorf("container %s %q", ctr.Image, ctr.Args)
	}
	if pod.RestartPolicy != corev1.RestartPolicyNever || pod.Volumes[0].ConfigMap.Name != cm.Name || pod.Volumes[1].PersistentVolumeClaim.ClaimName != "results" {
		t.Errorf("pod: restart %s, volumes %+v", pod.RestartPolicy, pod.Volumes)
	}
	if cm.Data["campaign.yaml"] != matrixFile {
		t.Error("the ConfigMap does not hold the campaign file as it is")
	}
	// The file in the ConfigMap gives the same runs: index K is the same run.
	again, err := Parse([]byte(cm.Data["campaign.yaml"]))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range again.Runs() {
		if r.Name != c.Runs()[i].Name {
			t.Errorf("index %d: %s in the Job, %s here", i, r.Name, c.Runs()[i].Name)
		}
	}
	for _, bad := range []JobOptions{
		{Name: "Sweep", Image: "i", Parallelism: 1, OutputClaim: "c"},
		{Name: strings.Repeat("s", 62), Image: "i", Parallelism: 1, OutputClaim: "c"},
		{Name: "s", Parallelism: 1, OutputClaim: "c"},
		{Name: "s", Image: "i", Parallelism: 1},
		{Name: "s", Image: "i", Parallelism: 1, OutputClaim: "c", CPU: "two"},
	} {
		if err := EmitJob(&bytes.Buffer{}, c, nil, bad); err == nil {
			t.Errorf("EmitJob(%+v): no error", bad)
		}
	}
}

func TestJobName(t *testing.T) {
	for in, want := range map[string]string{
		"examples/schedulers/compare.yaml":          "batkube-campaign-compare",
		"My_Sweep.v2.yaml":                          "batkube-campaign-my-sweep-v2",
		"a-very-long-campaign-file-name-indeed.yml": "batkube-campaign-a-very-long-campaign-fi",
	} {
		if got := JobName(in); got != want {
			t.Errorf("JobName(%q) = %q, want %q", in, got, want)
		}
	}
}
