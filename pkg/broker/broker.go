// Package broker runs a simulation: it answers Batsim (or the embedded
// engine) over the Batsim protocol, turns its events into Kubernetes objects
// in the store, lets the scheduler react, and turns what the scheduler did
// (bindings, deletions) back into Batsim decisions.
//
// One step (run.handle) applies a Batsim message to the cluster (events.go:
// nodes, pods, their phases), fires the timers due at that instant, waits
// until the scheduler is done (settle.go, asking a settle.Policy), starts the
// jobs whose pods are all bound and admitted (kubelet.go), and asks Batsim
// for the calls the run needs (wakeup.go). What clients do to pods reaches
// the broker through an unbounded store subscription (intake.go), so no
// burst of writes can overflow it.
package broker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/simtime/simclock"
	"github.com/batkube/batkube/pkg/store"
	"github.com/batkube/batkube/pkg/translate"
)

// Options configure a Broker. Zero durations take the documented defaults.
type Options struct {
	// Clock is the simulated clock the API server stamps objects with.
	Clock *simclock.Clock
	// Controllers, if set, is a process every step waits for, pods
	// pending or not (kube-controller-manager; package
	// settle/controllers).
	Controllers settle.Barrier
	// ControllersOnSimulatedTime, if set, says whether the controllers'
	// clock is the run's simulated clock (a kube-controller-manager built
	// with package kubeclock, attached to the clock page): their delays
	// are then timers of the simulated clock, which the broker wakes for,
	// rather than waits in wall time that every step sits out.
	ControllersOnSimulatedTime func() bool
	// AwaitKueue: Kueue's manager is among the controllers, and simulated
	// time starts only once its controllers and scheduler have answered
	// their probes (warmup.go).
	AwaitKueue bool
	// Objects are created at their instants once the simulation has begun
	// (SplitTimedObjects); objects whose controllers create pods need
	// Batsim's dynamic jobs.
	Objects []TimedObject
	// Nodes and Pods are the translation defaults.
	Nodes translate.NodeOptions
	Pods  translate.PodOptions
	// Settle decides when the scheduler is done at an instant (default:
	// settle.NewQuiet(Quiet)).
	Settle settle.Policy
	// Quiet is the silence window of the default policy (default 50ms).
	Quiet time.Duration
	// MaxSettle bounds the wall time the scheduler gets per step (default
	// 2s with the quiet policy, 1m with the others).
	MaxSettle time.Duration
	// MaxPauseReleases bounds the releases of the controllers' pauses at
	// one simulated instant (settle.SettlerOptions; 0: no bound).
	MaxPauseReleases int
	// BackoffMin and BackoffMax bound the simulated delay of the wake-ups
	// asked for while pods stay pending and the policy cannot tell that the
	// scheduler is idle (defaults 1s and 60s): a scheduler that only polls
	// gets its chances to retry.
	BackoffMin, BackoffMax time.Duration
	// PendingTimeout is the simulated time after which a job still pending,
	// while nothing runs and no job is left to submit, is rejected
	// (default 1h).
	PendingTimeout time.Duration
	// EndAt, when positive, ends the simulation at that simulated time:
	// the first step at or after it takes in its events (the completions
	// at that instant), then rejects every pending job and kills every
	// running one instead of waiting for the scheduler, creates no more
	// timed objects, and rejects the jobs submitted later (see endRun).
	// An arrival-only experiment ends so at its last arrival.
	EndAt time.Duration
	// SchedulerTimeout is how long pods may stay pending with no client
	// watching pods before the scheduler is reported dead (default 10s).
	SchedulerTimeout time.Duration
	// StartTimeout is how long pods may stay pending before a scheduler
	// first acts on one (binds it or marks it unschedulable), after which
	// the run fails (default 1m).
	StartTimeout time.Duration
	// ChargeDecisionTime adds the scheduler's wall time, times
	// DecisionTimeScale (default 1), to simulated time.
	ChargeDecisionTime bool
	DecisionTimeScale  float64
	// DynamicJobDelay is the duration of a job registered for a pod created
	// through the API (default 60s); the pod annotation DelayAnnotation
	// overrides it.
	DynamicJobDelay time.Duration
	// FinishedPodTTL is how long (simulated) finished pods stay visible
	// before they are removed, so that memory stays bounded (default 0:
	// removed at the next step).
	FinishedPodTTL time.Duration
	// Preempted says what becomes of the jobs of preempted pods (default
	// PreemptedKill); PreemptedResubmit needs Batsim's dynamic jobs.
	Preempted PreemptedPolicy
	// PodsCSV, if set, receives the pods' log (_pods.csv): per pod its
	// job, node, simulated times, final phase and reason, FailedScheduling
	// events and preemption.
	PodsCSV io.Writer
	// ControllersCSV, if set, receives the controllers' log
	// (_controllers.csv): per controller object (Job, ReplicaSet...) that
	// owned pods, its instants, its pods' outcomes and its final state.
	ControllersCSV io.Writer
	// WorkloadsCSV, if set, receives the log of Kueue's Workloads
	// (workloadscsv.go), written at the end of the run.
	WorkloadsCSV io.Writer
	// ClusterQueuesCSV, if set, receives the log of Kueue's ClusterQueues'
	// quota use (clusterqueuescsv.go), row by row.
	ClusterQueuesCSV io.Writer
	// ProvisioningDelay is the simulated time from a launched node's
	// creation (an autoscaler's, mapped onto a pool host: pool.go) to its
	// Ready condition (default 0: Ready at its creation's instant).
	ProvisioningDelay time.Duration
	// ScaleDownWait is how long (simulated) the run goes on after its
	// workload is over while launched nodes remain, so that the
	// autoscaler's consolidation can delete them (default 10m; the run
	// ends as soon as none remains).
	ScaleDownWait time.Duration
	// SwitchOffPool switches the pool hosts that have sleep pstates (Batsim's
	// sleep_pstates property) to sleep while no launched node is mapped
	// onto them, and on when one is (SET_RESOURCE_STATE): for Batsim run
	// with --energy, which aborts on such requests otherwise. A node on a
	// sleeping host is Ready once its provisioning delay has passed and
	// Batsim says its host is on (poolpower.go).
	SwitchOffPool bool
	// NodesCSV, if set, receives the log of the nodes an autoscaler
	// launched (nodescsv.go), written at the end of the run.
	NodesCSV io.Writer
	// Progress, if set, is called after every step.
	Progress func(Progress)
	// Exchanged, if set, is called after every step with the message
	// Batsim sent and the reply, once the reply is sent (for metrics).
	Exchanged func(received, sent batsim.Message)
	Logger    *slog.Logger
}

