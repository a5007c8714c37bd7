package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/campaign"
	"github.com/batkube/batkube/pkg/launch"
)

// campaignCommand builds cmd/batkube-campaign (with the race detector
// when the tests have it), once, and returns its path.
func campaignCommand(t *testing.T) string {
	t.Helper()
	return filepath.Join(buildCommands(t, raceEnabled, "./cmd/batkube-campaign"), "batkube-campaign")
}

// writeCampaign writes a campaign file and returns its path and runs.
func writeCampaign(t *testing.T, content string) (string, []campaign.Run) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "campaign.yaml")
	writeFile(t, path, []byte(content))
	c, _, err := campaign.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, c.Runs()
}

// campaignRun is a batkube-campaign process whose stderr lines are read
// as they come.
type campaignRun struct {
	cmd    *exec.Cmd
	lines  chan string
	stdout bytes.Buffer
	mu     sync.Mutex
	stderr strings.Builder
	done   chan struct{} // closed when stderr ends
}

func startCampaign(t *testing.T, env []string, args ...string) *campaignRun {
	t.Helper()
	c := &campaignRun{cmd: exec.Command(campaignCommand(t), args...), lines: make(chan string, 1000), done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout = &c.stdout
	pipe, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.done)
		defer close(c.lines)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			c.mu.Lock()
			c.stderr.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
			c.lines <- sc.Text()
		}
	}()
	return c
}

// waitLine returns once a line of stderr matches re; it fails the test if
// the process ends first or d passes.
func (c *campaignRun) waitLine(t *testing.T, re string, d time.Duration) {
	t.Helper()
	match := regexp.MustCompile(re)
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("batkube-campaign ended before a line matched %q:\n%s", re, c.output())
			}
			if match.MatchString(line) {
				return
			}
		case <-timeout.C:
			t.Fatalf("no line matched %q within %s:\n%s", re, d, c.output())
		}
	}
}

// wait waits for the process's end (its stderr first) and returns its error.
func (c *campaignRun) wait() error {
	go func() {
		for range c.lines { // drain: the reader must not block
		}
	}()
	<-c.done
	return c.cmd.Wait()
}

func (c *campaignRun) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// runCampaign runs batkube-campaign to its end and returns its stdout and
// stderr; it fails the test if the exit code is not want.
func runCampaign(t *testing.T, want int, env []string, args ...string) (string, string) {
	t.Helper()
	c := startCampaign(t, env, args...)
	err := c.wait()
	code := 0
	if err != nil {
		code = -1
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		}
	}
	if code != want {
		t.Fatalf("batkube-campaign %s: exit %d (%v), want %d\n%s\n%s", strings.Join(args, " "), code, err, want, c.output(), c.stdout.String())
	}
	return c.stdout.String(), c.output()
}

// runJobs reads the _jobs.csv of a run's folder.
func runJobs(t *testing.T, dir string) map[string]jobRow {
	t.Helper()
	return (&simulation{t: t, cfg: launch.Config{OutDir: dir}}).jobs()
}

