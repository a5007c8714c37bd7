// Package simulation assembles a Batsim-driven Batkube: the API server, the
// broker that answers Batsim and the simulated clock they share, served
// until the simulation ends.
package simulation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/metrics"
	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/settle/controllers"
	kubeclock "github.com/batkube/batkube/pkg/simtime/kubeclock"
	"github.com/batkube/batkube/pkg/simtime/simclock"
	"github.com/batkube/batkube/pkg/simtime/timeservice"
	"github.com/batkube/batkube/pkg/simtime/timeservice/batsky"
)

// Config describes a simulation server.
type Config struct {
	// Server configures the API server; New fills in its Clock, Terminator,
	// Admitter and adds its own Extensions.
	Server server.Options
	// Broker configures the broker; New fills in its Clock.
	Broker broker.Options
	// Epoch is the instant of simulated time 0 (default simclock.DefaultEpoch).
	Epoch time.Time
	// BatsimEndpoint is the ZeroMQ endpoint Batsim connects to (default
	// batsim.DefaultEndpoint).
	BatsimEndpoint string
	// BatskyEndpoint, if set, is the ZeroMQ endpoint of a scheduler built
	// with batsky-go (its time package asks the broker for the simulated
	// time; see pkg/simtime/timeservice/batsky). Empty: none.
	BatskyEndpoint string
	// ClockFile, if set, is where the run's clock page is written: the
	// processes started with BATKUBE_CLOCK naming it (and
	// BATKUBE_CLOCK_SERVER this server's URL) read simulated time from it
	// and wait on this server's clock (package kubeclock; the
	// kube-controller-manager that make upstream builds). It is removed
	// when the run ends.
	ClockFile string
	// Settle configures how a step decides that the scheduler is done.
	Settle SettleConfig
	// StatsFile, if set, receives the final progress of the run as JSON
	// (broker.Progress) when the simulation ends, for the runner's summary.
	StatsFile string
	// ControllersFile, if set, receives the controllers' log
	// (_controllers.csv, see broker.Options.ControllersCSV).
	ControllersFile string
	// WorkloadsFile, if set, receives the log of Kueue's Workloads
	// (CSV; broker.Options.WorkloadsCSV).
	WorkloadsFile string
	// ClusterQueuesFile, if set, receives the log of Kueue's
	// ClusterQueues' quota use (the runner's _clusterqueues.csv).
	ClusterQueuesFile string
	// NodesFile, if set, receives the log of the nodes an autoscaler
	// launched (_nodes.csv; broker.Options.NodesCSV).
	NodesFile string
	// PodsFile, if set, receives the pods' log (_pods.csv, see
	// broker.Options.PodsCSV), written as jobs end.
	PodsFile string
	// MetricsFile, if set, receives the server's metrics (what /metrics
	// serves, in the Prometheus text format) once the simulation has ended
	// and the API is no longer served, so that every request is in it.
	MetricsFile string
	// KubeSchedulerMetricsFile, if set, receives the whole /metrics of the
	// kube-scheduler at Settle.KubeSchedulerMetrics, scraped when the
	// simulation ends, while the API is still served (the scheduler asks
	// it to review the scrape's token).
	KubeSchedulerMetricsFile string
	// ProgressInterval is how often progress is logged (default 2s; < 0: never).
	ProgressInterval time.Duration
	Logger           *slog.Logger
}

// Settle modes (SettleConfig.Mode).
const (
	// SettleAuto uses the kube-scheduler policy when KubeSchedulerMetrics
	// is set, the idle signals once a scheduler sends one, and silence
	// (the quiet window) otherwise.
	SettleAuto = "auto"
	// SettleKubeScheduler only trusts the kube-scheduler's metrics.
	SettleKubeScheduler = "kube-scheduler"
	// SettleSignal only trusts idle signals.
	SettleSignal = "signal"
	// SettleQuiet only looks at silence.
	SettleQuiet = "quiet"
)

