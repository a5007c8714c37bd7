package engine

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/batkube/batkube/pkg/timerq"
)

// Options are the Batsim options the simulation mirrors.
type Options struct {
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

// minWait is the shortest wait of a CALL_ME_LATER: Batsim's waiter sleeps
// at least 10 µs.
const minWait = 10 * time.Microsecond

// phase is where the request/reply cycle stands.
type phase int

const (
	phaseStart      phase = iota // nothing sent yet
	phaseDeciding                // a message was sent; waiting for Apply
	phaseSimulating              // decisions applied; waiting for Next
	phaseEnding                  // SIMULATION_ENDS sent; waiting for its Apply
	phaseOver
)

// host is the state of a compute resource.
type host struct {
	jobs []int32 // the jobs running on it
	// Batsim's machine-state accounting: the time spent idle or computing,
	// up to the last change of state.
	computing     bool
	last          time.Duration
	idle, working time.Duration
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

	order        []int32 // static jobs by submission
	nextSubmit   int
	nextSubAt    time.Duration // date of order[nextSubmit]
	noMoreStatic bool

	now       time.Duration
	timers    timerq.Queue[*run] // a nil run is a CALL_ME_LATER
	calls     int                // pending CALL_ME_LATERs
	hosts     []host
	sharer    *sharer
	freeRuns  []*run
	freeActs  []*activity
	scratch   []float64
	outbox    []Event
	ended     []int32 // jobs finished or rejected since the last message
	phase     phase
	regDone   bool
	err       error
	nbRunning int
	computing int // hosts running at least one job
	nbSubmit  int // submitted (static and dynamic)
	nbDone    int // finished or rejected

	stats  stats
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
		hosts:    make([]host, len(p.Resources)),
		sharer:   newSharer(p.Resources, opts.Sharing),
	}
	type key struct {
		at  time.Duration
		wl  int
		id  string
		idx int32
	}
	total := 0
	for _, w := range workloads {
		if w != nil {
			total += len(w.Jobs)
		}
	}
	e.index = make(map[string]int32, total)
	e.jobs = make([]*Job, 0, total)
	keys := make([]key, 0, total)
	for wi, w := range workloads {
		if err := e.addWorkload(w); err != nil {
			return nil, err
		}
		ws := e.wstate[w.Name]
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
			idx := int32(len(e.jobs))
			e.index[j.ID] = idx
			e.jobs = append(e.jobs, j)
			at, _ := toDuration(j.Subtime)
			keys = append(keys, key{at, wi, j.ID, idx})
		}
	}
	sort.Slice(keys, func(a, b int) bool {
		ka, kb := keys[a], keys[b]
		if ka.at != kb.at {
			return ka.at < kb.at
		}
		if ka.wl != kb.wl {
			return ka.wl < kb.wl
		}
		return ka.id < kb.id
	})
	e.order = make([]int32, len(keys))
	for i, k := range keys {
		e.order[i] = k.idx
	}
	e.updateNextSubmission()
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

func checkPlatform(p *Platform) error {
	for i, r := range p.Resources {
		if r.ID != i {
			return fmt.Errorf("engine: platform: resource %q has id %d, want %d", r.Name, r.ID, i)
		}
		if !(r.Speed > 0) || math.IsInf(r.Speed, 0) || r.Cores < 1 {
			return fmt.Errorf("engine: platform: resource %q: want a positive speed and core count", r.Name)
		}
	}
	return nil
}

func (e *Engine) addWorkload(w *Workload) error {
	if w == nil || w.Name == "" || strings.Contains(w.Name, "!") {
		return errors.New("engine: a workload needs a name without '!'")
	}
	if e.wstate[w.Name] != nil {
		return fmt.Errorf("engine: two workloads are named %q", w.Name)
	}
	profiles := make(map[string]*Profile, len(w.Profiles))
	for name, p := range w.Profiles {
		if p == nil || p.Name != name {
			return fmt.Errorf("engine: workload %q: profile %q is nil or misnamed", w.Name, name)
		}
		profiles[name] = p
	}
	if err := checkComposed(profiles); err != nil {
		return fmt.Errorf("engine: workload %q: %w", w.Name, err)
	}
	e.wstate[w.Name] = &workloadState{w: w, profiles: profiles}
	return nil
}