// summaryOf reads a run's summary.json.
func summaryOf(t *testing.T, dir string) launch.Summary {
	t.Helper()
	var s launch.Summary
	data := readFile(t, filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCampaignCompletesResumesAndReports: a three-run campaign (the FIFO
// and the random client-go schedulers on one contended workload, the
// random one twice with another seed) is killed (SIGKILL, no clean-up)
// once its first run has finished and its second started; run again, it
// keeps the finished run (its summary.json untouched), redoes the
// half-written one from scratch, runs the third, and reports: the table
// and report.html give each run's figures as its _jobs.csv does, and the
// random scheduler's two runs as mean ± spread. Run once more, it runs
// nothing. With Chromium, the report is also checked in the browser
// (BATKUBE_CAMPAIGN_SCREENSHOT=FILE keeps its screenshot: docs/campaign-report.png).
func TestCampaignCompletesResumesAndReports(t *testing.T) {
	bin := batkubeBinaries(t)
	workload := filepath.Join(t.TempDir(), "contended_40.json")
	writeContendedWorkload(t, workload, 40, 0.8, 11)
	file, runs := writeCampaign(t, fmt.Sprintf(`platforms: [%s]
workloads: [%s]
schedulers:
  - name: fifo
    schedulerCmd: %s --kubeconfig {kubeconfig}
    serverArgs: [--settle=signal]
  - name: random
    schedulerCmd: %s --kubeconfig {kubeconfig} --seed {repetition}
    serverArgs: [--settle=signal]
    repetitions: 2
`, abs(repoRoot(), platform4), workload, filepath.Join(bin, "fifo"), filepath.Join(bin, "random")))
	if len(runs) != 3 || runs[0].Scheduler.Name != "fifo" || runs[1].Scheduler.Name != "random" || runs[2].Repetition != 2 {
		t.Fatalf("runs %v: want fifo, random, random again", runs)
	}
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"-q", "--bin-dir", bin, "--batsim", "embedded", "--png-dpi", "0", "-o", out, file}

	// Interrupted half-way: killed once run 0 is done and run 1 started.
	first := startCampaign(t, nil, append([]string{"-j", "1"}, args...)...)
	first.waitLine(t, `^batkube-campaign: done +`+regexp.QuoteMeta(runs[0].Name)+` `, 5*time.Minute)
	first.waitLine(t, `^batkube-campaign: started `+regexp.QuoteMeta(runs[1].Name)+` `, time.Minute)
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := first.wait(); err == nil {
		t.Fatal("the killed campaign exited 0")
	}
	kept := filepath.Join(runs[0].Dir(out), "summary.json")
	before := readFile(t, kept)
	keptInfo, err := os.Stat(kept)
	if err != nil {
		t.Fatal(err)
	}
	if state, _, _ := campaign.Inspect(runs[1], out); state != campaign.Unfinished {
		t.Fatalf("run 1 after the kill: %v, want unfinished (a folder without a summary)", state)
	}
	if _, err := os.Stat(runs[2].Dir(out)); err == nil {
		t.Fatal("run 2 started before the kill")
	}

	// Resumed, two at a time.
	stdout, stderr := runCampaign(t, 0, nil, append([]string{"-j", "2"}, args...)...)
	for _, want := range []string{
		"kept    " + runs[0].Name + " (finished before)",
		"started " + runs[1].Name + " (run 1, from scratch: its folder held an unfinished run)",
		"started " + runs[2].Name + " (run 2)",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the resumed campaign did not say %q:\n%s", want, stderr)
		}
	}
	if after, err := os.ReadFile(kept); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the finished run's summary.json changed: %v", err)
	}
	if info, err := os.Stat(kept); err != nil || !info.ModTime().Equal(keptInfo.ModTime()) {
		t.Errorf("the finished run's summary.json was rewritten: %v", err)
	}

	// Every run's figures, from its _jobs.csv.
	want := map[string]jobFigures{}
	for _, r := range runs {
		dir := r.Dir(out)
		if s := summaryOf(t, dir); s.Status != launch.StatusSucceeded || s.Jobs != 40 || s.Succeeded != 40 {
			t.Errorf("%s: summary %s, %d jobs (%d succeeded); want succeeded, 40 (40)", r.Name, s.Status, s.Jobs, s.Succeeded)
		}
		want[r.Name] = figuresOf(runJobs(t, dir))
	}
	if want[runs[1].Name] == want[runs[2].Name] {
		t.Logf("the random scheduler's two seeds gave the same figures (possible on a small workload)")
	}
	page := readFile(t, filepath.Join(out, "report.html"))
	html := string(page)
	for _, r := range runs {
		f := want[r.Name]
		for metric, v := range map[string]float64{"makespan": f.makespan, "mean-waiting": f.meanWaiting} {
			cell := regexp.MustCompile(`(?s)<tr data-run="` + regexp.QuoteMeta(r.Name) + `"[^>]*>.*?<td data-metric="` + metric + `">([^<]*)</td>`).FindStringSubmatch(html)
			if cell == nil || cell[1] != fmt.Sprintf("%.3f", v) {
				t.Errorf("report.html, run %s, %s: %v; _jobs.csv gives %.3f", r.Name, metric, cell, v)
			}
		}
	}
	meanMakespan := (want[runs[1].Name].makespan + want[runs[2].Name].makespan) / 2
	if !strings.Contains(html, fmt.Sprintf(`<td data-metric="makespan" data-mean="%.3f">`, meanMakespan)) {
		t.Errorf("report.html has no setting whose mean makespan is the random runs' (%.3f)", meanMakespan)
	}
	for _, row := range []string{
		fmt.Sprintf("| fifo | 1 | 40 (40) | %.1f |", want[runs[0].Name].makespan),
		fmt.Sprintf("| random | 2 | 40 ± 0 (40 ± 0) | %.1f ± ", meanMakespan),
	} {
		if !strings.Contains(stdout, row) {
			t.Errorf("the table lacks %q:\n%s", row, stdout)
		}
	}
	if table, err := os.ReadFile(filepath.Join(out, "campaign.md")); err != nil || string(table) != stdout {
		t.Errorf("campaign.md is not the printed table: %v", err)
	}

	// Nothing left to run.
	_, again := runCampaign(t, 0, nil, args...)
	if strings.Contains(again, "started") || strings.Count(again, "kept    ") != 3 {
		t.Errorf("the finished campaign ran something again:\n%s", again)
	}

	if browser := findChromium(); browser != "" {
		page := openInChromium(t, browser, filepath.Join(out, "report.html"))
		if len(page.Rows) != 3 {
			t.Errorf("Chromium: %d rows in the comparison table, want 3", len(page.Rows))
		}
		for _, row := range page.Rows {
			if f, ok := want[row["run"]]; !ok || row["makespan"] != fmt.Sprintf("%.3f", f.makespan) {
				t.Errorf("Chromium: row %v; _jobs.csv gives makespan %.3f", row, f.makespan)
			}
		}
		checkScreenshot(t, page.Screenshot)
		if keep := os.Getenv("BATKUBE_CAMPAIGN_SCREENSHOT"); keep != "" {
			writeFile(t, keep, page.Screenshot)
		}
	} else {
		t.Log("no chromium on PATH: the report is not opened in a browser")
	}
}