// DelayAnnotation sets the simulated duration (seconds) of a pod created
// through the API during a simulation.
const DelayAnnotation = translate.DelayAnnotation

// ExitCodeAnnotation sets the exit code of a pod created through the API
// during a simulation (its Batsim job's "ret"; default 0): a non-zero code
// fails the pod, with that code in its container's terminated state, as a
// Job's podFailurePolicy reads it.
const ExitCodeAnnotation = translate.ExitCodeAnnotation

// Progress reports how far a simulation is.
type Progress struct {
	Now float64 `json:"now"` // simulated seconds
	// Jobs submitted, pending (not all pods bound), running and done
	// (finished or rejected); Total is known once Batsim has said no more
	// jobs come (else -1).
	Submitted int  `json:"submitted"`
	Pending   int  `json:"pending"`
	Running   int  `json:"running"`
	Done      int  `json:"done"`
	Total     int  `json:"total"`
	Steps     int  `json:"steps"` // messages answered
	Ended     bool `json:"ended"` // SIMULATION_ENDS answered
	// Settle counts the steps by how the wait for the scheduler ended.
	Settle settle.Stats `json:"settle"`
	// Admission counts the pods the kubelet refused (over-committed nodes).
	AdmissionRejected int `json:"admissionRejected"`
	// Preempted counts the jobs killed because the scheduler preempted one
	// of their pods; Resubmitted those submitted again (Options.Preempted).
	Preempted   int `json:"preempted"`
	Resubmitted int `json:"resubmitted"`
	// Launched counts the nodes an autoscaler launched; Unmapped those
	// for which no pool host of their instance type was free (they run
	// nothing); PoolInUse the pool hosts mapped onto nodes now.
	Launched  int `json:"launched,omitempty"`
	Unmapped  int `json:"unmapped,omitempty"`
	PoolInUse int `json:"poolInUse,omitempty"`
	// TimedObjectsLeft counts the creations and deletions of timed
	// objects (Options.Objects) still to come; Workloads counts Kueue's
	// Workloads by the state they were last seen in (nil when none was
	// seen or Options.WorkloadsCSV is nil).
	TimedObjectsLeft int             `json:"timedObjectsLeft,omitempty"`
	Workloads        *WorkloadStates `json:"workloads,omitempty"`
}

// Broker is the decision process of a simulation.
type Broker struct {
	opts Options
	log  *slog.Logger

	// Read by the API server's admission, written by the broker's loop.
	begun          atomic.Bool
	dynamicEnabled atomic.Bool
	registrationOK atomic.Bool

	// terminating holds the bound pods clients delete (the kubelet's part).
	terminating *queue[*corev1.Pod]
	// last is the progress after the latest step, for other goroutines.
	last atomic.Pointer[Progress]
}

// Progress returns where the simulation stood after its latest step.
func (b *Broker) Progress() Progress {
	if p := b.last.Load(); p != nil {
		return *p
	}
	return Progress{Total: -1}
}