// checkJob checks a job built in Go as ParseJob would have.
func checkJob(j *Job, workload string, profiles map[string]*Profile) error {
	if j == nil {
		return errors.New("a job is nil")
	}
	if j.Workload != workload || j.Name == "" || strings.Contains(j.Name, "!") ||
		len(j.ID) != len(workload)+1+len(j.Name) || j.ID[:len(workload)] != workload || j.ID[len(workload)+1:] != j.Name {
		return fmt.Errorf("job %q: want Workload %q and ID %q", j.ID, workload, workload+"!"+j.Name)
	}
	if !(j.Subtime >= 0 && j.Subtime <= maxSeconds) {
		return fmt.Errorf("job %q: subtime is %g, want a date >= 0", j.Name, j.Subtime)
	}
	if j.Res < 0 {
		return fmt.Errorf("job %q: res is %d, want >= 0", j.Name, j.Res)
	}
	if j.Walltime != -1 && !(j.Walltime > 0 && j.Walltime <= maxSeconds) {
		return fmt.Errorf("job %q: walltime is %g, want -1 (none) or a positive number of seconds", j.Name, j.Walltime)
	}
	return checkJobProfile(j, profiles)
}

// toDuration turns simulated seconds into the engine's nanoseconds.
func toDuration(s float64) (time.Duration, error) {
	if math.IsNaN(s) || math.Abs(s) > maxSeconds {
		return 0, fmt.Errorf("%g is not a date the engine can represent", s)
	}
	return time.Duration(math.Round(s * 1e9)), nil
}

// durationOf is toDuration for computed durations: never negative, and
// saturating instead of overflowing.
func durationOf(s float64) time.Duration {
	switch {
	case !(s > 0):
		return 0
	case s >= maxSeconds:
		return time.Duration(maxSeconds * 1e9)
	}
	return time.Duration(math.Round(s * 1e9))
}

// Now returns the current simulated time, in seconds.
func (e *Engine) Now() float64 { return e.now.Seconds() }

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
	for len(e.outbox) == 0 {
		if e.finished() {
			e.outbox = append(e.outbox, SimulationEnds{Timestamp: e.now.Seconds()})
			e.phase = phaseEnding
			break
		}
		at, ok := e.nextInstant()
		if !ok {
			return Message{}, e.fail(e.stuck())
		}
		e.advanceTo(at)
		if e.err != nil {
			return Message{}, e.err
		}
	}
	msg := Message{Now: e.now.Seconds(), Events: e.outbox}
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
	reply, err := toDuration(now)
	if err != nil {
		return e.fail(fmt.Errorf("engine: reply now: %w", err))
	}
	if reply < e.now {
		return e.fail(fmt.Errorf("engine: the reply's now (%g) is before the request's (%g)", now, e.now.Seconds()))
	}
	for i, d := range decisions {
		if d == nil {
			return e.fail(decisionError(e.now.Seconds(), i, nil, errors.New("the decision is nil")))
		}
		ts := d.Time()
		at, err := toDuration(ts)
		if err != nil {
			return e.fail(decisionError(e.now.Seconds(), i, d, fmt.Errorf("its timestamp: %w", err)))
		}
		if ts > now {
			return e.fail(decisionError(e.now.Seconds(), i, d, fmt.Errorf("it is stamped %g, after the reply's now (%g)", ts, now)))
		}
		e.advanceTo(at)
		if e.err != nil {
			return e.err
		}
		if err := e.apply(d); err != nil {
			return e.fail(decisionError(e.now.Seconds(), i, d, err))
		}
		if e.err != nil {
			return e.err
		}
	}
	e.advanceTo(reply)
	if e.err != nil {
		return e.err
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
		(!e.opts.DynamicJobs || e.regDone)
}

func (e *Engine) stuck() error {
	waiting := e.nbSubmit - e.nbDone - e.nbRunning
	reg := ""
	if e.opts.DynamicJobs && !e.regDone {
		reg = ", and NOTIFY registration_finished was not received"
	}
	return fmt.Errorf("engine: the simulation is stuck at t=%g: %d job(s) wait for EXECUTE_JOB or REJECT_JOB, no job runs, no job is left to submit and no CALL_ME_LATER is pending%s",
		e.now.Seconds(), waiting, reg)
}

