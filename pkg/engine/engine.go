package engine

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/batkube/batkube/pkg/engine/internal/ld"
	"github.com/batkube/batkube/pkg/simtime/timerq"
)

// Options are the Batsim options the simulation mirrors.
type Options struct {
	// NoNetwork makes every message take no time: a job's end is heard of
	// at its date, whatever the route from its first host to the master
	// host (by default it is heard of that route's message time later, as
	// in Batsim: see Resource.Notice).
	NoNetwork bool
	// ComputeSharing lets several jobs run on one host at a time (Batsim's
	// --enable-compute-sharing).
	ComputeSharing bool
	// Sharing is how shared hosts split their power (see SharingModel).
	Sharing SharingModel
	// DynamicJobs accepts REGISTER_JOB and REGISTER_PROFILE (Batsim's
	// --enable-dynamic-jobs); the simulation then ends only after NOTIFY
	// registration_finished.
	DynamicJobs bool
	// AcknowledgeDynamicJobs answers each REGISTER_JOB with a JOB_SUBMITTED
	// (Batsim's --acknowledge-dynamic-jobs).
	AcknowledgeDynamicJobs bool
	// JobsOutput, if not nil, receives Batsim's _jobs.csv: the header at New,
	// then one row per job when it finishes or is rejected (one Write each:
	// wrap a file in a bufio.Writer, and flush it at the end).
	JobsOutput io.Writer
	// Events are the external events files to simulate (Batsim's
	// --events, in order): machines becoming unavailable or available
	// again, generic events forwarded to the decision process.
	Events []*EventList
	// MachineStatesOutput, if not nil, receives Batsim's
	// _machine_states.csv: the header at New, then one row each time a job
	// starts and each time one ends, after its hosts changed state (see
	// WriteMachineStates for the format; one Write each, as JobsOutput).
	MachineStatesOutput io.Writer
}

// jobStatus is where a job stands; killAsked and forgotten may be or'ed in.
type jobStatus uint8

const (
	statusNotSubmitted jobStatus = iota
	statusSubmitted
	statusRunning
	statusSucceeded
	statusFailed
	statusWalltime
	statusKilled
	statusRejected

	killAsked jobStatus = 0x80
	// forgotten marks a finished or rejected job once the message after
	// its end has been sent: Batsim 4.2.1 then drops it from memory, and
	// aborts on any later decision naming it.
	forgotten  jobStatus = 0x40
	statusMask jobStatus = 0x3f
)

func (s jobStatus) String() string {
	switch s & statusMask {
	case statusNotSubmitted:
		return "not submitted yet"
	case statusSubmitted:
		return "waiting to start"
	case statusRunning:
		return "running"
	case statusSucceeded:
		return "finished (" + string(CompletedSuccessfully) + ")"
	case statusFailed:
		return "finished (" + string(CompletedFailed) + ")"
	case statusWalltime:
		return "finished (" + string(CompletedWalltimeReached) + ")"
	case statusKilled:
		return "finished (" + string(CompletedKilled) + ")"
	case statusRejected:
		return "rejected"
	}
	return "unknown"
}

func (s jobStatus) finished() bool {
	s &= statusMask
	return s >= statusSucceeded && s <= statusKilled
}

func statusOf(state JobState) jobStatus {
	switch state {
	case CompletedSuccessfully:
		return statusSucceeded
	case CompletedFailed:
		return statusFailed
	case CompletedWalltimeReached:
		return statusWalltime
	case CompletedKilled:
		return statusKilled
	}
	return statusRejected
}

// minWait is the shortest wait of a CALL_ME_LATER, in seconds: Batsim's
// waiter sleeps at least 10 µs.
const minWait = 1e-5

// phase is where the request/reply cycle stands.
type phase int

const (
	phaseStart      phase = iota // nothing sent yet
	phaseDeciding                // a message was sent; waiting for Apply
	phaseSimulating              // decisions applied; waiting for Next
	phaseEnding                  // SIMULATION_ENDS sent; waiting for its Apply
	phaseOver
)

// machineState is the state of a machine, as Batsim tracks it (no power
// states: a machine is never sleeping nor switching).
type machineState uint8