// New returns a Broker; install it as the API server's Terminator and
// Admitter (server.Options) so that it sees the pods clients delete or create.
func New(opts Options) (*Broker, error) {
	if opts.Clock == nil {
		return nil, errors.New("broker: a Clock is required")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opts.Quiet, 50*time.Millisecond)
	if opts.Settle == nil {
		opts.Settle = settle.NewQuiet(opts.Quiet)
	}
	if _, quiet := opts.Settle.(*settle.Quiet); quiet {
		def(&opts.MaxSettle, 2*time.Second)
	} else {
		def(&opts.MaxSettle, time.Minute)
	}
	def(&opts.BackoffMin, time.Second)
	def(&opts.BackoffMax, time.Minute)
	def(&opts.PendingTimeout, time.Hour)
	def(&opts.SchedulerTimeout, 10*time.Second)
	def(&opts.StartTimeout, time.Minute)
	if opts.Preempted == "" {
		opts.Preempted = PreemptedKill
	}
	def(&opts.DynamicJobDelay, time.Minute)
	def(&opts.ScaleDownWait, 10*time.Minute)
	if opts.DecisionTimeScale <= 0 {
		opts.DecisionTimeScale = 1
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Broker{opts: opts, log: opts.Logger, terminating: newQueue[*corev1.Pod]()}, nil
}

// PodTerminating implements apiserver.Terminator: the deletion of a bound
// pod becomes a KILL_JOB (or a REJECT_JOB if its job has not started).
func (b *Broker) PodTerminating(pod *corev1.Pod) { b.terminating.push(pod) }

// SetControllers sets Options.Controllers, for a barrier built after the
// broker (it watches the API server, which is built with the broker as its
// admitter). Call it before Run.
func (b *Broker) SetControllers(c settle.Barrier) { b.opts.Controllers = c }

// Run answers the Batsim peer on conn until the simulation ends (nil), ctx
// is cancelled, or something goes wrong: the error says what, and the peer
// has been answered whenever possible so that it can write its outputs.
func (b *Broker) Run(ctx context.Context, conn *batsim.Conn, api *apiserver.Server, st *store.Store) error {
	r := newRun(b, api, st)
	defer r.intake.Close()
	err := r.loop(ctx, conn)
	if cerr := r.pods.close(r.jobs); err == nil {
		err = cerr
	}
	if werr := r.workloads.close(); err == nil && werr != nil {
		err = werr
	}
	if qerr := r.clusterQueues.close(); err == nil && qerr != nil {
		err = fmt.Errorf("broker: the ClusterQueues' log: %w", qerr)
	}
	end := b.opts.Clock.Seconds()
	if r.pool.endAt >= 0 {
		end = r.pool.endAt
	}
	if nerr := r.pool.writeNodes(b.opts.NodesCSV, end); err == nil && nerr != nil {
		err = fmt.Errorf("broker: the nodes' log: %w", nerr)
	}
	if cerr := r.owners.close(); err == nil && cerr != nil {
		err = fmt.Errorf("broker: the controllers' log: %w", cerr)
	}
	return err
}

// loop answers Batsim's messages until the simulation ends.
func (r *run) loop(ctx context.Context, conn *batsim.Conn) error {
	b := r.Broker
	for {
		msg, err := conn.Recv(ctx)
		if err != nil {
			if errors.Is(err, batsim.ErrPeerDisconnected) {
				return fmt.Errorf("broker: Batsim disconnected before the end of the simulation (did it crash? see its log): %w", err)
			}
			return fmt.Errorf("broker: receiving from Batsim: %w", err)
		}
		reply, done, err := r.handle(ctx, msg)
		if err != nil {
			// No answer: an answer would let Batsim move time on as if
			// the decisions were made. The socket closes when the caller
			// returns, and a peer that watches the connection (the
			// embedded engine) ends with the outputs of the simulation so
			// far; real Batsim waits, and whoever runs it stops it.
			return err
		}
		if err := conn.Send(reply); err != nil {
			return fmt.Errorf("broker: replying to Batsim: %w", err)
		}
		if b.opts.Exchanged != nil {
			b.opts.Exchanged(msg, reply)
		}
		p := r.progress(reply.Now)
		p.Ended = done
		b.last.Store(&p)
		if b.opts.Progress != nil {
			b.opts.Progress(p)
		}
		if done {
			return nil
		}
	}
}

// queue is an unbounded FIFO that several goroutines push to and the
// broker's loop drains; ready has a token while items wait.
type queue[T any] struct {
	mu    sync.Mutex
	items []T
	ready chan struct{}
}

func newQueue[T any]() *queue[T] { return &queue[T]{ready: make(chan struct{}, 1)} }

func (q *queue[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns the waiting items, oldest first.
func (q *queue[T]) take() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}
