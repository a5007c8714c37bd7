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
)

// Batsim choices of Config.Batsim besides a path.
const (
	// BatsimAuto uses a batsim found on PATH, else the embedded engine.
	BatsimAuto = "auto"
	// BatsimEmbedded uses the embedded engine.
	BatsimEmbedded = "embedded"
)

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
	if err := sum.readQueues(r.cfg.OutDir); err != nil && runErr == nil {
		runErr = err
	}
	if err := sum.readNodes(r.cfg.OutDir); err != nil && runErr == nil {
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
	// kueue are the ports of Kueue's manager (Config.Kueue).
	kueue struct{ webhookPort, healthPort int }
	// karpenter are the ports of Karpenter (Config.Karpenter).
	karpenter struct{ metricsPort, healthPort int }
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
	if cfg.SwitchOffPool {
		switch {
		case !cfg.Karpenter:
			return nil, fmt.Errorf("launch: switching pool hosts off needs Karpenter (--karpenter): without it no node is launched onto them")
		case r.batsimPath == "":
			return nil, fmt.Errorf("launch: switching pool hosts off needs real Batsim (--batsim PATH, run with --energy): the embedded engine has no power states")
		}
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	if err := r.convertTraces(); err != nil {
		return nil, err
	}
	if err := r.splitKubeWorkloads(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(cfg.OutDir)
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	r.cfg.OutDir = abs
	// Outputs of an earlier run in the same folder must not pass for this
	// one's.
	for _, f := range []string{"_jobs.csv", "_schedule.csv", "_workloads.csv", "_nodes.csv", "summary.json", "server-stats.json", ServerMetricsFile, KubeSchedulerMetricsFile} {
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
		switch name {
		case "kube-scheduler", ControllerManagerProcess, KueueProcess:
			target = "make upstream" // built from the Kubernetes modules
		case KarpenterProcess:
			target = "make karpenter"
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
	if r.cfg.KueueArgs, err = r.expandEach(r.cfg.KueueArgs); err != nil {
		return fmt.Errorf("launch: Kueue's arguments: %w", err)
	}
	if err := r.prepareKueue(); err != nil {
		return err
	}
	if err := r.prepareKarpenter(); err != nil {
		return err
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
	if err := r.startKueue(ctx); err != nil {
		return err
	}
	if err := r.startKarpenter(ctx); err != nil {
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
	if r.cfg.EndAt > 0 {
		args = append(args, "--end-at", r.cfg.EndAt.String())
	}
	if r.cfg.ControllerManager {
		args = append(args, "--controller-manager-pid-file", r.controllerManagerPIDFile(),
			"--controllers-file", filepath.Join(r.cfg.OutDir, "_controllers.csv"))
		if !r.cfg.ControllerManagerWallClock {
			args = append(args, "--clock-file", r.clockFile())
		}
	}
	if r.cfg.Kueue {
		args = append(args, "--controller-pid-file", KueueProcess+"="+r.kueuePIDFile(), "--await-kueue",
			"--workloads-file", filepath.Join(r.cfg.OutDir, "_workloads.csv"),
			"--cluster-queues-file", filepath.Join(r.cfg.OutDir, "_clusterqueues.csv"))
	}
	if r.cfg.Karpenter {
		args = append(args, "--controller-pid-file", KarpenterProcess+"="+r.karpenterPIDFile(),
			"--provisioning-delay", r.cfg.ProvisioningDelay.String(),
			"--nodes-file", filepath.Join(r.cfg.OutDir, "_nodes.csv"))
		if r.cfg.SwitchOffPool {
			args = append(args, "--switch-off-pool")
		}
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
	return waitReady(ctx, r.apiURL+"/readyz", r.server, "the API server", time.Minute)
}

// waitReady polls url every 20 ms until it answers 200, p exits, or limit
// has passed.
func waitReady(ctx context.Context, url string, p *process, what string, limit time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s answers %s", url, resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("launch: %s was not ready on %s within %v: %w", what, url, limit, err)
		}
		select {
		case <-p.done:
			return fmt.Errorf("launch: %w", p.failure())
		case <-ctx.Done():
			return ctx.Err()
		case <-poll.C:
		}
	}
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
	if r.cfg.SwitchOffPool {
		args = append(args, "--energy")
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
			// A scheduler that exits because the server has ended the
			// simulation (it finds the API gone) is no news; one that
			// exits while the API still answers is.
			if r.cfg.Logf != nil && serverDone != nil && r.serving(progress) {
				r.cfg.Logf("%v", schedulerErr)
			}
		case <-serverDone:
			serverDone = nil
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

// serving reports whether the API server answers /readyz.
func (r *run) serving(c *http.Client) bool {
	resp, err := c.Get(r.apiURL + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

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