// SettleConfig configures the settle policy (package settle).
type SettleConfig struct {
	// Mode is one of the Settle* modes (default SettleAuto).
	Mode string
	// Quiet is the silence window of the quiet policy (default 50ms).
	Quiet time.Duration
	// KubeSchedulerMetrics is the metrics URL of the kube-scheduler under
	// test (e.g. https://127.0.0.1:10259/metrics); it must be run with
	// --authentication-kubeconfig and --authorization-kubeconfig pointing
	// at this server, which then authorises the policy's scrapes.
	KubeSchedulerMetrics string
	// SchedulerNames are the kube-scheduler's profiles' schedulerNames
	// (default: default-scheduler).
	SchedulerNames []string
	// KubeSchedulerVersion is its version ("v1.37.1"); when empty it is
	// read from the User-Agent of its requests.
	KubeSchedulerVersion string
	// KubeSchedulerPIDFile, if set, holds its PID (written by whoever
	// starts it), spared a scan of /proc for the process behind the metrics
	// address.
	KubeSchedulerPIDFile string
	// Controllers are controller processes on this machine
	// (kube-controller-manager, Kueue's manager), each with a file holding
	// its PID: every step then waits until they are all idle (package
	// settle/controllers).
	Controllers []controllers.Process
	// ReleaseAllGroups has every waiting pod group renewed (deleted,
	// created held, released) once room was freed since its last release,
	// not only those whose pods may fit by their requests
	// (kubescheduler.Options.ReleaseAll).
	ReleaseAllGroups bool
}

// Simulation is an API server driven by Batsim.
type Simulation struct {
	cfg    Config
	log    *slog.Logger
	clock  *simclock.Clock
	broker *broker.Broker
	server *server.Server
	batsky *batsky.Server // nil without a batsky-go scheduler
	pods   outputFiles    // _pods.csv, _controllers.csv
	// signals are the idle signals and clockHandler the simulated clock's
	// waits; ended when the broker stops, so that no long poll outlives
	// the simulation.
	signals      *settle.Signals
	clockHandler *timeservice.Handler
	// token authenticates the server's scrapes of kube-scheduler.
	token string
	// page is the clock page (nil without Config.ClockFile).
	page *kubeclock.Page
}