const (
	machineIdle machineState = iota
	machineComputing
	machineUnavailable
)

// host is the state of a machine (a compute resource, or a storage one past
// them, which runs no job).
type host struct {
	jobs []int32 // the jobs running on it
	// Batsim's machine-state accounting: the time spent in each state, up
	// to the last change of state, summed in long double as Batsim does.
	state                      machineState
	last                       float64
	idle, working, unavailable ld.Sum
}

// workloadState is a workload as the simulation knows it (dynamic profiles
// and workloads are added here, not to the caller's Workload).
type workloadState struct {
	w        *Workload
	profiles map[string]*Profile
}

// Engine is a running simulation. It is not safe for concurrent use.
type Engine struct {
	opts      Options
	platform  *Platform
	workloads []*Workload // static ones, for SIMULATION_BEGINS
	wstate    map[string]*workloadState

	// jobs, by index; status and runs are parallel to jobs.
	jobs   []*Job
	status []jobStatus
	runs   []*run
	index  map[string]int32
	meta   map[int32]string // metadata of unfinished jobs

	submitters          []*submitter // one per static workload
	submittersDone      int
	noMoreStatic        bool
	eventSubmitters     []*submitter // one per events list
	eventSubmittersDone int

	// now is the simulated time in seconds, SimGrid's clock; vt is the
	// virtual time the timers are due at (see clock.go).
	now           float64
	vt            timerq.Time
	timers        timerq.Queue[*timer] // due at a virtual time
	stepped       []*timer             // long sleeps, decremented at each step
	few           []*timer             // the submitters' other sleeps
	born          uint64               // timers created so far
	due, notDue   []*timer             // scratch of step
	target        timer                // Batsim's request-reply actor sleeping until a decision's date
	targetReached bool
	calls         int // pending CALL_ME_LATERs
	hosts         []host
	sharer        *sharer
	freeRuns      []*run
	freeActs      []*activity
	outbox        []Event
	// Batsim's server (server.go): whether it is getting a message, and
	// which, the messages waiting for it, the timer of the one it gets,
	// and the killers' messages to put after the request-reply actor's
	// next one.
	receiving bool
	current   message
	inbox     []message
	recvTimer timer
	afterPut  []message
	// posted numbers the messages put, handled is the last one handled,
	// decisionErr the error of the last decision applied
	posted, handled uint64
	decisionErr     error
	crossing        bool // the message's byte is crossing (its latency is over)
	// routes between resources, computed once (routing.go); scratch of
	// communications and useLinks (bandwidth.go)
	routes    map[[2]int]hostRoute
	linkBytes map[int]float64
	linkKeys  []int
	// masterMsg is the time of a message between two actors of the master
	// host, if it is noticeable (server.go), none otherwise.
	masterMsg MessageTime
	// round counts the steps (SimGrid\'s scheduling rounds: server.go)
	round     uint64
	ended     []int32 // jobs finished or rejected since the last message
	phase     phase
	regDone   bool
	err       error
	nbRunning int
	// The machines in each state, as Batsim counts them for
	// _machine_states.csv: all compute resources idle at first, storage
	// resources in no state until they change.
	nbIdle, nbComputing int
	nbSubmit            int // submitted (static and dynamic)
	nbDone              int // finished or rejected

	stats  stats
	times  jobTimes // scratch of record
	rowBuf []byte
}

