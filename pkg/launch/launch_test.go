package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/settle"
)

func TestWriteSchedulerConfigPointsAtTheRunsKubeconfig(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	if err := os.WriteFile(user, []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: /somewhere/else
  qps: 100
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"", user} {
		out := filepath.Join(dir, "out.yaml")
		names, err := writeSchedulerConfig(out, src, "/run/kubeconfig.yaml", 37, noExpand)
		if err != nil {
			t.Fatalf("from %q: %v", src, err)
		}
		if len(names) != 1 || names[0] != "default-scheduler" {
			t.Errorf("from %q: profile names %v, want [default-scheduler]", src, names)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Kind             string `json:"kind"`
			ClientConnection struct {
				Kubeconfig string  `json:"kubeconfig"`
				QPS        float64 `json:"qps"`
			} `json:"clientConnection"`
			Profiles                 []any `json:"profiles"`
			PodInitialBackoffSeconds *int  `json:"podInitialBackoffSeconds"`
		}
		if err := yaml.Unmarshal(b, &cfg); err != nil {
			t.Fatalf("from %q: %v\n%s", src, err, b)
		}
		if cfg.Kind != "KubeSchedulerConfiguration" || cfg.ClientConnection.Kubeconfig != "/run/kubeconfig.yaml" {
			t.Errorf("from %q: kind %q kubeconfig %q, want the run's kubeconfig in a KubeSchedulerConfiguration", src, cfg.Kind, cfg.ClientConnection.Kubeconfig)
		}
		if src == user && (cfg.ClientConnection.QPS != 100 || len(cfg.Profiles) != 1) {
			t.Errorf("the user's settings were lost: %s", b)
		}
		if src == "" && cfg.ClientConnection.QPS != 5000 {
			t.Errorf("default configuration: qps %g, want 5000", cfg.ClientConnection.QPS)
		}
		if cfg.PodInitialBackoffSeconds != nil {
			t.Errorf("from %q without gangs: podInitialBackoffSeconds %d, want upstream's default", src, *cfg.PodInitialBackoffSeconds)
		}
	}
	if _, err := writeSchedulerConfig(filepath.Join(dir, "x.yaml"), filepath.Join(dir, "missing.yaml"), "k", 37, noExpand); err == nil {
		t.Error("a missing configuration file was accepted")
	}
}

func TestSummaryFromBatsimOutputs(t *testing.T) {
	dir := t.TempDir()
	prefix := dir + "/"
	jobs := `job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata
1,w0,p,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,10.000000,10.000000,0.000000,10.000000,1.000000,0,-1.000000,""
2,w0,p,1.000000,1,5.000000,0,COMPLETED_WALLTIME_REACHED,1.000000,5.000000,6.000000,0.000000,5.000000,1.000000,1,-1.000000,""
3,w1,p,2.000000,1,-1.000000,0,REJECTED,,,,,,,,,""
4,w1,p,2.000000,1,-1.000000,0,COMPLETED_KILLED,2.000000,1.000000,3.000000,0.000000,1.000000,1.000000,0,-1.000000,""
`
	schedule := `batsim_version,consumed_joules,makespan,max_slowdown,max_turnaround_time,max_waiting_time,mean_slowdown,mean_turnaround_time,mean_waiting_time,nb_computing_machines,nb_grouped_switches,nb_jobs,nb_jobs_finished,nb_jobs_killed,nb_jobs_rejected,nb_jobs_success,nb_machine_switches,scheduling_time,simulation_time,success_rate,time_computing,time_idle,time_sleeping,time_switching_off,time_switching_on,time_unavailable
4.2.1,0.000000,10.000000,1.000000,10.000000,0.000000,1.000000,5.333333,0.250000,2,0,4,3,1,1,1,0,0.400000,0.500000,0.250000,16.000000,4.000000,0.000000,0.000000,0.000000,0.000000
`
	if err := os.WriteFile(prefix+"_jobs.csv", []byte(jobs), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prefix+"_schedule.csv", []byte(schedule), 0o600); err != nil {
		t.Fatal(err)
	}
	var s Summary
	if err := s.readOutputs(prefix); err != nil {
		t.Fatal(err)
	}
	want := Summary{Jobs: 4, Succeeded: 1, WalltimeReached: 1, Rejected: 1, Killed: 1, Makespan: 10, MeanWaitingTime: 0.25,
		SimulationWall: 500 * time.Millisecond, SchedulingWall: 400 * time.Millisecond}
	if s.Jobs != want.Jobs || s.Succeeded != want.Succeeded || s.WalltimeReached != want.WalltimeReached || s.Rejected != want.Rejected ||
		s.Killed != want.Killed || s.Makespan != want.Makespan || s.MeanWaitingTime != want.MeanWaitingTime ||
		s.SimulationWall != want.SimulationWall || s.SchedulingWall != want.SchedulingWall {
		t.Errorf("summary %+v, want %+v", s, want)
	}
	if got := s.SimulationSpeedUp(); got != 20 {
		t.Errorf("speed-up of the simulation proper %g, want 10 s / 0.5 s = 20", got)
	}
	var b strings.Builder
	s.Write(&b)
	for _, w := range []string{"4 (1 succeeded", "1 rejected", "makespan:      10.000 s"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("printed summary lacks %q:\n%s", w, b.String())
		}
	}
	if s.Energy != nil || strings.Contains(b.String(), "energy:") {
		t.Errorf("a run without Batsim's energy plugin (consumed_joules 0): energy %+v, want none printed", s.Energy)
	}
	// With --energy: real Batsim 4.2.1's row on the Karpenter example
	// with its pool switched off (docs/karpenter.md).
	energySchedule := strings.Replace(schedule, "4.2.1,0.000000,", "4.2.1,65168.000027,", 1)
	energySchedule = strings.Replace(energySchedule, "16.000000,4.000000,0.000000,0.000000,0.000000,0.000000", "240.000000,94.100000,11.000000,70.000000,90.000000,0.000000", 1)
	energySchedule = strings.Replace(energySchedule, "0.250000,2,0,4,3,1,1,1,0,", "0.250000,2,10,4,3,1,1,1,10,", 1)
	if err := os.WriteFile(prefix+"_schedule.csv", []byte(energySchedule), 0o600); err != nil {
		t.Fatal(err)
	}
	s = Summary{}
	if err := s.readOutputs(prefix); err != nil {
		t.Fatal(err)
	}
	if want := (Energy{Joules: 65168.000027, Sleeping: 11, SwitchingOff: 70, SwitchingOn: 90, MachineSwitch: 10}); s.Energy == nil || *s.Energy != want {
		t.Errorf("energy %+v, want %+v", s.Energy, want)
	}
	b.Reset()
	s.Write(&b)
	if !strings.Contains(b.String(), "energy:        65168 J") {
		t.Errorf("printed summary lacks the energy:\n%s", b.String())
	}
	if err := (&Summary{}).readOutputs(filepath.Join(dir, "nothing") + "/"); err == nil {
		t.Error("missing outputs were accepted")
	}
}

func TestTailKeepsTheLastLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("a\nb\nc\nd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{1: "d", 2: "c\nd", 10: "a\nb\nc\nd"} {
		if got := tail(path, n); got != want {
			t.Errorf("tail %d = %q, want %q", n, got, want)
		}
	}
}

func TestNewRunChecksItsInputs(t *testing.T) {
	dir := t.TempDir()
	if _, err := newRun(Config{Workloads: []string{"w.json"}}); err == nil {
		t.Error("a run without a platform was accepted")
	}
	if _, err := newRun(Config{Platform: filepath.Join(dir, "missing.xml"), Workloads: []string{filepath.Join(dir, "w.json")}}); err == nil ||
		!strings.Contains(err.Error(), "missing.xml") {
		t.Errorf("a missing platform: %v, want an error naming it", err)
	}
	platform, workload := filepath.Join(dir, "p.xml"), filepath.Join(dir, "w.json")
	for _, f := range []string{platform, workload} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{Platform: platform, Workloads: []string{workload}, OutDir: dir, BinDir: dir, Batsim: BatsimEmbedded, SwitchOffPool: true}
	if _, err := newRun(cfg); err == nil || !strings.Contains(err.Error(), "--karpenter") {
		t.Errorf("switching pool hosts off without Karpenter: %v, want an error naming --karpenter", err)
	}
	cfg.Karpenter = true
	if _, err := newRun(cfg); err == nil || !strings.Contains(err.Error(), "real Batsim") {
		t.Errorf("switching pool hosts off with the embedded engine: %v, want an error asking for real Batsim", err)
	}
}

func TestRepeatSummarisesTheSpread(t *testing.T) {
	r := Repeat([]Summary{{Makespan: 10, MeanWaitingTime: 1}, {Makespan: 14, MeanWaitingTime: 3}, {Makespan: 12, MeanWaitingTime: 2}})
	if r.Runs != 3 || r.Makespan.Mean != 12 || r.Makespan.Min != 10 || r.Makespan.Max != 14 || r.Makespan.StdDev != 2 {
		t.Errorf("makespan spread %+v, want mean 12, sd 2, [10, 14]", r.Makespan)
	}
	if r.MeanWaitingTime.Mean != 2 || r.MeanWaitingTime.StdDev != 1 {
		t.Errorf("waiting spread %+v, want mean 2, sd 1", r.MeanWaitingTime)
	}
	if one := Repeat([]Summary{{Makespan: 5}}); one.Makespan.StdDev != 0 || one.Makespan.Mean != 5 {
		t.Errorf("one run: %+v", one.Makespan)
	}
}

// TestSettlingLineLeadsWithItsVerdict: the summary says first whether
// every step was exact (steps with nothing pending are), then how each
// ended.
func TestSettlingLineLeadsWithItsVerdict(t *testing.T) {
	for _, c := range []struct {
		stats settle.Stats
		want  string
	}{
		{settle.Stats{Policy: "kube-scheduler", NothingPending: 46, Idle: 1}, "settling:      kube-scheduler; 47 steps, every one exact: 46 with nothing pending, 1 with the scheduler known idle,"},
		{settle.Stats{Policy: "quiet", Idle: 5, Quiet: 2, MaxWait: 1}, "; 8 steps, 3 not proven exact: 0 with nothing pending, 5 with the scheduler known idle, 2 on the quiet window, 1 on settle-max"},
	} {
		s := Summary{Settle: c.stats, Steps: c.stats.Steps()}
		var b strings.Builder
		s.Write(&b)
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("summary of %+v lacks %q:\n%s", c.stats, c.want, b.String())
		}
	}
}