// New builds a simulation server.
func New(cfg Config) (sim *Simulation, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Epoch.IsZero() {
		cfg.Epoch = simclock.DefaultEpoch
	}
	if cfg.BatsimEndpoint == "" {
		cfg.BatsimEndpoint = batsim.DefaultEndpoint
	}
	if cfg.ProgressInterval == 0 {
		cfg.ProgressInterval = 2 * time.Second
	}
	if cfg.KubeSchedulerMetricsFile != "" && cfg.Settle.KubeSchedulerMetrics == "" {
		return nil, errors.New("simulation: saving kube-scheduler's metrics needs its metrics URL (Settle.KubeSchedulerMetrics)")
	}
	if cfg.MetricsFile != "" && cfg.Server.NoMetrics {
		return nil, errors.New("simulation: a metrics file needs the server's metrics")
	}
	clk := simclock.New(cfg.Epoch)
	bopts := cfg.Broker
	bopts.Clock = clk
	var page *kubeclock.Page
	if cfg.ClockFile != "" {
		var err error
		if page, err = kubeclock.CreatePage(cfg.ClockFile, cfg.Epoch); err != nil {
			return nil, fmt.Errorf("simulation: %w", err)
		}
		defer func() {
			if sim == nil { // New failed further down
				page.Close()
				os.Remove(cfg.ClockFile)
			}
		}()
		clk.Mirror(page.Set)
		bopts.ControllersOnSimulatedTime = func() bool { return page.Attached() > 0 }
	}
	signals := settle.NewSignals()
	signals.Logger = cfg.Logger
	token, err := randomToken()
	if err != nil {
		return nil, fmt.Errorf("simulation: %w", err)
	}
	view := &apiView{}
	if bopts.Settle, err = cfg.Settle.policy(signals, token, view, cfg.Logger); err != nil {
		return nil, fmt.Errorf("simulation: %w", err)
	}
	if bopts.Logger == nil {
		bopts.Logger = cfg.Logger
	}
	if bopts.Progress == nil && cfg.ProgressInterval > 0 {
		bopts.Progress = progressLogger(cfg.Logger, cfg.ProgressInterval)
	}
	var bm *brokerMetrics
	if !cfg.Server.NoMetrics {
		bm = newBrokerMetrics()
		bopts.Exchanged = bm.exchanged
	}
	var pods outputFiles
	for _, log := range []struct {
		path, what string
		into       *io.Writer
	}{
		{cfg.PodsFile, "the pods' log", &bopts.PodsCSV},
		{cfg.ControllersFile, "the controllers' log", &bopts.ControllersCSV},
		{cfg.WorkloadsFile, "the workloads' log", &bopts.WorkloadsCSV},
		{cfg.ClusterQueuesFile, "the ClusterQueues' log", &bopts.ClusterQueuesCSV},
		{cfg.NodesFile, "the nodes' log", &bopts.NodesCSV},
	} {
		if log.path == "" {
			continue
		}
		f, err := createOutputFile(log.path, log.what)
		if err != nil {
			pods.Close()
			return nil, fmt.Errorf("simulation: %w", err)
		}
		pods, *log.into = append(pods, f), f
	}
	b, err := broker.New(bopts)
	if err != nil {
		pods.Close()
		return nil, fmt.Errorf("simulation: %w", err)
	}
	sopts := cfg.Server
	sopts.Clock, sopts.Terminator, sopts.Admitter = clk, b, b
	if bm != nil {
		bm.progress = b.Progress
		if sopts.Metrics == nil {
			sopts.Metrics = metrics.NewRegistry()
		}
		if err := sopts.Metrics.Register(bm.collectors()...); err != nil {
			pods.Close()
			return nil, fmt.Errorf("simulation: %w", err)
		}
	}
	clockHandler := timeservice.NewHandler(clk, view.parkRequest)
	sopts.Extensions = append(sopts.Extensions[:len(sopts.Extensions):len(sopts.Extensions)],
		progressHandler{b}, clockHandler, signals)
	// The settle policy's scrapes of kube-scheduler's metrics come with
	// this token; the scheduler asks this server to review it.
	tokens := apiserver.StaticTokens{token: settleUser}
	if sopts.BearerToken != "" {
		tokens[sopts.BearerToken] = adminUser
	}
	sopts.Authenticator = tokens
	if sopts.Logger == nil {
		sopts.Logger = cfg.Logger
	}
	srv, err := server.New(sopts)
	if err != nil {
		pods.Close()
		return nil, fmt.Errorf("simulation: %w", err)
	}
	view.api = srv.API
	if len(cfg.Settle.Controllers) > 0 {
		b.SetControllers(controllers.New(controllers.Options{Processes: cfg.Settle.Controllers,
			Unread: srv.Unread, Unsent: srv.Unsent, PeersUnread: srv.PeersUnread, Undelivered: srv.API.UndeliveredWatch, Requests: srv.API.RequestCounts,
			BytesRead: srv.BytesRead, StoreRV: srv.Store.CurrentRV, Logger: cfg.Logger}))
	}
	sim = &Simulation{cfg: cfg, log: cfg.Logger, clock: clk, broker: b, server: srv, pods: pods, signals: signals, token: token, page: page, clockHandler: clockHandler}
	if cfg.BatskyEndpoint != "" {
		sim.batsky, err = batsky.New(batsky.Options{Endpoint: cfg.BatskyEndpoint, Clock: clk, Logger: cfg.Logger})
		if err != nil {
			pods.Close()
			return nil, fmt.Errorf("simulation: %w", err)
		}
	}
	return sim, nil
}

// Server returns the API server.
func (s *Simulation) Server() *server.Server { return s.server }

// Progress returns where the simulation stands.
func (s *Simulation) Progress() broker.Progress { return s.broker.Progress() }

