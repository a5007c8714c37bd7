package enginerun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/engine"
)

// Summary is the outcome of a run. Simulated times are float64 seconds (as
// Batsim's, up to 1e17 s and beyond); wall-clock times are time.Durations.
type Summary struct {
	// Jobs counts the jobs of the simulation: static ones and the dynamic
	// ones registered.
	Jobs int
	// Succeeded, Failed (COMPLETED_FAILED: a non-zero return code),
	// WalltimeReached, Killed and Rejected count the jobs by final state.
	Succeeded, Failed, WalltimeReached, Killed, Rejected int
	// Makespan is the completion time of the last job.
	Makespan float64
	// MeanWaitingTime is _schedule.csv's mean_waiting_time: the waiting
	// times of the finished jobs summed, over all finished or rejected jobs.
	MeanWaitingTime float64
	// SimulatedTime is the simulated time when the run ended.
	SimulatedTime float64
	// Messages counts the request/reply exchanges with the decision process.
	Messages int
	// SchedulingTime is the wall-clock time spent waiting for the decision
	// process's replies; WallTime that of the whole run.
	SchedulingTime, WallTime time.Duration
	// NetworkNotes say what of the platform's network the engine did not
	// model (engine.Platform.NetworkNotes).
	NetworkNotes []string
}

// SpeedUp is the simulated time over the wall-clock time of the run.
func (s Summary) SpeedUp() float64 {
	if s.WallTime <= 0 {
		return 0
	}
	return s.SimulatedTime / s.WallTime.Seconds()
}

// Finished counts the jobs that finished or were rejected.
func (s Summary) Finished() int {
	return s.Succeeded + s.Failed + s.WalltimeReached + s.Killed + s.Rejected
}

// Run plays Batsim's side of the protocol: it loads the platform and the
// workloads, connects to the decision process at cfg.Endpoint, and runs the
// simulation to its end (SIMULATION_ENDS sent and answered), writing
// <prefix>_jobs.csv as jobs finish and <prefix>_schedule.csv at the end
// (and <prefix>_machine_states.csv as jobs start and end, unless
// cfg.DisableMachineStates).
//
// Any error ends the run: a file that cannot be read, a reply that breaks
// the protocol (the error wraps a *batsim.MessageError naming the event and
// its field), a decision the simulation cannot apply, where real Batsim
// aborts (it wraps an *engine.DecisionError naming the event and its
// field), a decision process that disconnects (the error wraps
// batsim.ErrPeerDisconnected) or that does not answer within cfg.Timeout
// (context.DeadlineExceeded), ctx being done. The output files are still
// flushed and closed, _schedule.csv holding the jobs finished so far, and
// the summary returned is that of the run so far.
//
// Two leniencies mirror real Batsim or spare a needless failure: a reply
// whose now is before the request's is taken as sent at the request's now,
// and a decision process that closes its socket instead of answering
// SIMULATION_ENDS ends the run normally.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	start := time.Now()
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Summary{}, err
	}
	platform, err := engine.ReadPlatformFileWith(cfg.Platform, engine.PlatformOptions{MasterHost: cfg.MasterHost})
	if err != nil {
		return Summary{}, fmt.Errorf("enginerun: %w", err)
	}
	workloads, err := readWorkloads(cfg.Workloads, cfg.WorkloadNaming)
	if err != nil {
		return Summary{}, err
	}
	events := make([]*engine.EventList, len(cfg.Events))
	for i, path := range cfg.Events {
		if events[i], err = engine.ReadEventsFile(path, engine.BatsimEventListName(i), cfg.ForwardUnknownEvents); err != nil {
			return Summary{}, fmt.Errorf("enginerun: %w", err)
		}
	}
	out, err := createOutputs(cfg.ExportPrefix, !cfg.DisableMachineStates)
	if err != nil {
		return Summary{}, err
	}
	eng, err := engine.New(platform, workloads, engine.Options{
		ComputeSharing:         cfg.ComputeSharing,
		NoNetwork:              cfg.NoNetwork,
		DynamicJobs:            cfg.DynamicJobs,
		AcknowledgeDynamicJobs: cfg.AcknowledgeDynamicJobs,
		Events:                 events,
		JobsOutput:             out.jobs,
		MachineStatesOutput:    out.machineStatesWriter(),
	})
	if err != nil {
		return Summary{}, errors.Join(fmt.Errorf("enginerun: %w", err), out.close())
	}
	r := &runner{
		cfg:          cfg,
		eng:          eng,
		conv:         newConverter(cfg.ForwardProfiles, cfg.SchedConfig, cfg.ForwardUnknownEvents),
		nres:         len(platform.Resources) + len(platform.Storage),
		start:        start,
		lastProgress: start,
	}
	for _, w := range workloads {
		r.sum.Jobs += len(w.Jobs)
	}
	client, err := batsim.Dial(cfg.Endpoint)
	if err != nil {
		err = fmt.Errorf("enginerun: %w", err)
	} else {
		r.client = client
		err = r.loop(ctx)
		if cerr := client.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("enginerun: %w", cerr)
		}
	}
	sum := r.summary()
	sum.NetworkNotes = platform.NetworkNotes
	sched := eng.Schedule(sum.SchedulingTime, time.Since(start))
	err = errors.Join(err, out.finish(sched))
	sum.WallTime = time.Since(start)
	return sum, err
}

