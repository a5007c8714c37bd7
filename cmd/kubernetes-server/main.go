// Command kubernetes-server runs Batkube's emulated Kubernetes API server.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	flags "github.com/jessevdk/go-flags"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/gcpace"
	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/settle/controllers"
	"github.com/batkube/batkube/pkg/simulation"
	"github.com/batkube/batkube/pkg/translate"
)

// options are the command-line flags.
type options struct {
	Host             string            `long:"host" env:"BATKUBE_HOST" default:"127.0.0.1" description:"address to listen on (use 0.0.0.0 to accept remote clients)"`
	Port             int               `long:"port" env:"BATKUBE_PORT" default:"8001" description:"port to listen on"`
	Token            string            `long:"token" env:"BATKUBE_TOKEN" description:"require this bearer token from every client (no authentication when empty)"`
	WatchHistory     int               `long:"watch-history" default:"1000" description:"number of past events kept per resource (at least; a ring grows while a live watcher lags, up to a million) so that watches can resume from an older resourceVersion; a watch from an older one gets 410 Expired and its client lists again, as with the real server's watch cache (which keeps at least 100)"`
	MinWatchTimeout  time.Duration     `long:"min-watch-timeout" default:"30m" description:"watches that ask for no timeout end after a random time between this and twice this"`
	MaxWatchTimeout  time.Duration     `long:"max-watch-timeout" default:"0" description:"end every watch after at most this long, whatever timeout it asked for (clients re-watch: a test of exactness while informers reconnect); 0: no bound"`
	EventTTL         time.Duration     `long:"event-ttl" default:"1h" description:"how long an event is kept after its last write, by the server's clock (simulated time in a simulation), as kube-apiserver's --event-ttl; 0 keeps them for ever"`
	BookmarkInterval time.Duration     `long:"bookmark-interval" default:"1m" description:"how often an idle watch that allows bookmarks receives one"`
	Verbosity        int               `short:"v" long:"verbosity" default:"0" description:"log verbosity: 2 logs every request"`
	CPUProfile       string            `long:"cpu-profile" value-name:"FILE" description:"write a CPU profile of the whole run to FILE (go tool pprof)"`
	HeapProfile      string            `long:"heap-profile" value-name:"FILE" description:"write a heap profile to FILE when the run ends, after a garbage collection (go tool pprof: what is still held, and with -sample_index=alloc_space what was allocated)"`
	DebugAddress     string            `long:"debug-address" value-name:"HOST:PORT" description:"serve Go's profiles (net/http/pprof: /debug/pprof/heap, /debug/pprof/profile...) on this address, e.g. 127.0.0.1:6060, to look at a run while it runs"`
	GCHeadroom       string            `long:"gc-headroom" value-name:"QUANTITY" default:"64Mi" description:"keep the next garbage collection up to this far above the live heap (and never closer than GOGC): a server holding little collects less often; the headroom grows with what the server has allocated (an eighth of it), so that a short run does not touch memory it does not need; 0 leaves Go's pacing (GOGC) alone"`
	GoMaxProcs       int               `long:"gomaxprocs" value-name:"N" default:"1" description:"at most N threads run the server's Go code at once (GOMAXPROCS): beside a scheduler that keeps the cores busy, one thread costs the server less CPU than one per core (fewer wake-ups and handovers between threads) for the same throughput; 0 leaves Go's default (the GOMAXPROCS variable, or one per core)"`
	Objects          []string          `long:"objects" value-name:"FILE" description:"create the objects of this YAML or JSON manifest at start, e.g. PriorityClasses, namespaces (repeatable); in a simulation, objects annotated batkube.io/create-at (simulated seconds) are created at that instant, and Jobs, Deployments and other pod-creating objects at 0 unless annotated"`
	Simulation       simulationOptions `group:"Simulation" namespace:"" description:"Run a Batsim simulation (the server stays a plain API server without --simulate)"`
}