// nextSubmission returns the instant of the next static submission (or of
// the no_more_static_job_to_submit notification, for workloads without jobs).
func (e *Engine) nextSubmission() (time.Duration, bool) {
	if e.nextSubmit < len(e.order) {
		return e.nextSubAt, true
	}
	return e.now, !e.noMoreStatic
}

// updateNextSubmission caches the date of the next static submission.
func (e *Engine) updateNextSubmission() {
	if e.nextSubmit < len(e.order) {
		e.nextSubAt, _ = toDuration(e.jobs[e.order[e.nextSubmit]].Subtime)
	}
}

// nextInstant returns the instant of the next thing that will happen.
func (e *Engine) nextInstant() (time.Duration, bool) {
	at, ok := e.nextSubmission()
	if t := e.timers.Peek(); t != nil && (!ok || t.At() <= at) {
		return t.At(), true
	}
	return at, ok
}

// advanceTo runs everything that happens up to t, in order, then sets the
// clock to t (if it was earlier).
func (e *Engine) advanceTo(t time.Duration) {
	for e.err == nil {
		sub, hasSub := e.nextSubmission()
		tm := e.timers.Peek()
		switch {
		case tm != nil && tm.At() <= t && (!hasSub || tm.At() <= sub):
			e.now = max(e.now, tm.At())
			e.timers.Pop()
			e.fire(tm.Value)
		case hasSub && sub <= t:
			e.now = max(e.now, sub)
			e.submitNext()
		default:
			e.now = max(e.now, t)
			return
		}
	}
}

// submitNext submits the next static job.
func (e *Engine) submitNext() {
	if e.nextSubmit < len(e.order) {
		idx := e.order[e.nextSubmit]
		e.nextSubmit++
		e.updateNextSubmission()
		e.submit(idx)
	}
	if e.nextSubmit == len(e.order) && !e.noMoreStatic {
		e.noMoreStatic = true
		e.outbox = append(e.outbox, Notification{Timestamp: e.now.Seconds(), Kind: NoMoreStaticJobToSubmit})
	}
}

func (e *Engine) submit(idx int32) {
	j := e.jobs[idx]
	e.status[idx] = statusSubmitted
	e.nbSubmit++
	e.outbox = append(e.outbox, JobSubmitted{
		Timestamp: e.now.Seconds(),
		Job:       j,
		Profile:   e.wstate[j.Workload].profiles[j.Profile],
	})
}

// fire handles a timer that fell due.
// fire handles a timer that fell due: a run's (r), or a CALL_ME_LATER's
// (r == nil).
func (e *Engine) fire(r *run) {
	if r == nil {
		e.calls--
		e.outbox = append(e.outbox, RequestedCall{Timestamp: e.now.Seconds()})
		return
	}
	e.onRunTimer(r)
}

// apply applies one decision at the current time.
func (e *Engine) apply(d Decision) error {
	switch d := d.(type) {
	case ExecuteJob:
		return e.execute(d)
	case RejectJob:
		return e.reject(d)
	case KillJob:
		return e.kill(d)
	case CallMeLater:
		return e.callMeLater(d)
	case RegisterJob:
		return e.registerJob(d)
	case RegisterProfile:
		return e.registerProfile(d)
	case Notify:
		return e.notify(d)
	case SetJobMetadata:
		return e.setMetadata(d)
	}
	return fmt.Errorf("unknown decision %T", d)
}

// lookup finds a job by id, named by field in the decision.
func (e *Engine) lookup(field, id string) (int32, error) {
	idx, ok := e.index[id]
	if !ok {
		return 0, inField(field, "job %q does not exist", id)
	}
	if s := e.status[idx]; s&forgotten != 0 {
		return 0, inField(field, "job %q is %s and its end was reported in an earlier message: Batsim 4.2.1 drops a job once the message after its end is sent, and aborts on any later mention of it",
			id, s&statusMask)
	}
	return idx, nil
}

func (e *Engine) reject(d RejectJob) error {
	idx, err := e.lookup("job_id", d.JobID)
	if err != nil {
		return err
	}
	if s := e.status[idx] & statusMask; s != statusSubmitted {
		return inField("job_id", "job %q is %s: only a job waiting to start can be rejected", d.JobID, s)
	}
	e.status[idx] = statusRejected | e.status[idx]&killAsked
	e.ended = append(e.ended, idx)
	e.nbDone++
	e.record(idx, Rejected, 0, 0, nil)
	return nil
}