// readWorkloads reads the workload files, naming them as asked, and records
// their absolute paths as Batsim writes them in SIMULATION_BEGINS.
func readWorkloads(paths []string, naming WorkloadNaming) ([]*engine.Workload, error) {
	out := make([]*engine.Workload, 0, len(paths))
	for i, path := range paths {
		name := "" // FileNames: ReadWorkloadFile names it after the file
		if naming == BatsimNames {
			name = engine.BatsimWorkloadName(i)
		}
		w, err := engine.ReadWorkloadFile(path, name)
		if err != nil {
			return nil, fmt.Errorf("enginerun: %w", err)
		}
		if abs, err := batsimAbsolute(path); err == nil {
			w.Path = abs
		}
		out = append(out, w)
	}
	return out, nil
}

// batsimAbsolute makes a path absolute as Batsim 4.2.1 does: unchanged if it
// starts with "/", else the working directory, "/" and the path, not
// cleaned ("/home/u/../w.json").
func batsimAbsolute(path string) (string, error) {
	if strings.HasPrefix(path, "/") {
		return path, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return wd + "/" + path, nil
}

// runner is the state of a run.
type runner struct {
	cfg    Config
	eng    *engine.Engine
	conv   *converter
	client *batsim.Client

	nres         int // compute and storage resources
	start        time.Time
	lastProgress time.Time
	sum          Summary // counts, messages and scheduling time so far
}

// loop runs the request/reply cycle to the end of the simulation.
func (r *runner) loop(ctx context.Context) error {
	for !r.eng.Over() {
		msg, err := r.eng.Next()
		if err != nil {
			return fmt.Errorf("enginerun: t=%g: %w", r.eng.Now(), err)
		}
		r.observe(msg)
		req, err := r.conv.request(msg)
		if err != nil {
			return err
		}
		reply, err := r.request(ctx, req)
		if err != nil {
			if ends(msg) && errors.Is(err, batsim.ErrPeerDisconnected) {
				// The decision process closed its socket as the protocol
				// asks, and its reply went down with it: the simulation
				// is over all the same.
				if err := r.eng.Apply(msg.Now, nil); err != nil {
					return fmt.Errorf("enginerun: %w", err)
				}
				return nil
			}
			return err
		}
		ds, err := decisions(reply, r.nres)
		if err != nil {
			return fmt.Errorf("enginerun: invalid reply to the message at t=%g (%s): %w", msg.Now, eventTypes(req), err)
		}
		// Real Batsim takes a reply's now that is before the request's
		// (rounding noise, a decision process that always answers 0) as
		// the request's now.
		if err := r.eng.Apply(math.Max(reply.Now, msg.Now), ds); err != nil {
			return fmt.Errorf("enginerun: reply to the message at t=%g (%s): %w", msg.Now, eventTypes(req), err)
		}
		r.applied(ds)
		r.progress()
	}
	return nil
}

// ends reports whether m is the last message, SIMULATION_ENDS.
func ends(m engine.Message) bool {
	for _, ev := range m.Events {
		if _, ok := ev.(engine.SimulationEnds); ok {
			return true
		}
	}
	return false
}

// request sends a message to the decision process and waits for its reply.
func (r *runner) request(ctx context.Context, m batsim.Message) (batsim.Message, error) {
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if r.cfg.Timeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, r.cfg.Timeout)
	}
	defer cancel()
	began := time.Now()
	reply, err := r.client.Request(rctx, m)
	r.sum.SchedulingTime += time.Since(began)
	r.sum.Messages++
	if err == nil {
		return reply, nil
	}
	what := fmt.Sprintf("the message at t=%g (%s)", m.Now, eventTypes(m))
	var merr *batsim.MessageError
	switch {
	case errors.Is(err, batsim.ErrPeerDisconnected):
		return batsim.Message{}, fmt.Errorf("enginerun: the decision process at %s disconnected without answering %s: %w", r.cfg.Endpoint, what, err)
	case ctx.Err() != nil:
		return batsim.Message{}, fmt.Errorf("enginerun: interrupted while waiting for the reply to %s: %w", what, err)
	case errors.Is(err, context.DeadlineExceeded):
		return batsim.Message{}, fmt.Errorf("enginerun: the decision process at %s did not answer %s within %v (it hangs, died, or never listened): %w",
			r.cfg.Endpoint, what, r.cfg.Timeout, err)
	case errors.As(err, &merr):
		return batsim.Message{}, fmt.Errorf("enginerun: invalid reply to %s: %w", what, err)
	}
	return batsim.Message{}, fmt.Errorf("enginerun: exchanging %s: %w", what, err)
}

