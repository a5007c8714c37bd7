// Command kubernetes-server runs Batkube's emulated Kubernetes API server.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	flags "github.com/jessevdk/go-flags"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/simclock"
	"github.com/batkube/batkube/pkg/translate"
)

// options are the command-line flags.
type options struct {
	Host             string            `long:"host" env:"BATKUBE_HOST" default:"127.0.0.1" description:"address to listen on (use 0.0.0.0 to accept remote clients)"`
	Port             int               `long:"port" env:"BATKUBE_PORT" default:"8001" description:"port to listen on"`
	Token            string            `long:"token" env:"BATKUBE_TOKEN" description:"require this bearer token from every client (no authentication when empty)"`
	WatchHistory     int               `long:"watch-history" default:"10000" description:"number of past events kept so that watches can resume from an older resourceVersion"`
	MinWatchTimeout  time.Duration     `long:"min-watch-timeout" default:"30m" description:"watches that ask for no timeout end after a random time between this and twice this"`
	BookmarkInterval time.Duration     `long:"bookmark-interval" default:"1m" description:"how often an idle watch that allows bookmarks receives one"`
	Verbosity        int               `short:"v" long:"verbosity" default:"0" description:"log verbosity: 2 logs every request"`
	Simulation       simulationOptions `group:"Simulation" namespace:"" description:"Run a Batsim simulation (the server stays a plain API server without --simulate)"`
}

// simulationOptions are the flags of a Batsim-driven run.
type simulationOptions struct {
	Simulate           bool          `long:"simulate" description:"answer Batsim (or batkube-engine) on --batsim-endpoint, and exit when the simulation ends"`
	Endpoint           string        `long:"batsim-endpoint" default:"tcp://127.0.0.1:28000" description:"ZeroMQ endpoint the decision process binds (Batsim's -s)"`
	Epoch              string        `long:"epoch" default:"2026-01-01T00:00:00Z" description:"wall-clock instant of simulated time 0, for object timestamps (RFC 3339)"`
	Namespace          string        `long:"namespace" default:"default" description:"namespace of the pods of the workload's jobs"`
	SchedulerName      string        `long:"scheduler-name" default:"default-scheduler" description:"schedulerName of pods whose profile names none"`
	DefaultCPU         string        `long:"node-default-cpu" default:"1" description:"cores of a host that has no cpu/core property"`
	DefaultMemory      string        `long:"node-default-memory" default:"16Gi" description:"memory of a host that has no memory property"`
	Quiet              time.Duration `long:"settle-quiet" default:"50ms" description:"the scheduler is deemed settled when the API is quiet this long while pods are pending"`
	MaxSettle          time.Duration `long:"settle-max" default:"2s" description:"wall time the scheduler gets at most per simulation step"`
	BackoffMin         time.Duration `long:"backoff-min" default:"1s" description:"first simulated delay of the wake-ups asked while pods stay pending"`
	BackoffMax         time.Duration `long:"backoff-max" default:"1m" description:"largest simulated delay of those wake-ups"`
	PendingTimeout     time.Duration `long:"pending-timeout" default:"1h" description:"simulated time after which pods still pending, with nothing left that could free resources, are rejected"`
	SchedulerTimeout   time.Duration `long:"scheduler-timeout" default:"10s" description:"pods pending with no client watching pods this long (wall time) means the scheduler is gone: the run fails"`
	ChargeDecisionTime bool          `long:"charge-decision-time" description:"add the scheduler's wall-clock decision time to simulated time"`
	DecisionTimeScale  float64       `long:"decision-time-scale" default:"1" description:"factor applied to the charged decision time"`
	FinishedPodTTL     time.Duration `long:"finished-pod-ttl" default:"0s" description:"simulated time finished pods stay visible before removal"`
}