// New prepares a simulation of the workloads on the platform. The platform
// and workloads are read, not changed, and must not be changed while the
// engine runs.
func New(p *Platform, workloads []*Workload, opts Options) (*Engine, error) {
	if p == nil {
		return nil, errors.New("engine: no platform")
	}
	if err := checkPlatform(p); err != nil {
		return nil, err
	}
	e := &Engine{
		opts:     opts,
		platform: p,
		wstate:   map[string]*workloadState{},
		meta:     map[int32]string{},
		hosts:    make([]host, len(p.Resources)+len(p.Storage)),
		nbIdle:   len(p.Resources),
		sharer:   newSharer(p.Resources, opts.Sharing),
	}
	total := 0
	for _, w := range workloads {
		if w != nil {
			total += len(w.Jobs)
		}
	}
	e.index = make(map[string]int32, total)
	e.jobs = make([]*Job, 0, total)
	e.target.kind = timerTarget
	e.recvTimer.kind = timerReceive
	if !opts.NoNetwork {
		e.masterMsg = p.MasterMessage
	}
	for wi, w := range workloads {
		if err := e.addWorkload(w); err != nil {
			return nil, err
		}
		ws := e.wstate[w.Name]
		first := int32(len(e.jobs))
		for _, j := range w.Jobs {
			if err := checkJob(j, w.Name, ws.profiles); err != nil {
				return nil, fmt.Errorf("engine: workload %q: %w", w.Name, err)
			}
			if _, dup := e.index[j.ID]; dup {
				return nil, fmt.Errorf("engine: workload %q: job %q is declared twice", w.Name, j.Name)
			}
			if len(e.jobs) >= math.MaxInt32 {
				return nil, errors.New("engine: too many jobs")
			}
			e.index[j.ID] = int32(len(e.jobs))
			e.jobs = append(e.jobs, j)
		}
		s := e.newJobSubmitter(wi, e.jobs[first:], first)
		e.submitters = append(e.submitters, s)
		e.startSubmitter(s)
	}
	if err := e.checkEvents(opts.Events); err != nil {
		return nil, err
	}
	for i, l := range opts.Events {
		s := e.newEventSubmitter(i, l)
		e.eventSubmitters = append(e.eventSubmitters, s)
		e.startSubmitter(s)
	}
	// Batsim notifies no_more_static_job_to_submit when the last of its
	// workloads' submitters is done: never, when it has no workload.
	e.noMoreStatic = len(workloads) == 0
	e.status = make([]jobStatus, len(e.jobs))
	e.runs = make([]*run, len(e.jobs))
	e.workloads = append([]*Workload(nil), workloads...)
	if opts.JobsOutput != nil {
		if _, err := io.WriteString(opts.JobsOutput, jobsHeader); err != nil {
			return nil, fmt.Errorf("engine: jobs output: %w", err)
		}
	}
	if opts.MachineStatesOutput != nil {
		if _, err := io.WriteString(opts.MachineStatesOutput, machineStatesHeader); err != nil {
			return nil, fmt.Errorf("engine: machine states output: %w", err)
		}
	}
	return e, nil
}

// Now returns the current simulated time, in seconds.
func (e *Engine) Now() float64 { return e.now }

// Over reports whether the simulation has ended and its SIMULATION_ENDS has
// been answered.
func (e *Engine) Over() bool { return e.phase == phaseOver }

// Next runs the simulation up to the next instant something must be told to
// the decision process, and returns that message: SimulationBegins alone
// first, SimulationEnds alone last. Every Next must be followed by an Apply.
// It fails when the simulation is stuck: jobs wait for a decision and
// nothing else can happen.
func (e *Engine) Next() (Message, error) {
	if e.err != nil {
		return Message{}, e.err
	}
	switch e.phase {
	case phaseStart:
		e.phase = phaseDeciding
		return Message{Events: []Event{SimulationBegins{
			Platform:               e.platform,
			Workloads:              e.workloads,
			ComputeSharing:         e.opts.ComputeSharing,
			DynamicJobs:            e.opts.DynamicJobs,
			AcknowledgeDynamicJobs: e.opts.AcknowledgeDynamicJobs,
		}}}, nil
	case phaseDeciding, phaseEnding:
		return Message{}, errors.New("engine: Next called twice: Apply the decisions of the previous message first")
	case phaseOver:
		return Message{}, errors.New("engine: the simulation is over")
	}
	for len(e.outbox) == 0 || !e.serverSends() {
		if len(e.outbox) == 0 && !e.busy() && e.finished() {
			e.outbox = append(e.outbox, SimulationEnds{Timestamp: e.now})
			e.phase = phaseEnding
			break
		}
		d, ok := e.nextStep()
		if !ok {
			return Message{}, e.fail(e.stuck())
		}
		e.step(d)
		if e.err != nil {
			return Message{}, e.err
		}
	}
	msg := Message{Now: e.now, Events: e.outbox}
	e.outbox = nil
	for _, idx := range e.ended {
		e.status[idx] |= forgotten
	}
	e.ended = e.ended[:0]
	if e.phase != phaseEnding {
		e.phase = phaseDeciding
	}
	return msg, nil
}