// findChromium returns the path of a Chromium, or "".
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestCampaignShardsLikeAnIndexedJob: --list numbers the runs as
// pkg/campaign does; each run of the matrix, started as a Job's pod would
// start it (JOB_COMPLETION_INDEX=K, or --index K), runs that run and no
// other, two at a time as separate processes; --report-only then reports
// all four; an index outside the matrix is a usage error.
func TestCampaignShardsLikeAnIndexedJob(t *testing.T) {
	bin := batkubeBinaries(t)
	root := repoRoot()
	file, runs := writeCampaign(t, fmt.Sprintf(`platforms: [%s]
workloads:
  - %s
  - [%s, %s]
schedulers:
  - name: fifo
    schedulerCmd: %s --kubeconfig {kubeconfig}
    serverArgs: [--settle=signal]
  - name: random
    schedulerCmd: %s --kubeconfig {kubeconfig} --seed 5
    serverArgs: [--settle=signal]
`, abs(root, platform4), abs(root, "examples/workloads/delay_10.json"), abs(root, "examples/workloads/delay_10.json"),
		abs(root, "examples/workloads/parallel.json"), filepath.Join(bin, "fifo"), filepath.Join(bin, "random")))
	out := filepath.Join(t.TempDir(), "out")
	common := []string{"-q", "--bin-dir", bin, "--batsim", "embedded", "--png-dpi", "0", "-o", out}

	list, _ := runCampaign(t, 0, nil, append(common, "--list", file)...)
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 4 {
		t.Fatalf("--list: %d runs, want 2 schedulers × 2 workloads:\n%s", len(lines), list)
	}
	for k, line := range lines {
		if want := fmt.Sprintf("%d\t%s\tnot started", k, runs[k].Name); line != want {
			t.Errorf("--list line %d: %q, want %q", k, line, want)
		}
	}

	// Pods 0 and 1 at once, then 2 and 3: each runs its run only.
	for _, pair := range [][2]int{{0, 1}, {2, 3}} {
		var procs []*campaignRun
		for _, k := range pair {
			env, args := []string{fmt.Sprintf("JOB_COMPLETION_INDEX=%d", k)}, append([]string(nil), common...)
			if k == 3 {
				env, args = nil, append(args, "--index", "3") // the flag, without the variable
			}
			procs = append(procs, startCampaign(t, env, append(args, file)...))
		}
		for i, p := range procs {
			if err := p.wait(); err != nil {
				t.Fatalf("index %d: %v\n%s", pair[i], err, p.output())
			}
		}
		for _, k := range pair {
			r := runs[k]
			var settings campaign.Run
			data, err := os.ReadFile(filepath.Join(r.Dir(out), campaign.SettingsFile))
			if err != nil || json.Unmarshal(data, &settings) != nil || settings.Name != r.Name || settings.Scheduler.Name != r.Scheduler.Name {
				t.Errorf("index %d: run.json %s (%v), want run %s", k, data, err, r.Name)
			}
			jobs := 10
			if len(r.Workload.Files) == 2 {
				jobs = 10 + 8
			}
			if n := len(runJobs(t, r.Dir(out))); n != jobs {
				t.Errorf("index %d (%s): %d jobs in _jobs.csv, want %d", k, r.Name, n, jobs)
			}
		}
		entries, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(entries); n != pair[1]+1 {
			t.Errorf("after indexes 0 to %d: %d entries in the output folder, want one folder per run so far", pair[1], n)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err == nil {
		t.Error("a run of one index wrote the campaign's report: only --report-only should")
	}
	table, _ := runCampaign(t, 0, nil, append(common, "--report-only", file)...)
	for _, r := range runs {
		if !strings.Contains(table, "| "+r.Scheduler.Name+" | "+strings.Join(baseStems(r.Workload.Files), "+")+" | 1 |") {
			t.Errorf("the table lacks %s:\n%s", r.Name, table)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Errorf("--report-only: %v", err)
	}
	_, stderr := runCampaign(t, 2, []string{"JOB_COMPLETION_INDEX=4"}, append(common, file)...)
	if !strings.Contains(stderr, "0 to 3") {
		t.Errorf("index 4 of 4 runs: %q, want an error giving the range", stderr)
	}
}

func baseStems(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
	}
	return out
}

// TestCampaignJobAcceptedByTheAPIServer: the manifest --emit-job writes
// for the example campaign passes `kubectl apply --dry-run=server` against
// Batkube's API server (validated, nothing stored), a broken one (no
// containers, a mount of no volume) is refused with the field named, and
// a real apply stores a Job of one completion per run.
func TestCampaignJobAcceptedByTheAPIServer(t *testing.T) {
	c := startCluster(t)
	kubectl := binary(t, "kubectl")
	example := filepath.Join(repoRoot(), "examples", "campaign", "campaign.yaml")
	cfg, _, err := campaign.Read(example)
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ := runCampaign(t, 0, nil, "--emit-job", "--image", "registry.example/batkube:v1", "--output-claim", "results",
		"--parallelism", "3", "--job-name", "sweep", example)
	apply := func(t *testing.T, doc string, args ...string) (string, error) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "job.yaml")
		writeFile(t, path, []byte(doc))
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", c.kubeconfig, "apply", "-f", path}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := apply(t, manifest, "--dry-run=server")
	if err != nil || !strings.Contains(out, "job.batch/sweep created (server dry run)") || !strings.Contains(out, "configmap/sweep created (server dry run)") {
		t.Fatalf("kubectl apply --dry-run=server: %v\n%s", err, out)
	}
	ctx := testContext(t, time.Minute)
	if jobs, err := c.client.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{}); err != nil || len(jobs.Items) != 0 {
		t.Fatalf("after the dry run: %d jobs (%v), want none stored", len(jobs.Items), err)
	}

	docs := strings.SplitN(manifest, "\n---\n", 2)
	var job batchv1.Job
	if err := yaml.Unmarshal([]byte(docs[0]), &job); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*batchv1.Job)
		want   string
	}{
		{"no containers", func(j *batchv1.Job) { j.Spec.Template.Spec.Containers = nil }, "spec.template.spec.containers: Required value"},
		{"a mount of no volume", func(j *batchv1.Job) { j.Spec.Template.Spec.Volumes[1].Name = "outputs" }, `volumeMounts[1].name: Not found: "out"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			broken := job.DeepCopy()
			tc.mutate(broken)
			doc, err := yaml.Marshal(broken)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := apply(t, string(doc), "--dry-run=server"); err == nil || !strings.Contains(out, tc.want) {
				t.Errorf("kubectl apply --dry-run=server of a broken Job: %v\n%s\nwant a refusal saying %q", err, out, tc.want)
			}
		})
	}

	if out, err := apply(t, manifest); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	stored, err := c.client.BatchV1().Jobs("default").Get(ctx, "sweep", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := int32(len(cfg.Runs())); *stored.Spec.Completions != n || *stored.Spec.CompletionMode != batchv1.IndexedCompletion || *stored.Spec.Parallelism != 3 {
		t.Errorf("stored Job: %d completions (%s), parallelism %d; want %d Indexed, 3", *stored.Spec.Completions, *stored.Spec.CompletionMode, *stored.Spec.Parallelism, n)
	}
	cm, err := c.client.CoreV1().ConfigMaps("default").Get(ctx, "sweep", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(example); err != nil || cm.Data["campaign.yaml"] != string(data) {
		t.Errorf("the ConfigMap does not hold the campaign file as it is (%v)", err)
	}
}
