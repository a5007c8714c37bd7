package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/metrics"
	"github.com/batkube/batkube/pkg/outputs"
)

// TestMetricsSavedWithTheRun runs a contended workload with the embedded
// engine, Batkube and kube-scheduler 1.37, then checks the metrics the run
// saved against its other outputs: kube-scheduler's own metrics (saved
// before it was stopped) count one scheduled attempt per pod bound in
// _pods.csv, and unschedulable ones for the pods that waited; the
// server's count as many bindings (POST pods/binding, 201), its steps are
// summary.json's, counted by how they ended as the summary counts them,
// its simulated time is the last step's, its jobs all finished, and no
// watch was left open; summary.json and the printed summary carry
// kube-scheduler's figures.
func TestMetricsSavedWithTheRun(t *testing.T) {
	const workload = "pkg/e2e/testdata/contended.json"
	s := newSimulation(t, platform4, workload)
	s.obs = nil
	sum := s.mustRun(5 * time.Minute)
	out := s.cfg.OutDir

	pods, err := outputs.ReadCSV(filepath.Join(out, "_pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	bound, waited := 0, 0
	for _, p := range pods {
		if p["bound"] != "" {
			bound++
		}
		if p["failed_scheduling"] != "0" {
			waited++
		}
	}
	jobs := len(workloadJobs(t, workload))
	if bound != jobs {
		t.Fatalf("_pods.csv: %d pods bound, want one per job (%d)", bound, jobs)
	}
	if waited == 0 {
		t.Fatal("no pod was ever unschedulable: the workload is meant to contend for the nodes")
	}

	sched, err := metrics.ParseFile(filepath.Join(out, launch.KubeSchedulerMetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	attempts := sched.SumBy("scheduler_schedule_attempts_total", "result", nil)
	if attempts["scheduled"] != float64(bound) {
		t.Errorf("kube-scheduler-metrics.txt: %g scheduled attempts, want one per pod bound (%d)", attempts["scheduled"], bound)
	}
	if attempts["unschedulable"] < float64(waited) {
		t.Errorf("kube-scheduler-metrics.txt: %g unschedulable attempts, want at least one per pod that had a FailedScheduling event (%d)",
			attempts["unschedulable"], waited)
	}
	k := sum.KubeScheduler
	if k == nil {
		t.Fatal("the summary has no kube-scheduler figures")
	}
	if k.Attempts.Scheduled != bound || float64(k.Attempts.Unschedulable) != attempts["unschedulable"] ||
		k.AttemptLatency == nil || k.AttemptLatency.Count != k.Attempts.Total() || !(k.AttemptLatency.Mean > 0) ||
		!(k.AttemptLatency.P95 > 0) || k.PodLatency == nil || k.PodLatency.Count != bound {
		t.Errorf("summary of kube-scheduler: %+v (attempt latency %+v, pod latency %+v); want %d scheduled, %g unschedulable, every attempt timed, every pod's latency",
			*k, k.AttemptLatency, k.PodLatency, bound, attempts["unschedulable"])
	}
	var saved struct {
		KubeScheduler *metrics.SchedulerSummary `json:"kubeScheduler"`
		Steps         int                       `json:"steps"`
	}
	data := readFile(t, filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	if saved.KubeScheduler == nil || saved.KubeScheduler.Attempts != k.Attempts {
		t.Errorf("summary.json: kubeScheduler %+v, want %+v", saved.KubeScheduler, k.Attempts)
	}
	var printed strings.Builder
	sum.Write(&printed)
	if !strings.Contains(printed.String(), "kube-scheduler: ") || !strings.Contains(printed.String(), "latency (wall clock): attempt mean") {
		t.Errorf("the printed summary has no kube-scheduler lines:\n%s", printed.String())
	}

	server, err := metrics.ParseFile(filepath.Join(out, launch.ServerMetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	bindings := map[string]string{"verb": "POST", "group": "", "version": "v1", "resource": "pods", "subresource": "binding",
		"scope": "resource", "code": "201"}
	if got := server.Sum("apiserver_request_total", bindings); got != float64(bound) {
		t.Errorf("server-metrics.txt: %g pod bindings (POST pods/binding 201), want %d", got, bound)
	}
	steps := server.SumBy("batkube_broker_steps_total", "ended", nil)
	if got := server.Sum("batkube_broker_steps_total", nil); got != float64(sum.Steps) || sum.Steps != saved.Steps {
		t.Errorf("server-metrics.txt: %g steps %v; summary %d, summary.json %d", got, steps, sum.Steps, saved.Steps)
	}
	for ended, want := range map[string]int{"nothing_pending": sum.Settle.NothingPending, "exact": sum.Settle.Idle,
		"quiet": sum.Settle.Quiet, "settle_max": sum.Settle.MaxWait, "unproven": sum.Settle.Unproven, "simulation_end": 1} {
		if steps[ended] != float64(want) {
			t.Errorf("server-metrics.txt: batkube_broker_steps_total{ended=%q} = %g, want %d (the summary's)", ended, steps[ended], want)
		}
	}
	if sum.Settle.Idle == 0 {
		t.Error("no step settled exactly: the kube-scheduler policy was not at work")
	}
	var stats broker.Progress
	data, err = os.ReadFile(filepath.Join(out, "server-stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &stats); err != nil {
		t.Fatal(err)
	}
	now := server.Sum("batkube_simulated_time_seconds", nil)
	if now != stats.Now || math.Abs(now-sum.Makespan) > 1e-6 {
		t.Errorf("server-metrics.txt: simulated time %g, want the last step's %g, the makespan %g", now, stats.Now, sum.Makespan)
	}
	for state, want := range map[string]int{"pending": 0, "running": 0, "finished": jobs} {
		if got := server.Sum("batkube_jobs", map[string]string{"state": state}); got != float64(want) {
			t.Errorf("server-metrics.txt: batkube_jobs{state=%q} = %g, want %d", state, got, want)
		}
	}
	for name, labels := range map[string]map[string]string{
		"batkube_jobs_submitted_total":         nil,
		"batkube_batsim_events_received_total": {"type": "JOB_SUBMITTED"},
		"batkube_batsim_events_sent_total":     {"type": "EXECUTE_JOB"},
	} {
		if got := server.Sum(name, labels); got != float64(jobs) {
			t.Errorf("server-metrics.txt: %s%v = %g, want %d", name, labels, got, jobs)
		}
	}
	if got := server.Sum("batkube_batsim_messages_total", map[string]string{"direction": "received"}); got != float64(sum.Steps) {
		t.Errorf("server-metrics.txt: %g messages received from Batsim, want one per step (%d)", got, sum.Steps)
	}
	if got := server.Sum("apiserver_longrunning_requests", nil); got != 0 {
		t.Errorf("server-metrics.txt: %g watches open once the API has stopped, want 0", got)
	}
	if got := server.Sum("apiserver_request_total", map[string]string{"verb": "WATCH", "resource": "pods"}); got < 1 {
		t.Errorf("server-metrics.txt: kube-scheduler's watch of pods was not counted")
	}
}

// TestMetricsScrapedDuringARun scrapes the API server's /metrics during a
// held simulation with kube-scheduler 1.37, with a plain HTTP client and
// the Prometheus text parser: once the long job runs, the server shows it
// running and the blocker pending, the one binding, a simulated time
// within the long job's run, and the watches of the scheduler and of the
// test's client open.
func TestMetricsScrapedDuringARun(t *testing.T) {
	s := newHeldSimulation(t)
	s.cfg.ServerArgs = append(s.cfg.ServerArgs, "--pending-timeout=10m")
	scraped := make(chan metrics.Families, 1)
	s.onReady = func(s *simulation) {
		go func() {
			defer close(scraped)
			name, ok := waitFor(t, s.obs.running, s.obs, "w0!long", 2*time.Minute)
			if !ok {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var f metrics.Families
			// The broker publishes a step's figures once it has answered
			// Batsim, after the pod's phase reached the watch.
			err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
				resp, err := http.Get(s.cluster.URL + metrics.Path)
				if err != nil {
					return false, nil // the next poll tries again
				}
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					return false, fmt.Errorf("GET /metrics: %s", resp.Status)
				}
				if f, err = metrics.Parse(resp.Body); err != nil {
					return false, err
				}
				return f.Sum("batkube_jobs", map[string]string{"state": "running"}) == 1, nil
			})
			if err != nil {
				t.Errorf("/metrics never showed the long job running: %v", err)
			} else {
				scraped <- f
			}
			// Killing the long job lets the run end.
			if err := s.client.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting the running pod %s: %v", name, err)
			}
		}()
	}
	s.mustRun(4 * time.Minute)
	f, ok := <-scraped
	if !ok {
		t.Fatal("no scrape")
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"batkube_jobs", map[string]string{"state": "pending"}, 1},
		{"batkube_jobs", map[string]string{"state": "finished"}, 0},
		{"batkube_jobs_submitted_total", nil, 2},
		{"apiserver_request_total", map[string]string{"verb": "POST", "resource": "pods", "subresource": "binding", "code": "201"}, 1},
	} {
		if got := f.Sum(c.name, c.labels); got != c.want {
			t.Errorf("/metrics during the run: %s%v = %g, want %g", c.name, c.labels, got, c.want)
		}
	}
	// kube-scheduler and the test's observer watch pods.
	podWatches := map[string]string{"verb": "WATCH", "resource": "pods"}
	if got := f.Sum("apiserver_longrunning_requests", podWatches); got < 2 {
		t.Errorf("/metrics during the run: apiserver_longrunning_requests%v = %g, want at least 2", podWatches, got)
	}
	if got := f.Sum("batkube_broker_steps_total", nil); got < 1 {
		t.Errorf("/metrics during the run: %g steps", got)
	}
	// Back-off wake-ups move time on while the blocker waits, long before
	// the long job's end.
	if now := f.Sum("batkube_simulated_time_seconds", nil); !f.Has("batkube_simulated_time_seconds") || now < 0 || now >= 1e6 {
		t.Errorf("/metrics during the run: simulated time %g, want within the long job's run [0, 1e6)", now)
	}
	if !f.Has("process_cpu_seconds_total") {
		t.Error("/metrics during the run: no process_cpu_seconds_total")
	}
}