func main() {
	var opts options
	parser := flags.NewParser(&opts, flags.Default)
	parser.ShortDescription = "Batkube Kubernetes API server"
	parser.LongDescription = "Serves an in-memory emulation of the Kubernetes 1.37 API that unmodified clients (kube-scheduler, kubectl, client-go) use."
	if _, err := parser.Parse(); err != nil {
		var ferr *flags.Error
		if errors.As(err, &ferr) && ferr.Type == flags.ErrHelp {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "kubernetes-server:", err)
		os.Exit(1)
	}
}

func run(opts options) error {
	level := slog.LevelInfo
	if opts.Verbosity >= 4 {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	sim := opts.Simulation
	var (
		b   *broker.Broker
		clk *simclock.Clock
	)
	if sim.Simulate {
		epoch, err := time.Parse(time.RFC3339, sim.Epoch)
		if err != nil {
			return fmt.Errorf("--epoch: %w", err)
		}
		cpu, err := resource.ParseQuantity(sim.DefaultCPU)
		if err != nil {
			return fmt.Errorf("--node-default-cpu: %w", err)
		}
		mem, err := resource.ParseQuantity(sim.DefaultMemory)
		if err != nil {
			return fmt.Errorf("--node-default-memory: %w", err)
		}
		clk = simclock.New(epoch)
		b, err = broker.New(broker.Options{
			Clock:              clk,
			Nodes:              translate.NodeOptions{DefaultCPU: cpu, DefaultMemory: mem},
			Pods:               translate.PodOptions{Namespace: sim.Namespace, SchedulerName: sim.SchedulerName},
			Quiet:              sim.Quiet,
			MaxSettle:          sim.MaxSettle,
			BackoffMin:         sim.BackoffMin,
			BackoffMax:         sim.BackoffMax,
			PendingTimeout:     sim.PendingTimeout,
			SchedulerTimeout:   sim.SchedulerTimeout,
			ChargeDecisionTime: sim.ChargeDecisionTime,
			DecisionTimeScale:  sim.DecisionTimeScale,
			FinishedPodTTL:     sim.FinishedPodTTL,
			Logger:             logger,
			Progress:           progressLogger(logger),
		})
		if err != nil {
			return err
		}
	}
	srvOpts := server.Options{
		WatchHistory:     opts.WatchHistory,
		BearerToken:      opts.Token,
		MinWatchTimeout:  opts.MinWatchTimeout,
		BookmarkInterval: opts.BookmarkInterval,
		Logger:           logger,
		Verbosity:        opts.Verbosity,
	}
	if b != nil {
		srvOpts.Clock, srvOpts.Terminator, srvOpts.Admitter = clk, b, b
	}
	srv, err := server.New(srvOpts)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	logger.Info("serving the Kubernetes API", "url", "http://"+l.Addr().String())
	if b == nil {
		return srv.Serve(ctx, l)
	}
	return simulate(ctx, srv, b, l, sim.Endpoint, logger)
}

// simulate serves the API while the broker answers Batsim, and stops both
// when the simulation ends or fails.
func simulate(ctx context.Context, srv *server.Server, b *broker.Broker, l net.Listener, endpoint string, logger *slog.Logger) error {
	conn, err := batsim.Listen(endpoint)
	if err != nil {
		return fmt.Errorf("listening for Batsim on %s: %w", endpoint, err)
	}
	defer conn.Close()
	logger.Info("waiting for Batsim", "endpoint", conn.Endpoint())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	runErr := b.Run(ctx, conn, srv.API, srv.Store)
	cancel()
	if err := <-served; err != nil && runErr == nil {
		runErr = err
	}
	if runErr == nil {
		logger.Info("simulation ended")
	}
	return runErr
}

// progressLogger logs the progress of a run at most every few seconds.
func progressLogger(logger *slog.Logger) func(broker.Progress) {
	var last time.Time
	return func(p broker.Progress) {
		if time.Since(last) < 2*time.Second {
			return
		}
		last = time.Now()
		total := "?"
		if p.Total >= 0 {
			total = strconv.Itoa(p.Total)
		}
		logger.Info("progress", "simulatedTime", p.Now, "jobsDone", p.Done, "jobsTotal", total, "running", p.Running, "steps", p.Steps)
	}
}