// simulationOptions are the flags of a Batsim-driven run.
type simulationOptions struct {
	Simulate           bool          `long:"simulate" description:"answer Batsim (or batkube-engine) on --batsim-endpoint, and exit when the simulation ends"`
	Endpoint           string        `long:"batsim-endpoint" default:"tcp://127.0.0.1:28000" description:"ZeroMQ endpoint the decision process binds (Batsim's -s)"`
	Epoch              string        `long:"epoch" default:"2026-01-01T00:00:00Z" description:"wall-clock instant of simulated time 0, for object timestamps (RFC 3339)"`
	Namespace          string        `long:"namespace" default:"default" description:"namespace of the pods of the workload's jobs"`
	SharedHosts        bool          `long:"shared-hosts" description:"pods of a job whose profile requests no cpu or memory (Batsim's own workloads) request nothing and may be packed onto any node; by default each asks for one batkube.io/host (every node has one), so such a job holds its hosts alone, as a Batsim job holds its res hosts"`
	SchedulerName      string        `long:"scheduler-name" default:"default-scheduler" description:"schedulerName of pods whose profile names none"`
	DefaultCPU         string        `long:"node-default-cpu" default:"1" description:"cores of a host that has no cpu/core property"`
	DefaultMemory      string        `long:"node-default-memory" default:"16Gi" description:"memory of a host that has no memory property"`
	Settle             string        `long:"settle" default:"auto" choice:"auto" choice:"kube-scheduler" choice:"signal" choice:"quiet" description:"how a step decides the scheduler is done: auto uses kube-scheduler's metrics when --kube-scheduler-metrics is set, idle signals (POST /batkube/v1/idle) once a scheduler sends one, and the quiet window otherwise; the other modes use only one of them"`
	KubeSchedulerURL   string        `long:"kube-scheduler-metrics" value-name:"URL" description:"metrics endpoint of the kube-scheduler under test (e.g. https://127.0.0.1:10259/metrics), run with --authentication-kubeconfig and --authorization-kubeconfig pointing at this server: each step then ends exactly when the scheduler has nothing left to do"`
	SchedulerNames     []string      `long:"kube-scheduler-name" value-name:"NAME" description:"schedulerName of one of that kube-scheduler's profiles (repeatable; default default-scheduler)"`
	KubeSchedulerVer   string        `long:"kube-scheduler-version" value-name:"VERSION" description:"that kube-scheduler's version, e.g. v1.37.1 (default: read from the User-Agent of its requests)"`
	ControllerMgrPID   string        `long:"controller-manager-pid-file" value-name:"FILE" description:"file holding the PID of a kube-controller-manager on this machine, written by whoever starts it (batkube-run --controller-manager does): every step then waits until its process is idle (it has handled every change and sent every request that followed), pods pending or not"`
	ControllerPIDs     []string      `long:"controller-pid-file" value-name:"NAME=FILE" description:"another controller process on this machine (Kueue's manager: batkube-run --kueue), named NAME, with its PID in FILE: every step also waits until it is idle (repeatable)"`
	AwaitKueue         bool          `long:"await-kueue" description:"Kueue's manager is one of the --controller-pid-file processes: before simulated time starts, wait until its controllers and scheduler have answered probes (a ClusterQueue, a LocalQueue, a ResourceFlavor and two Jobs in the namespace batkube-system, deleted before time 0), so that the Jobs of the first instants get their Workloads at once (batkube-run --kueue sets it)"`
	KubeSchedulerPID   string        `long:"kube-scheduler-pid-file" value-name:"FILE" description:"file holding that kube-scheduler's PID, written by whoever starts it (batkube-run does): its process is watched for quiescence without scanning /proc for the process listening on the metrics address"`
	Quiet              time.Duration `long:"settle-quiet" default:"50ms" description:"last resort, for schedulers that neither expose their state nor signal: the scheduler is deemed done when the API is quiet this long while pods are pending"`
	ReleaseAllGroups   bool          `long:"release-all-groups" description:"with kube-scheduler 1.37 and pod groups: once room is freed, renew and release again every waiting pod group (deleted, created held, then its minCount lowered to the gang's size, so that kube-scheduler attempts it at once rather than on its real-time back-off), not only those whose pods may fit by their requests on the nodes' free room (the bound NodeResourcesFit checks; use this flag with a profile that disables that plugin)"`
	MaxSettle          time.Duration `long:"settle-max" default:"0s" description:"wall time the scheduler gets at most per simulation step (0: 2s with the quiet window alone, 1m otherwise)"`
	PauseReleases      int           `long:"pause-releases" default:"32" value-name:"N" description:"with controllers whose scheduling loop pauses between cycles that admitted nothing (Kueue's 1 to 10 ms): release those pauses at most N times at one simulated instant, after which they take their own time (a loop whose every cycle writes, such as a Workload preempted and admitted again, would otherwise never let the instant end); 0: no bound"`
	ClockFile          string        `long:"clock-file" value-name:"FILE" description:"write the run's clock page to FILE: processes started with BATKUBE_CLOCK=FILE and BATKUBE_CLOCK_SERVER=this server's URL (the kube-controller-manager of make upstream; batkube-run --controller-manager does it) read simulated time from it and wait for simulated instants on this server, so that their delays (a Job's batched sync, its back-off after a failed pod) are simulated time; removed at the end of the run"`
	WorkloadsFile      string        `long:"workloads-file" value-name:"FILE" description:"write the log of Kueue's Workloads to FILE (CSV, the runner's _workloads.csv): per Workload, its LocalQueue, the ClusterQueue and flavors that admitted it, when it was created, got its quota, was admitted and finished (simulated), its evictions and preemptions, its final state"`
	ClusterQueuesFile  string        `long:"cluster-queues-file" value-name:"FILE" description:"write the log of Kueue's ClusterQueues to FILE (CSV, the runner's _clusterqueues.csv): at each simulated instant a ClusterQueue's status changed, the quota its admitted Workloads use and how many Workloads hold quota, are admitted and are pending"`
	ControllersFile    string        `long:"controllers-file" value-name:"FILE" description:"write the controllers' log to FILE (CSV, the runner's _controllers.csv): per controller object that owned pods (Job, ReplicaSet...), when it was first seen, its first pod's start and its last pod's end (simulated), its pods and how they ended, its final state (a Job's Complete or Failed, with the reason)"`
	NodesFile          string        `long:"nodes-file" value-name:"FILE" description:"write the log of the nodes an autoscaler launched to FILE (CSV, the runner's _nodes.csv) when the simulation ends: per node its instance type, the pool host it was mapped onto, the simulated instants it was created, Ready and deleted, its lifetime, price per hour and cost, the jobs it ran, its final state"`
	PodsFile           string        `long:"pods-file" value-name:"FILE" description:"write the pods' log to FILE (CSV, the runner's _pods.csv): per pod its job, node, simulated times (created, first scheduling attempt, bound, started, finished), final phase and reason, FailedScheduling events, preempted or not"`
	StatsFile          string        `long:"stats-file" value-name:"FILE" description:"write the run's final progress and settle statistics to FILE (JSON) when the simulation ends"`
	MetricsFile        string        `long:"metrics-file" value-name:"FILE" description:"write the server's metrics (what /metrics serves: requests, watches, steps, simulated time, jobs; Prometheus text format) to FILE when the simulation ends"`
	KubeSchedulerFile  string        `long:"kube-scheduler-metrics-file" value-name:"FILE" description:"when the simulation ends, save the whole /metrics of the kube-scheduler of --kube-scheduler-metrics to FILE (Prometheus text format), before the API stops serving"`
	BackoffMin         time.Duration `long:"backoff-min" default:"1s" description:"first simulated delay of the wake-ups asked while pods stay pending"`
	BackoffMax         time.Duration `long:"backoff-max" default:"1m" description:"largest simulated delay of those wake-ups"`
	PendingTimeout     time.Duration `long:"pending-timeout" default:"1h" description:"simulated time after which pods still pending, with nothing left that could free resources, are rejected"`
	EndAt              time.Duration `long:"end-at" value-name:"DURATION" description:"end the simulation at this simulated time (e.g. 10884s): the first step at or after it rejects the pending jobs and kills the running ones instead of waiting for the scheduler, and later jobs are rejected (an arrival-only experiment ends at its last arrival so); 0: run to the end"`
	SchedulerTimeout   time.Duration `long:"scheduler-timeout" default:"10s" description:"pods pending while the scheduler (the client that binds them, by User-Agent) holds no watch on pods this long (wall time) means it is gone: the run fails"`
	StartTimeout       time.Duration `long:"scheduler-start-timeout" default:"1m" description:"pods pending this long (wall time) before any scheduler binds or examines one means there is no scheduler: the run fails"`
	DynamicJobDelay    time.Duration `long:"dynamic-job-delay" default:"1m" description:"simulated duration of a pod created through the API during a run (needs Batsim's dynamic jobs); the pod annotation batkube.io/delay (seconds) overrides it"`
	ChargeDecisionTime bool          `long:"charge-decision-time" description:"add the scheduler's wall-clock decision time to simulated time"`
	DecisionTimeScale  float64       `long:"decision-time-scale" default:"1" description:"factor applied to the charged decision time"`
	Preempted          string        `long:"preempted" value-name:"kill|resubmit" default:"kill" description:"what becomes of the job of a pod the scheduler preempts: killed (COMPLETED_KILLED), or killed and submitted again as a new job with the same profile (resubmit: needs Batsim's dynamic jobs, e.g. batkube-run --dynamic-jobs)"`
	Gangs              string        `long:"gangs" value-name:"off|podgroup" default:"off" description:"how the pods of a job asking for res > 1 hosts are grouped: off (independent pods, bound one by one), or podgroup (a scheduling.k8s.io/v1beta1 PodGroup per job with a gang policy of minCount res, created before the pods, which reference it in spec.schedulingGroup; under kube-scheduler's settle policy it is created held, with minCount res+1, and released once the scheduler holds all the pods: only kube-scheduler 1.37 with --feature-gates=GenericWorkload=true binds such pods, all at once)"`
	FinishedPodTTL     time.Duration `long:"finished-pod-ttl" default:"0s" description:"simulated time finished pods stay visible before removal"`
	ProvisioningDelay  time.Duration `long:"provisioning-delay" default:"0s" description:"simulated time from the creation of a node an autoscaler launches (providerID kwok://, Karpenter's KWOK provider), mapped onto a free pool host of its instance type (hosts with the property pool), to its Ready condition and the removal of its node.kubernetes.io/not-ready taint; 0: Ready at once"`
	SwitchOffPool      bool          `long:"switch-off-pool" description:"for Batsim run with --energy: switch the pool hosts that have Batsim's sleep_pstates property to their sleep pstate while no launched node is mapped onto them (and no job is still on them), and back to pstate 0 when one is (SET_RESOURCE_STATE); such a node is Ready once its --provisioning-delay has passed and its host is on. Batsim without --energy, and the embedded engine, refuse power states"`
	ScaleDownWait      time.Duration `long:"scale-down-wait" default:"10m" description:"simulated time the run goes on after its workload is over while launched nodes remain, for the autoscaler to consolidate them (the run ends as soon as none remains)"`
	BatskyEndpoint     string        `long:"batsky-endpoint" value-name:"ENDPOINT" description:"serve simulated time to a scheduler built with batsky-go, whose socket is at ENDPOINT (batsky-go binds tcp://127.0.0.1:27000); time-virtualised Go schedulers can instead use pkg/simtime/clockclient over this server's /batkube/v1/clock"`
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
	headroom, err := resource.ParseQuantity(opts.GCHeadroom)
	if err != nil || headroom.Sign() < 0 {
		return fmt.Errorf("--gc-headroom %q: want a size such as 64Mi", opts.GCHeadroom)
	}
	defer gcpace.Start(uint64(headroom.Value())).Stop()
	switch {
	case opts.GoMaxProcs < 0:
		return fmt.Errorf("--gomaxprocs %d: want 0 (Go's default) or more", opts.GoMaxProcs)
	case opts.GoMaxProcs > 0:
		runtime.GOMAXPROCS(opts.GoMaxProcs)
	}
	if opts.CPUProfile != "" {
		f, err := os.Create(opts.CPUProfile)
		if err != nil {
			return fmt.Errorf("--cpu-profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpu-profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if opts.HeapProfile != "" {
		defer func() {
			if err := writeHeapProfile(opts.HeapProfile); err != nil {
				fmt.Fprintln(os.Stderr, "kubernetes-server: --heap-profile:", err)
			}
		}()
	}
	if opts.DebugAddress != "" {
		if err := serveProfiles(opts.DebugAddress); err != nil {
			return fmt.Errorf("--debug-address: %w", err)
		}
	}
	level := slog.LevelInfo
	if opts.Verbosity >= 4 {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	srvOpts := server.Options{
		WatchHistory:     opts.WatchHistory,
		BearerToken:      opts.Token,
		MinWatchTimeout:  opts.MinWatchTimeout,
		MaxWatchTimeout:  opts.MaxWatchTimeout,
		EventTTL:         eventTTL(opts.EventTTL),
		BookmarkInterval: opts.BookmarkInterval,
		Logger:           logger,
		Verbosity:        opts.Verbosity,
	}
	addr := net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port))
	if !opts.Simulation.Simulate {
		srv, err := server.New(srvOpts)
		if err != nil {
			return err
		}
		if err := createObjects(ctx, srv, opts.Objects, logger); err != nil {
			return err
		}
		l, err := listen(addr, logger)
		if err != nil {
			return err
		}
		return srv.Serve(ctx, l)
	}
	cfg, err := opts.Simulation.config(srvOpts, logger)
	if err != nil {
		return err
	}
	docs, err := readManifests(opts.Objects)
	if err != nil {
		return err
	}
	timed, now, err := broker.SplitTimedObjects(docs)
	if err != nil {
		return fmt.Errorf("--objects: %w", err)
	}
	cfg.Broker.Objects = timed
	sim, err := simulation.New(cfg)
	if err != nil {
		return err
	}
	for _, doc := range now {
		if _, err := sim.Server().API.CreateDocument(ctx, doc); err != nil {
			return fmt.Errorf("--objects: %w", err)
		}
	}
	if len(timed) > 0 {
		logger.Info("objects to create during the simulation", "objects", len(timed), "first", timed[0].Name, "at", timed[0].At)
	}
	l, err := listen(addr, logger)
	if err != nil {
		return err
	}
	return sim.Run(ctx, l)
}

// createObjects creates the objects of the manifests before clients come.
func createObjects(ctx context.Context, srv *server.Server, files []string, logger *slog.Logger) error {
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("--objects: %w", err)
		}
		created, err := srv.API.CreateManifest(ctx, data)
		if err != nil {
			return fmt.Errorf("--objects %s: %w", f, err)
		}
		logger.Info("created the objects of a manifest", "file", f, "objects", created)
	}
	return nil
}