func (e *Engine) callMeLater(d CallMeLater) error {
	if !(d.When > e.now.Seconds()) {
		return inField("timestamp", "asked to be called at %g, which is not after now (%g)", d.When, e.now.Seconds())
	}
	at, err := toDuration(d.When)
	if err != nil {
		return &fieldError{field: "timestamp", err: err}
	}
	// Batsim's waiter sleeps at least 10 µs (a shorter sleep may not move
	// SimGrid's clock).
	e.timers.Schedule(&timerq.Item[*run]{}, max(at, e.now+minWait))
	e.calls++
	return nil
}

func (e *Engine) notify(d Notify) error {
	switch d.Kind {
	case RegistrationFinished:
		e.regDone = true
	case ContinueRegistration:
		e.regDone = false
	default:
		return inField("type", "unknown NOTIFY type %q (want %s or %s)", d.Kind, RegistrationFinished, ContinueRegistration)
	}
	return nil
}

func (e *Engine) setMetadata(d SetJobMetadata) error {
	idx, err := e.lookup("job_id", d.JobID)
	if err != nil {
		return err
	}
	if s := e.status[idx] & statusMask; s.finished() || s == statusRejected {
		// Batsim sets it, but the job's row is already written.
		return nil
	}
	e.meta[idx] = d.Metadata
	return nil
}

func (e *Engine) checkRegistration() error {
	if !e.opts.DynamicJobs {
		return errors.New("dynamic jobs are disabled (Batsim's --enable-dynamic-jobs)")
	}
	if e.regDone {
		return errors.New("registration_finished was already received")
	}
	return nil
}

func (e *Engine) registerProfile(d RegisterProfile) error {
	if err := e.checkRegistration(); err != nil {
		return err
	}
	if d.Workload == "" || strings.Contains(d.Workload, "!") {
		return inField("workload_name", "workload name %q: want a non-empty name without '!'", d.Workload)
	}
	ws := e.wstate[d.Workload]
	if ws != nil && ws.profiles[d.Name] != nil {
		return inField("profile_name", "workload %q already has a profile %q", d.Workload, d.Name)
	}
	p, err := ParseProfile(d.Name, d.Profile)
	if err != nil {
		return within("profile", fmt.Errorf("workload %q: %w", d.Workload, err))
	}
	for _, step := range p.Seq {
		if ws == nil || ws.profiles[step] == nil {
			return inField("profile.seq", "workload %q: profile %q: step %q does not exist (register it first)", d.Workload, d.Name, step)
		}
	}
	if ws == nil {
		ws = &workloadState{w: &Workload{Name: d.Workload, Path: "dynamic", Profiles: map[string]*Profile{}}, profiles: map[string]*Profile{}}
		e.wstate[d.Workload] = ws
	}
	ws.profiles[d.Name] = p
	return nil
}

func (e *Engine) registerJob(d RegisterJob) error {
	if err := e.checkRegistration(); err != nil {
		return err
	}
	wname, _, ok := strings.Cut(d.JobID, "!")
	if !ok {
		return inField("job_id", "job id %q: want \"workload!id\"", d.JobID)
	}
	ws := e.wstate[wname]
	if ws == nil {
		return inField("job_id", "job %q: workload %q does not exist (register a profile in it first)", d.JobID, wname)
	}
	if _, exists := e.index[d.JobID]; exists {
		return inField("job_id", "job %q already exists", d.JobID)
	}
	j, err := ParseJob(wname, d.Job)
	if err != nil {
		return within("job", err)
	}
	if j.ID != d.JobID {
		return inField("job.id", "job %q: its JSON has id %q", d.JobID, j.ID)
	}
	if err := checkJobProfile(j, ws.profiles); err != nil {
		return within("job", fmt.Errorf("workload %q: %w", wname, err))
	}
	if len(e.jobs) >= math.MaxInt32 {
		return errors.New("too many jobs")
	}
	idx := int32(len(e.jobs))
	e.jobs = append(e.jobs, j)
	e.status = append(e.status, statusNotSubmitted)
	e.runs = append(e.runs, nil)
	e.index[j.ID] = idx
	if e.opts.AcknowledgeDynamicJobs {
		e.submit(idx)
		return nil
	}
	e.status[idx] = statusSubmitted
	e.nbSubmit++
	return nil
}
