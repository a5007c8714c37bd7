package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/engine"
	"github.com/batkube/batkube/pkg/simulation"
	"github.com/batkube/batkube/pkg/swf"
)

// Batsim choices of Config.Batsim besides a path.
const (
	// BatsimAuto uses a batsim found on PATH, else the embedded engine.
	BatsimAuto = "auto"
	// BatsimEmbedded uses the embedded engine.
	BatsimEmbedded = "embedded"
)

// Config describes a run. Platform and at least one workload are required.
type Config struct {
	// Platform is the SimGrid platform file, Workloads the Batsim workload
	// files (job ids are w0!id, w1!id... in this order, as Batsim names them).
	// A workload named *.swf or *.swf.gz is a trace in the Standard Workload
	// Format, converted into the output folder with SWF (package swf).
	Platform  string
	Workloads []string
	SWF       swf.Options
	// MasterHost names the platform's host Batsim makes its master (its
	// -m; "": master_host, or the host whose role is master).
	MasterHost string
	// Events are Batsim external-event files (machines becoming
	// unavailable and available again: --events), for Batsim or the engine.
	Events []string
	// OutDir receives the outputs: _jobs.csv and _schedule.csv (Batsim's
	// prefix OutDir/), the processes' logs, the kubeconfig and the summary.
	OutDir string
	// BinDir holds kubernetes-server, batkube-engine and kube-scheduler
	// (default: the directory of the running executable).
	BinDir string
	// Batsim is BatsimAuto (default), BatsimEmbedded, or the path of a
	// batsim 4.x binary.
	Batsim string
	// SchedulerCommand, if set, replaces the bundled kube-scheduler: a shell
	// command run with KUBECONFIG set, in which {kubeconfig} is replaced by
	// the kubeconfig's path. NoScheduler starts none (bring your own).
	SchedulerCommand string
	NoScheduler      bool
	// SchedulerConfig is a KubeSchedulerConfiguration for the bundled
	// kube-scheduler; its clientConnection.kubeconfig is replaced by the
	// run's. Default: client QPS raised, everything else upstream's defaults.
	SchedulerConfig string
	// KubeScheduler is the kube-scheduler binary to run (default: the
	// bundled one, BinDir/kube-scheduler), e.g. BinDir/kube-scheduler-1.18.
	// The run serves its metrics to the server, which then ends each step
	// exactly when the scheduler is done (settle mode kube-scheduler).
	KubeScheduler string
	// KubeSchedulerArgs are passed to kube-scheduler after the runner's own
	// flags, e.g. --feature-gates=GenericWorkload=true. Here as in
	// ServerArgs, {port:NAME} is a free port, as in Sidecars.
	KubeSchedulerArgs []string
	// Sidecars are shell commands started beside the scheduler (e.g. a
	// scheduler extender), with KUBECONFIG set; {kubeconfig} is the run's
	// kubeconfig and {port:NAME} a free loopback port, the same in every
	// sidecar command and in SchedulerConfig. The scheduler starts once
	// the ports a sidecar names accept connections; a sidecar that exits
	// during the run fails it. Each is reported as sidecar-N.
	Sidecars []string
	// APIPort is the API server's port on 127.0.0.1 and BatsimPort that of
	// the Batsim socket (0: a free port).
	APIPort, BatsimPort int
	// Ports hands out the free ports the run opens (API server, Batsim
	// socket, kube-scheduler's, sidecars'); runs started side by side by one
	// process share one, so that they never get the same port. Default: one
	// for this run alone.
	Ports *Ports
	// DynamicJobs runs Batsim with dynamic jobs, so that pods created
	// through the API during the run become jobs.
	DynamicJobs bool
	// ControllerManager starts kube-controller-manager (BinDir's, built
	// by make upstream) with DefaultControllers, and ControllerManagerArgs
	// after the runner's flags: Jobs, ReplicaSets and Deployments create
	// their pods, which become Batsim jobs (it implies DynamicJobs).
	ControllerManager     bool
	ControllerManagerArgs []string
	// Gangs maps each job asking for several hosts onto a pod group
	// (scheduling.k8s.io/v1beta1 PodGroup, gang policy of minCount the
	// job's hosts) that its pods reference, so that they are bound all at
	// once or not at all. The bundled kube-scheduler (1.37 or later) gets
	// the GenericWorkload feature gate; another scheduler must understand
	// pod groups itself. With a kube-scheduler 1.37 or later started by
	// the run, gangs are on unless NoGangs: multi-host jobs are placed all
	// at once, as in Batsim.
	Gangs, NoGangs bool
	// Objects are manifests (YAML or JSON) of the Kubernetes objects the
	// cluster starts with, such as the PriorityClasses pods name.
	Objects []string
	// ServerArgs and BatsimArgs are passed on to kubernetes-server and to
	// batsim (or batkube-engine); in ServerArgs, {port:NAME} is a free port
	// (e.g. --batsky-endpoint=tcp://127.0.0.1:{port:batsky}, for runs side
	// by side).
	ServerArgs, BatsimArgs []string
	// Progress, if set, is called every ProgressInterval (default 1s).
	Progress         func(Progress)
	ProgressInterval time.Duration
	// Ready, if set, is called once the API is served and the scheduler
	// started, before Batsim starts.
	Ready func(Cluster)
	// Logf, if set, receives what happens during the run that a person
	// should know at once (a scheduler that exits early).
	Logf func(format string, args ...any)
}

