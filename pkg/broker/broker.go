// Package broker runs a simulation: it answers Batsim (or the embedded
// engine) over the Batsim protocol, turns its events into Kubernetes objects
// in the store, lets the scheduler react in real time, and turns what the
// scheduler did (bindings, deletions) back into Batsim decisions.
package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/simclock"
	"github.com/batkube/batkube/pkg/store"
	"github.com/batkube/batkube/pkg/translate"
)

// Options configure a Broker. Zero durations take the documented defaults.
type Options struct {
	// Clock is the simulated clock the API server stamps objects with.
	Clock *simclock.Clock
	// Nodes and Pods are the translation defaults.
	Nodes translate.NodeOptions
	Pods  translate.PodOptions
	// Quiet is how long the API must be silent, while pods are pending,
	// before the scheduler is deemed settled (default 50ms).
	Quiet time.Duration
	// MaxSettle bounds the wall time the scheduler gets per step (default 2s).
	MaxSettle time.Duration
	// BackoffMin and BackoffMax bound the simulated delay of the wake-ups
	// asked for while pods stay pending (defaults 1s and 60s).
	BackoffMin, BackoffMax time.Duration
	// PendingTimeout is the simulated time after which jobs still pending,
	// when nothing else can happen, are rejected (default 1h).
	PendingTimeout time.Duration
	// SchedulerTimeout is how long pods may stay pending with no client
	// watching pods before the scheduler is reported dead (default 10s).
	SchedulerTimeout time.Duration
	// StartTimeout is how long pods may stay pending before a scheduler
	// first acts on one (binds it or marks it unschedulable), after which
	// the run fails (default 1m). Until then the broker does not take
	// silence for a settled scheduler: a scheduler that is starting, or
	// waiting to win its leader election, is not done deciding.
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
	// Progress, if set, is called after every step.
	Progress func(Progress)
	Logger   *slog.Logger
}

// DelayAnnotation sets the simulated duration (seconds) of a pod created
// through the API during a simulation.
const DelayAnnotation = "batkube.io/delay"

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
}

// Broker is the decision process of a simulation.
type Broker struct {
	opts  Options
	log   *slog.Logger
	state *state
	// terminating receives the pods the API server marks terminating.
	terminating chan *corev1.Pod
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

var podsGR = schema.GroupResource{Resource: "pods"}

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
	def(&opts.MaxSettle, 2*time.Second)
	def(&opts.BackoffMin, time.Second)
	def(&opts.BackoffMax, time.Minute)
	def(&opts.PendingTimeout, time.Hour)
	def(&opts.SchedulerTimeout, 10*time.Second)
	def(&opts.StartTimeout, time.Minute)
	def(&opts.DynamicJobDelay, time.Minute)
	if opts.DecisionTimeScale <= 0 {
		opts.DecisionTimeScale = 1
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Broker{opts: opts, log: opts.Logger, state: newState(), terminating: make(chan *corev1.Pod, 1024)}, nil
}

// PodTerminating implements apiserver.Terminator: the deletion of a bound
// pod becomes a KILL_JOB (or a REJECT_JOB if its job has not started).
func (b *Broker) PodTerminating(pod *corev1.Pod) {
	b.terminating <- pod
}

// Run answers the Batsim peer on conn until the simulation ends (nil), ctx
// is cancelled, or something goes wrong: the error says what, and the peer
// has been answered whenever possible so that it can write its outputs.
func (b *Broker) Run(ctx context.Context, conn *batsim.Conn, api *apiserver.Server, st *store.Store) error {
	watcher, err := st.Watch(ctx, podsGR, store.WatchOptions{ResourceVersion: st.CurrentRV()})
	if err != nil {
		return fmt.Errorf("broker: watching pods: %w", err)
	}
	defer watcher.Stop()
	s := &step{Broker: b, pods: watcher, api: api, store: st}
	for {
		msg, err := conn.Recv(ctx)
		if err != nil {
			if errors.Is(err, batsim.ErrPeerDisconnected) {
				return fmt.Errorf("broker: Batsim disconnected before the end of the simulation (did it crash? see its log): %w", err)
			}
			return fmt.Errorf("broker: receiving from Batsim: %w", err)
		}
		reply, done, err := s.handle(ctx, msg)
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
		p := b.state.progress(reply.Now, s.steps)
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