// readManifests reads the objects of the manifests, in order.
func readManifests(files []string) ([]json.RawMessage, error) {
	var docs []json.RawMessage
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--objects: %w", err)
		}
		d, err := apiserver.ManifestDocuments(data)
		if err != nil {
			return nil, fmt.Errorf("--objects %s: %w", f, err)
		}
		docs = append(docs, d...)
	}
	return docs, nil
}

func listen(addr string, logger *slog.Logger) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	logger.Info("serving the Kubernetes API", "url", "http://"+l.Addr().String())
	return l, nil
}

// parseFlag parses the value of a flag. The first error of a sequence of
// calls is kept in *firstErr, wrapped with its flag's name; the calls after
// it parse too, but leave *firstErr alone.
func parseFlag[T any](firstErr *error, flag, value string, parse func(string) (T, error)) T {
	v, err := parse(value)
	if err != nil && *firstErr == nil {
		*firstErr = fmt.Errorf("%s: %w", flag, err)
	}
	return v
}

// config turns the simulation flags into a simulation.Config.
func (sim simulationOptions) config(srvOpts server.Options, logger *slog.Logger) (simulation.Config, error) {
	var flagErr error
	epoch := parseFlag(&flagErr, "--epoch", sim.Epoch, func(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) })
	cpu := parseFlag(&flagErr, "--node-default-cpu", sim.DefaultCPU, resource.ParseQuantity)
	mem := parseFlag(&flagErr, "--node-default-memory", sim.DefaultMemory, resource.ParseQuantity)
	preempted := parseFlag(&flagErr, "--preempted", sim.Preempted, broker.ParsePreemptedPolicy)
	gangs := parseFlag(&flagErr, "--gangs", sim.Gangs, translate.ParseGangs)
	if flagErr != nil {
		return simulation.Config{}, flagErr
	}
	var controllerProcesses []controllers.Process
	if sim.ControllerMgrPID != "" {
		controllerProcesses = append(controllerProcesses, controllers.Process{Name: "kube-controller-manager", PIDFile: sim.ControllerMgrPID})
	}
	for _, v := range sim.ControllerPIDs {
		name, file, ok := strings.Cut(v, "=")
		if !ok || name == "" || file == "" {
			return simulation.Config{}, fmt.Errorf("--controller-pid-file %q: want NAME=FILE", v)
		}
		controllerProcesses = append(controllerProcesses, controllers.Process{Name: name, PIDFile: file})
	}
	return simulation.Config{
		Server:                   srvOpts,
		Epoch:                    epoch,
		BatsimEndpoint:           sim.Endpoint,
		BatskyEndpoint:           sim.BatskyEndpoint,
		StatsFile:                sim.StatsFile,
		MetricsFile:              sim.MetricsFile,
		KubeSchedulerMetricsFile: sim.KubeSchedulerFile,
		PodsFile:                 sim.PodsFile,
		ControllersFile:          sim.ControllersFile,
		WorkloadsFile:            sim.WorkloadsFile,
		ClusterQueuesFile:        sim.ClusterQueuesFile,
		NodesFile:                sim.NodesFile,
		ClockFile:                sim.ClockFile,
		Logger:                   logger,
		Settle: simulation.SettleConfig{Mode: sim.Settle, Quiet: sim.Quiet, KubeSchedulerMetrics: sim.KubeSchedulerURL,
			SchedulerNames: sim.SchedulerNames, KubeSchedulerVersion: sim.KubeSchedulerVer, KubeSchedulerPIDFile: sim.KubeSchedulerPID,
			Controllers:      controllerProcesses,
			ReleaseAllGroups: sim.ReleaseAllGroups},
		Broker: broker.Options{
			Nodes:              translate.NodeOptions{DefaultCPU: cpu, DefaultMemory: mem},
			Pods:               translate.PodOptions{Namespace: sim.Namespace, SchedulerName: sim.SchedulerName, Gangs: gangs, ExclusiveHosts: !sim.SharedHosts},
			MaxSettle:          sim.MaxSettle,
			MaxPauseReleases:   sim.PauseReleases,
			BackoffMin:         sim.BackoffMin,
			BackoffMax:         sim.BackoffMax,
			PendingTimeout:     sim.PendingTimeout,
			EndAt:              sim.EndAt,
			SchedulerTimeout:   sim.SchedulerTimeout,
			StartTimeout:       sim.StartTimeout,
			ChargeDecisionTime: sim.ChargeDecisionTime,
			DecisionTimeScale:  sim.DecisionTimeScale,
			FinishedPodTTL:     sim.FinishedPodTTL,
			ProvisioningDelay:  sim.ProvisioningDelay,
			SwitchOffPool:      sim.SwitchOffPool,
			ScaleDownWait:      sim.ScaleDownWait,
			DynamicJobDelay:    sim.DynamicJobDelay,
			Preempted:          preempted,
			AwaitKueue:         sim.AwaitKueue,
		},
	}, nil
}

// eventTTL maps --event-ttl onto server.Options.EventTTL, where 0 means the
// default and a negative TTL keeps events for ever (the flag's 0).
func eventTTL(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// serveProfiles serves net/http/pprof's handlers on addr until the process
// exits.
func serveProfiles(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
	go http.Serve(l, mux) //nolint:errcheck // ends with the process
	return nil
}

// writeHeapProfile writes the heap profile, after a collection so that it
// shows what is still held.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