// Cluster is what a client of a run needs.
type Cluster struct {
	URL          string // the API server, http://127.0.0.1:port
	Kubeconfig   string // a kubeconfig for it
	SchedulerPID int    // 0 without a scheduler
}

// Progress is where a run stands.
type Progress struct {
	broker.Progress
	Wall time.Duration // since the run started
}

// Names of the processes in Summary.Processes.
const (
	ServerProcess    = "kubernetes-server"
	SchedulerProcess = "scheduler"
	BatsimProcess    = "batsim" // real Batsim
	EngineProcess    = "batkube-engine"
)

// Run runs a simulation to its end and summarises it. When something fails
// (a process exits early, ctx is cancelled) the others are stopped, the
// outputs written so far stay in OutDir, and the error says which process
// failed with the end of its log.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	start := time.Now()
	r, err := newRun(cfg)
	if err != nil {
		return Summary{}, err
	}
	runErr := r.run(ctx)
	r.stopAll()
	r.pool.Release(r.held...)
	sum := Summary{OutDir: r.cfg.OutDir, Engine: r.engineName(), Wall: time.Since(start),
		Platform: absPath(r.cfg.Platform), MasterHost: r.cfg.MasterHost, Workloads: make([]string, len(r.cfg.Workloads))}
	for i, w := range r.cfg.Workloads {
		sum.Workloads[i] = absPath(w)
	}
	for _, p := range r.procs() {
		sum.Processes = append(sum.Processes, p.usage())
	}
	// A run that failed has its own error; its outputs may be partial.
	if err := sum.readOutputs(r.prefix()); err != nil && runErr == nil {
		runErr = err
	}
	if err := sum.readStats(r.statsFile()); err != nil && runErr == nil {
		runErr = err
	}
	if r.kube != nil {
		if err := sum.readKubeSchedulerMetrics(filepath.Join(r.cfg.OutDir, KubeSchedulerMetricsFile)); err != nil && runErr == nil {
			runErr = err
		}
	}
	if sum.Wall > 0 {
		sum.SpeedUp = sum.Makespan / sum.Wall.Seconds()
	}
	sum.Status = StatusSucceeded
	if runErr != nil {
		sum.Status, sum.Error = StatusFailed, runErr.Error()
	}
	// Written last, whole or not at all: a folder with a summary.json that
	// says succeeded holds a finished run.
	if err := WriteJSON(filepath.Join(r.cfg.OutDir, "summary.json"), sum); err != nil && runErr == nil {
		runErr = fmt.Errorf("launch: writing the summary: %w", err)
	}
	return sum, runErr
}

// absPath is path made absolute, or path itself if it cannot be.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// run is one run's state.
type run struct {
	cfg        Config
	batsimPath string // "" for the embedded engine
	kubeconfig string
	apiURL     string
	endpoint   string

	server, scheduler, batsim *process
	sidecars                  []*process
	// ports are the ports chosen for the {port:NAME} placeholders.
	ports map[string]int
	// pool hands out the run's free ports; held are those it handed out,
	// released once the run's processes are gone.
	pool *Ports
	held []int
	// kube is the plan for a kube-scheduler the run starts (nil for
	// another scheduler, or none).
	kube *kubeScheduler
	// gangs: multi-host jobs are pod groups (Config.Gangs, or by default
	// with a kube-scheduler that schedules them).
	gangs bool
}