// Apply applies the decision process's reply to the last message: the
// decisions, each at its timestamp (or at the request's now if it is
// earlier), then the simulation runs on until now, the reply's time, which
// must not be before the request's now. An error ends the simulation (real
// Batsim aborts).
func (e *Engine) Apply(now float64, decisions []Decision) error {
	if e.err != nil {
		return e.err
	}
	switch e.phase {
	case phaseStart, phaseSimulating:
		return errors.New("engine: Apply called without a message to answer: call Next first")
	case phaseOver:
		return errors.New("engine: the simulation is over")
	case phaseEnding:
		if len(decisions) > 0 {
			return e.fail(fmt.Errorf("engine: %d decision(s) in the reply to SIMULATION_ENDS", len(decisions)))
		}
		e.phase = phaseOver
		return nil
	}
	if !finite(now) {
		return e.fail(fmt.Errorf("engine: the reply's now is %g, want a finite date", now))
	}
	if now < e.now {
		return e.fail(fmt.Errorf("engine: the reply's now (%g) is before the request's (%g)", now, e.now))
	}
	for i, d := range decisions {
		if d == nil {
			return e.fail(decisionError(e.now, i, nil, errors.New("the decision is nil")))
		}
		ts := d.Time()
		if !finite(ts) {
			return e.fail(decisionError(e.now, i, d, fmt.Errorf("its timestamp is %g, want a finite date", ts)))
		}
		if ts > now {
			return e.fail(decisionError(e.now, i, d, fmt.Errorf("it is stamped %g, after the reply's now (%g)", ts, now)))
		}
		if ts > e.now {
			e.flushKillers()
		}
		e.advanceUntil(ts)
		if e.err != nil {
			return e.err
		}
		// The request-reply actor sends the decision to the server,
		// which applies it when it gets it (server.go).
		var err error
		if e.masterMsg.takesTime() || e.busy() {
			err = e.sendDecision(d)
			if e.err != nil {
				return e.err
			}
		} else {
			err = d.applyTo(e)
		}
		if err != nil {
			return e.fail(decisionError(e.now, i, d, err))
		}
		if e.err != nil {
			return e.err
		}
	}
	if now > e.now {
		e.flushKillers()
	}
	e.advanceUntil(now)
	if e.err != nil {
		return e.err
	}
	if e.masterMsg.takesTime() {
		// SCHED_READY: the server tells the decision process nothing
		// before it has got it.
		if !e.send(message{cost: e.masterMsg, handle: func() {}}) {
			return e.err
		}
	}
	e.phase = phaseSimulating
	return nil
}

func (e *Engine) fail(err error) error {
	if e.err == nil {
		e.err = err
	}
	return e.err
}

func (e *Engine) finished() bool {
	return e.noMoreStatic && e.nbDone == e.nbSubmit && e.nbRunning == 0 && e.calls == 0 &&
		e.eventSubmittersDone == len(e.eventSubmitters) && (!e.opts.DynamicJobs || e.regDone)
}

func (e *Engine) stuck() error {
	waiting := e.nbSubmit - e.nbDone - e.nbRunning
	reg := ""
	if e.opts.DynamicJobs && !e.regDone {
		reg = ", and NOTIFY registration_finished was not received"
	}
	return fmt.Errorf("engine: the simulation is stuck at t=%g: %d job(s) wait for EXECUTE_JOB or REJECT_JOB, no job runs, no job is left to submit and no CALL_ME_LATER is pending%s",
		e.now, waiting, reg)
}

func (e *Engine) submit(idx int32) {
	j := e.jobs[idx]
	e.status[idx] = statusSubmitted
	e.nbSubmit++
	e.outbox = append(e.outbox, JobSubmitted{
		Timestamp: e.now,
		Job:       j,
		Profile:   e.wstate[j.Workload].profiles[j.Profile],
	})
}