// eventTypes lists the types of a message's events, e.g.
// "JOB_COMPLETED, JOB_SUBMITTED x3".
func eventTypes(m batsim.Message) string {
	if len(m.Events) == 0 {
		return "no event"
	}
	var b strings.Builder
	for i := 0; i < len(m.Events); {
		t := m.Events[i].Type()
		n := 1
		for i+n < len(m.Events) && m.Events[i+n].Type() == t {
			n++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(t))
		if n > 1 {
			b.WriteString(" x")
			b.WriteString(strconv.Itoa(n))
		}
		i += n
	}
	return b.String()
}

// observe counts the jobs that a message reports finished.
func (r *runner) observe(m engine.Message) {
	for _, ev := range m.Events {
		c, ok := ev.(engine.JobCompleted)
		if !ok {
			continue
		}
		switch c.State {
		case engine.CompletedSuccessfully:
			r.sum.Succeeded++
		case engine.CompletedFailed:
			r.sum.Failed++
		case engine.CompletedWalltimeReached:
			r.sum.WalltimeReached++
		case engine.CompletedKilled:
			r.sum.Killed++
		}
	}
}

// applied counts the jobs that applied decisions registered or rejected.
func (r *runner) applied(ds []engine.Decision) {
	for _, d := range ds {
		switch d.(type) {
		case engine.RegisterJob:
			r.sum.Jobs++
		case engine.RejectJob:
			r.sum.Rejected++
		}
	}
}

// progress calls the Progress callback if the interval has passed since
// the last call (or the start).
func (r *runner) progress() {
	if r.cfg.Progress == nil {
		return
	}
	now := time.Now()
	if now.Sub(r.lastProgress) < r.cfg.ProgressInterval {
		return
	}
	r.lastProgress = now
	r.cfg.Progress(Progress{
		Now:      r.eng.Now(),
		Finished: r.sum.Finished(),
		Total:    r.sum.Jobs,
		Wall:     now.Sub(r.start),
	})
}

// summary completes the counts with the engine's statistics.
func (r *runner) summary() Summary {
	s := r.sum
	sched := r.eng.Schedule(0, 0)
	s.Makespan = sched.Makespan
	if sched.NbJobs > 0 {
		s.MeanWaitingTime = sched.MeanWaitingTime
	}
	s.SimulatedTime = r.eng.Now()
	s.WallTime = time.Since(r.start)
	return s
}

// outputs are the files of a run: _jobs.csv and _machine_states.csv,
// written as jobs start and finish, and _schedule.csv, written at the end.
type outputs struct {
	jobs          *bufferedFile
	machineStates *bufferedFile // nil when not written
	schedulePath  string
}

// bufferedFile is an output file written through a buffer.
type bufferedFile struct {
	f *os.File
	*bufio.Writer
}

func createBuffered(path string) (*bufferedFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("enginerun: %w", err)
	}
	return &bufferedFile{f: f, Writer: bufio.NewWriterSize(f, 64<<10)}, nil
}

// close flushes and closes the file.
func (b *bufferedFile) close() error {
	err := b.Flush()
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("enginerun: %s: %w", b.f.Name(), err)
	}
	return nil
}

// createOutputs creates <prefix>_jobs.csv and, if machineStates,
// <prefix>_machine_states.csv, and the prefix's directory if missing (real
// Batsim aborts instead).
func createOutputs(prefix string, machineStates bool) (*outputs, error) {
	jobsPath := prefix + "_jobs.csv"
	if err := os.MkdirAll(filepath.Dir(jobsPath), 0o755); err != nil {
		return nil, fmt.Errorf("enginerun: output directory: %w", err)
	}
	jobs, err := createBuffered(jobsPath)
	if err != nil {
		return nil, err
	}
	o := &outputs{jobs: jobs, schedulePath: prefix + "_schedule.csv"}
	if machineStates {
		if o.machineStates, err = createBuffered(prefix + "_machine_states.csv"); err != nil {
			return nil, errors.Join(err, jobs.close())
		}
	}
	return o, nil
}

// machineStatesWriter is where the engine writes _machine_states.csv: nil
// when it is not written.
func (o *outputs) machineStatesWriter() io.Writer {
	if o.machineStates == nil {
		return nil
	}
	return o.machineStates
}

// close flushes and closes _jobs.csv and _machine_states.csv.
func (o *outputs) close() error {
	err := o.jobs.close()
	if o.machineStates != nil {
		err = errors.Join(err, o.machineStates.close())
	}
	return err
}

// finish closes _jobs.csv and _machine_states.csv and writes _schedule.csv.
func (o *outputs) finish(s engine.Schedule) error {
	errJobs := o.close()
	f, err := os.Create(o.schedulePath)
	if err != nil {
		return errors.Join(errJobs, fmt.Errorf("enginerun: %w", err))
	}
	werr := s.WriteCSV(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		werr = fmt.Errorf("enginerun: %s: %w", o.schedulePath, werr)
	}
	return errors.Join(errJobs, werr)
}