// kubeScheduler is how a run starts a kube-scheduler.
type kubeScheduler struct {
	bin, config string
	minor       int
	version     string
	names       []string // its profiles' schedulerNames
	metricsPort int
}

// statsFile receives the server's final progress and settle statistics.
func (r *run) statsFile() string { return filepath.Join(r.cfg.OutDir, "server-stats.json") }

func newRun(cfg Config) (*run, error) {
	if cfg.Platform == "" || len(cfg.Workloads) == 0 {
		return nil, errors.New("launch: a platform and at least one workload are required")
	}
	for _, f := range slices.Concat([]string{cfg.Platform}, cfg.Workloads, cfg.Events) {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("launch: %w", err)
		}
	}
	if cfg.OutDir == "" {
		cfg.OutDir = "out"
	}
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = time.Second
	}
	if cfg.BinDir == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("launch: finding the binaries: %w", err)
		}
		cfg.BinDir = filepath.Dir(exe)
	}
	r := &run{cfg: cfg, ports: map[string]int{}, pool: cfg.Ports}
	if r.pool == nil {
		r.pool = NewPorts()
	}
	switch cfg.Batsim {
	case "", BatsimAuto:
		if path, err := exec.LookPath("batsim"); err == nil {
			r.batsimPath = path
		}
	case BatsimEmbedded:
	default:
		path, err := exec.LookPath(cfg.Batsim)
		if err != nil {
			return nil, fmt.Errorf("launch: batsim: %w", err)
		}
		r.batsimPath = path
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	if err := r.convertTraces(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(cfg.OutDir)
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	r.cfg.OutDir = abs
	// Outputs of an earlier run in the same folder must not pass for this
	// one's.
	for _, f := range []string{"_jobs.csv", "_schedule.csv", "summary.json", "server-stats.json", ServerMetricsFile, KubeSchedulerMetricsFile} {
		if err := os.Remove(filepath.Join(abs, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("launch: %w", err)
		}
	}
	return r, nil
}

func (r *run) engineName() string {
	if r.batsimPath == "" {
		return BatsimEmbedded
	}
	return r.batsimPath
}

// prefix is Batsim's export prefix: OutDir/_jobs.csv and so on.
func (r *run) prefix() string { return r.cfg.OutDir + string(filepath.Separator) }

func (r *run) procs() []*process {
	var out []*process
	for _, p := range []*process{r.server, r.scheduler, r.batsim} {
		if p != nil {
			out = append(out, p)
		}
	}
	return append(out, r.sidecars...)
}

func (r *run) bin(name string) (string, error) {
	path := filepath.Join(r.cfg.BinDir, name)
	if _, err := os.Stat(path); err != nil {
		target := "make build"
		if name == "kube-scheduler" || name == ControllerManagerProcess {
			target = "make upstream" // built from the Kubernetes modules
		}
		return "", fmt.Errorf("launch: %s not found in %s: build it (%s) or pass the directory of the binaries", name, r.cfg.BinDir, target)
	}
	return path, nil
}

func (r *run) run(ctx context.Context) error {
	r.tellPlatformNotes()
	apiPort, err := r.portOr(r.cfg.APIPort)
	if err != nil {
		return err
	}
	batsimPort, err := r.portOr(r.cfg.BatsimPort)
	if err != nil {
		return err
	}
	r.apiURL = "http://127.0.0.1:" + strconv.Itoa(apiPort)
	r.endpoint = "tcp://127.0.0.1:" + strconv.Itoa(batsimPort)
	r.kubeconfig = filepath.Join(r.cfg.OutDir, "kubeconfig.yaml")
	if err := os.WriteFile(r.kubeconfig, []byte(Kubeconfig(r.apiURL)), 0o644); err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	// {port:NAME} in the server's and kube-scheduler's arguments.
	if r.cfg.ServerArgs, err = r.expandEach(r.cfg.ServerArgs); err != nil {
		return fmt.Errorf("launch: the server's arguments: %w", err)
	}
	if r.cfg.KubeSchedulerArgs, err = r.expandEach(r.cfg.KubeSchedulerArgs); err != nil {
		return fmt.Errorf("launch: kube-scheduler's arguments: %w", err)
	}
	if r.cfg.ControllerManagerArgs, err = r.expandEach(r.cfg.ControllerManagerArgs); err != nil {
		return fmt.Errorf("launch: kube-controller-manager's arguments: %w", err)
	}
	if r.cfg.ControllerManager {
		r.cfg.DynamicJobs = true // the controllers' pods become jobs
	}
	if err := r.planKubeScheduler(); err != nil {
		return err
	}
	if err := r.startServer(ctx); err != nil {
		return err
	}
	if err := r.startSidecars(ctx); err != nil {
		return err
	}
	if err := r.startControllerManager(); err != nil {
		return err
	}
	if err := r.startScheduler(); err != nil {
		return err
	}
	if r.cfg.Ready != nil {
		pid := 0
		if r.scheduler != nil {
			pid = r.scheduler.cmd.Process.Pid
		}
		r.cfg.Ready(Cluster{URL: r.apiURL, Kubeconfig: r.kubeconfig, SchedulerPID: pid})
	}
	if err := r.startBatsim(); err != nil {
		return err
	}
	return r.wait(ctx)
}

// startServer starts kubernetes-server --simulate and waits until it serves.
func (r *run) startServer(ctx context.Context) error {
	bin, err := r.bin("kubernetes-server")
	if err != nil {
		return err
	}
	args := []string{bin, "--simulate", "--host", "127.0.0.1",
		"--port", strings.TrimPrefix(r.apiURL, "http://127.0.0.1:"), "--batsim-endpoint", r.endpoint,
		"--stats-file", r.statsFile(), "--pods-file", filepath.Join(r.cfg.OutDir, "_pods.csv"),
		"--metrics-file", filepath.Join(r.cfg.OutDir, ServerMetricsFile)}
	if k := r.kube; k != nil {
		args = append(args, "--kube-scheduler-metrics", fmt.Sprintf("https://127.0.0.1:%d/metrics", k.metricsPort),
			"--kube-scheduler-version", k.version, "--kube-scheduler-metrics-file", filepath.Join(r.cfg.OutDir, KubeSchedulerMetricsFile),
			"--kube-scheduler-pid-file", r.schedulerPIDFile())
		for _, name := range k.names {
			args = append(args, "--kube-scheduler-name", name)
		}
	}
	for _, f := range r.cfg.Objects {
		abs, err := filepath.Abs(f)
		if err != nil {
			return fmt.Errorf("launch: %w", err)
		}
		args = append(args, "--objects", abs)
	}
	if r.gangs {
		args = append(args, "--gangs=podgroup")
	}
	if r.cfg.ControllerManager {
		args = append(args, "--controller-manager-pid-file", r.controllerManagerPIDFile(),
			"--controllers-file", filepath.Join(r.cfg.OutDir, "_controllers.csv"))
	}
	args = append(args, r.cfg.ServerArgs...)
	if r.server, err = startProcess(ServerProcess, filepath.Join(r.cfg.OutDir, "server.log"), nil, args...); err != nil {
		return err
	}
	return r.waitServing(ctx)
}

// waitServing polls /readyz until the server answers, it exits, or a
// minute has passed (building the router takes a second or two).
func (r *run) waitServing(ctx context.Context) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(time.Minute)
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for {
		resp, err := client.Get(r.apiURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("launch: the API server did not answer on %s within a minute: %w", r.apiURL, err)
		}
		select {
		case <-r.server.done:
			return fmt.Errorf("launch: %w", r.server.failure())
		case <-ctx.Done():
			return ctx.Err()
		case <-poll.C:
		}
	}
}

func (r *run) startScheduler() error {
	if r.cfg.NoScheduler {
		return nil
	}
	logPath := filepath.Join(r.cfg.OutDir, "scheduler.log")
	env := []string{"KUBECONFIG=" + r.kubeconfig}
	var err error
	if r.cfg.SchedulerCommand != "" {
		command, _, err := r.expand(r.cfg.SchedulerCommand)
		if err != nil {
			return fmt.Errorf("launch: the scheduler's command: %w", err)
		}
		r.scheduler, err = startProcess(SchedulerProcess, logPath, env, "/bin/sh", "-c", "exec "+command)
		return err
	}
	k := r.kube
	args := []string{k.bin, "--config", k.config,
		// Its metrics, for the server's settle policy: served on loopback,
		// the scrapes authenticated and authorised by asking the server.
		"--secure-port", strconv.Itoa(k.metricsPort), "--bind-address", "127.0.0.1",
		"--authentication-kubeconfig", r.kubeconfig, "--authorization-kubeconfig", r.kubeconfig}
	if r.gangs {
		args = append(args, "--feature-gates=GenericWorkload=true")
	}
	args = append(args, r.cfg.KubeSchedulerArgs...)
	if r.scheduler, err = startProcess(SchedulerProcess, logPath, env, args...); err != nil {
		return err
	}
	// Its PID, for the server, which watches the process for quiescence.
	return writeFileAtomic(r.schedulerPIDFile(), []byte(strconv.Itoa(r.scheduler.cmd.Process.Pid)+"\n"))
}

// schedulerPIDFile is where the bundled kube-scheduler's PID is written
// for the server (kubernetes-server --kube-scheduler-pid-file).
func (r *run) schedulerPIDFile() string { return filepath.Join(r.cfg.OutDir, "kube-scheduler.pid") }

// planKubeScheduler prepares the kube-scheduler the run starts, if any:
// its configuration, version and metrics port.
func (r *run) planKubeScheduler() error {
	if r.cfg.NoScheduler || r.cfg.SchedulerCommand != "" {
		return nil
	}
	bin := r.cfg.KubeScheduler
	if bin == "" {
		var err error
		if bin, err = r.bin("kube-scheduler"); err != nil {
			return err
		}
	}
	minor, version, err := kubeSchedulerVersion(bin)
	if err != nil {
		return err
	}
	if r.cfg.Gangs && minor < gangsMinMinor {
		return fmt.Errorf("launch: gangs (pod groups) need kube-scheduler 1.%d or later; %s is %s", gangsMinMinor, bin, version)
	}
	r.gangs = !r.cfg.NoGangs && (r.cfg.Gangs || minor >= gangsMinMinor)
	config := filepath.Join(r.cfg.OutDir, "kube-scheduler.yaml")
	names, err := writeSchedulerConfig(config, r.cfg.SchedulerConfig, r.kubeconfig, minor, func(s string) (string, error) {
		out, _, err := r.expand(s)
		return out, err
	})
	if err != nil {
		return err
	}
	port, err := r.port()
	if err != nil {
		return err
	}
	r.kube = &kubeScheduler{bin: bin, config: config, minor: minor, version: version, names: names, metricsPort: port}
	return nil
}

func (r *run) startBatsim() error {
	args := []string{"-p", r.cfg.Platform}
	for _, w := range r.cfg.Workloads {
		args = append(args, "-w", w)
	}
	args = append(args, "-e", r.prefix(), "-s", r.endpoint, "--enable-compute-sharing")
	if r.cfg.MasterHost != "" {
		args = append(args, "-m", r.cfg.MasterHost)
	}
	for _, e := range r.cfg.Events {
		args = append(args, "--events", absPath(e))
	}
	if r.cfg.DynamicJobs {
		args = append(args, "--enable-dynamic-jobs", "--acknowledge-dynamic-jobs")
	}
	args = append(args, r.cfg.BatsimArgs...)
	bin, name := r.batsimPath, BatsimProcess
	if bin == "" {
		var err error
		if bin, err = r.bin("batkube-engine"); err != nil {
			return err
		}
		name = EngineProcess
	}
	var err error
	r.batsim, err = startProcess(name, filepath.Join(r.cfg.OutDir, name+".log"), nil, append([]string{bin}, args...)...)
	return err
}

// wait follows the run to its end: Batsim and the server exit once the
// simulation is over. The scheduler exiting first is reported at once; the
// server then ends the run when pods wait for it.
func (r *run) wait(ctx context.Context) error {
	start := time.Now()
	tick := time.NewTicker(r.cfg.ProgressInterval)
	defer tick.Stop()
	progress := &http.Client{Timeout: time.Second}
	var schedulerDone <-chan struct{}
	if r.scheduler != nil {
		schedulerDone = r.scheduler.done
	}
	serverDone, batsimDone := r.server.done, r.batsim.done
	var schedulerErr error
	// A scheduler that exits as the server ends the simulation (it sees
	// the API server gone) is no news: its exit is told only if the server
	// still runs a moment later.
	var schedulerNews <-chan time.Time
	sidecarDone := r.sidecarDone()
	for serverDone != nil || batsimDone != nil {
		select {
		case <-ctx.Done():
			return fmt.Errorf("launch: interrupted: %w", ctx.Err())
		case p := <-sidecarDone:
			return fmt.Errorf("launch: a sidecar exited during the run: %w", p.failure())
		case <-schedulerDone:
			schedulerDone = nil
			schedulerErr = r.scheduler.failure()
			schedulerNews = time.After(schedulerExitGrace)
		case <-schedulerNews:
			schedulerNews = nil
			if r.cfg.Logf != nil && serverDone != nil {
				r.cfg.Logf("%v", schedulerErr)
			}
		case <-serverDone:
			serverDone, schedulerNews = nil, nil
			if r.server.err != nil {
				// Batsim gets time to write its outputs; it ends once the
				// server's socket is gone.
				r.batsim.wait(30 * time.Second)
				return r.failed(schedulerErr)
			}
		case <-batsimDone:
			batsimDone = nil
			if r.batsim.err != nil {
				// Batsim fails when the server it talks to does, and the
				// server fails soon after a Batsim that dies: give it a
				// moment, so that the report has both sides.
				r.server.wait(3 * time.Second)
				return r.failed(schedulerErr)
			}
		case <-tick.C:
			if r.cfg.Progress != nil && serverDone != nil {
				if p, err := readProgress(progress, r.apiURL); err == nil {
					r.cfg.Progress(Progress{Progress: p, Wall: time.Since(start)})
				}
			}
		}
	}
	return nil
}

// tellPlatformNotes tells what the platform's network holds that the
// engine does not model, or that real Batsim aborts on (hosts with no route
// to the master host...), before the run starts. A platform the engine
// cannot read is left to the simulator to refuse.
func (r *run) tellPlatformNotes() {
	if r.cfg.Logf == nil {
		return
	}
	p, err := engine.ReadPlatformFileWith(r.cfg.Platform, engine.PlatformOptions{MasterHost: r.cfg.MasterHost})
	if err != nil {
		return
	}
	for _, note := range p.NetworkNotes {
		r.cfg.Logf("platform %s: %s", filepath.Base(r.cfg.Platform), note)
	}
}

// schedulerExitGrace is how long after the scheduler's exit the server may
// end the run before that exit is told as news.
const schedulerExitGrace = 2 * time.Second

// failed describes a failed run: first the process that failed first
// (usually the cause: Batsim fails when the server it talks to does, and
// the other way round) with the last line of its log, then the failure of
// each of the server and Batsim with the end of its log, and the
// scheduler's if it had ended before.
func (r *run) failed(schedulerErr error) error {
	var failed []*process
	for _, p := range []*process{r.server, r.batsim} {
		if p != nil && p.exited() && p.err != nil {
			failed = append(failed, p)
		}
	}
	slices.SortStableFunc(failed, func(a, b *process) int { return a.ended.Compare(b.ended) })
	var parts []string
	if len(failed) > 0 {
		parts = append(parts, fmt.Sprintf("%s failed first: %s", failed[0].name, failed[0].lastLine()))
	}
	for _, p := range failed {
		parts = append(parts, p.failure().Error())
	}
	if schedulerErr != nil {
		parts = append(parts, "the scheduler had ended before: "+schedulerErr.Error())
	}
	return fmt.Errorf("launch: %s", strings.Join(parts, "\n"))
}

// stopAll stops whatever still runs: Batsim first (it writes its outputs
// on SIGTERM), then the server, then the scheduler.
func (r *run) stopAll() {
	for _, p := range append([]*process{r.batsim, r.server, r.scheduler}, r.sidecars...) {
		if p != nil {
			p.stop(10 * time.Second)
		}
	}
}

func readProgress(c *http.Client, apiURL string) (broker.Progress, error) {
	var p broker.Progress
	resp, err := c.Get(apiURL + simulation.ProgressPath)
	if err != nil {
		return p, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return p, fmt.Errorf("progress: %s", resp.Status)
	}
	return p, json.NewDecoder(resp.Body).Decode(&p)
}

// port takes a free loopback port for the run from its pool.
func (r *run) port() (int, error) {
	p, err := r.pool.Take()
	if err != nil {
		return 0, err
	}
	r.held = append(r.held, p)
	return p, nil
}

// portOr returns port, or a free one if it is 0.
func (r *run) portOr(port int) (int, error) {
	if port != 0 {
		return port, nil
	}
	return r.port()
}
