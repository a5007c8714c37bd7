package launch

import (
	"fmt"
	"time"

	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/swf"
)

// Kubeconfig returns a kubeconfig for the API server at url (no
// authentication).
func Kubeconfig(url string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: batkube
  cluster:
    server: %s
contexts:
- name: batkube
  context:
    cluster: batkube
    user: batkube
current-context: batkube
users:
- name: batkube
  user: {}
`, url)
}

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
	// EndAt, when positive, ends the simulation at that simulated time
	// (kubernetes-server's --end-at: pending jobs rejected, running ones
	// killed).
	EndAt time.Duration
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
	// ControllerManagerWallClock runs kube-controller-manager on the wall
	// clock: its delays (a Job's batched sync, its back-off after a failed
	// pod) are then waited out in wall time at the instant they start,
	// instead of passing in simulated time (the default: the server writes
	// the run's clock page and kube-controller-manager, built with package
	// kubeclock, reads it). Another kube-controller-manager binary, built
	// without that package, runs on the wall clock whatever this says.
	ControllerManagerWallClock bool
	// Kueue starts Kueue's manager (BinDir/kueue, built by make upstream
	// from the sigs.k8s.io/kueue module, on the run's clock like
	// kube-controller-manager) with KueueArgs after the runner's flags: its
	// CRDs and webhooks are installed before the run's Objects (which give
	// its ResourceFlavors, ClusterQueues and LocalQueues), and Jobs labelled
	// kueue.x-k8s.io/queue-name wait in its queues. It implies
	// ControllerManager; every step waits until Kueue too is idle.
	Kueue     bool
	KueueArgs []string
	// KueueConfig, if set, is a file of Kueue Configuration fields merged
	// over the run's (a mapping merged key by key, anything else
	// replaced): fairSharing, waitForPodsReady, featureGates...
	KueueConfig string
	// Karpenter starts Karpenter v1.15.0's KWOK provider (BinDir/karpenter,
	// built by make karpenter; on the run's simulated clock) after
	// installing its CRDs (BinDir/karpenter-manifests.yaml): the run's
	// Objects give its NodePools and KWOKNodeClasses, the platform's pool
	// hosts its instance types (written to OutDir/karpenter-instance-types.json),
	// and the nodes it launches are mapped onto free pool hosts, Ready
	// after ProvisioningDelay (_nodes.csv logs them). It implies
	// ControllerManager; every step waits until Karpenter too is idle.
	// KarpenterEnv are more NAME=VALUE settings of its environment
	// (BATCH_IDLE_DURATION=2s...).
	Karpenter         bool
	KarpenterEnv      []string
	ProvisioningDelay time.Duration
	// SwitchOffPool runs real Batsim with --energy and has the server keep
	// the pool hosts that have sleep pstates asleep while no node is
	// mapped onto them (broker.Options.SwitchOffPool). It needs Karpenter
	// and real Batsim: the embedded engine has no power states.
	SwitchOffPool bool
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