// Run serves the API on l and answers Batsim on the configured endpoint
// until the simulation ends (nil), ctx is cancelled, or the broker fails.
// The API stops being served when Run returns.
func (s *Simulation) Run(ctx context.Context, l net.Listener) error {
	conn, err := batsim.Listen(s.cfg.BatsimEndpoint)
	if err != nil {
		return fmt.Errorf("simulation: listening for Batsim on %s: %w", s.cfg.BatsimEndpoint, err)
	}
	defer conn.Close()
	s.log.Info("waiting for Batsim", "endpoint", conn.Endpoint())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.server.Serve(ctx, l) }()
	timeServed := make(chan error, 1)
	if s.batsky != nil {
		go func() { timeServed <- s.batsky.Run(ctx) }()
	} else {
		timeServed <- nil
	}
	runErr := s.broker.Run(ctx, conn, s.server.API, s.server.Store)
	if runErr == nil && s.cfg.KubeSchedulerMetricsFile != "" {
		s.saveKubeSchedulerMetrics(ctx)
	}
	s.signals.End()
	s.clockHandler.End()
	if s.page != nil {
		s.clock.Mirror(nil)
		if err := errors.Join(s.page.Close(), os.Remove(s.page.Path())); err != nil && runErr == nil {
			runErr = fmt.Errorf("simulation: %w", err)
		}
	}
	if err := s.pods.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("simulation: %w", err)
	}
	cancel()
	if err := <-served; err != nil && runErr == nil {
		runErr = err
	}
	if err := <-timeServed; err != nil && runErr == nil {
		runErr = fmt.Errorf("simulation: batsky-go time service: %w", err)
	}
	if s.cfg.StatsFile != "" {
		if err := writeStats(s.cfg.StatsFile, s.Progress()); err != nil && runErr == nil {
			runErr = err
		}
	}
	if s.cfg.MetricsFile != "" {
		if err := s.server.Metrics.WriteFile(s.cfg.MetricsFile); err != nil && runErr == nil {
			runErr = fmt.Errorf("simulation: %w", err)
		}
	}
	if runErr == nil {
		p := s.Progress()
		s.log.Info("simulation ended", "simulatedTime", p.Now, "jobs", p.Done, "steps", p.Steps,
			"settle", p.Settle.Policy, "exactSteps", p.Settle.Idle, "quietSteps", p.Settle.Quiet, "maxWaitSteps", p.Settle.MaxWait, "unprovenSteps", p.Settle.Unproven, "groupsReleased", p.Settle.Releases)
	}
	return runErr
}

// saveKubeSchedulerMetrics writes the kube-scheduler's whole /metrics to
// KubeSchedulerMetricsFile. A scrape that fails is logged, not an error:
// the simulation's outputs are complete without it.
func (s *Simulation) saveKubeSchedulerMetrics(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	data, err := metrics.Scrape(ctx, nil, s.cfg.Settle.KubeSchedulerMetrics, s.token)
	if err == nil {
		err = os.WriteFile(s.cfg.KubeSchedulerMetricsFile, data, 0o644)
	}
	if err != nil {
		s.log.Warn("kube-scheduler's metrics not saved", "err", err)
	}
}

// writeStats writes the final progress of a run as JSON.
func writeStats(path string, p broker.Progress) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("simulation: stats: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("simulation: stats: %w", err)
	}
	return nil
}

// progressLogger logs the progress of a run at most once per interval.
func progressLogger(logger *slog.Logger, interval time.Duration) func(broker.Progress) {
	var last time.Time
	return func(p broker.Progress) {
		if time.Since(last) < interval {
			return
		}
		last = time.Now()
		total := "?"
		if p.Total >= 0 {
			total = strconv.Itoa(p.Total)
		}
		logger.Info("progress", "simulatedTime", p.Now, "jobsDone", p.Done, "jobsTotal", total,
			"pending", p.Pending, "running", p.Running, "steps", p.Steps)
	}
}
