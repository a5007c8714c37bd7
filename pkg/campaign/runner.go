package campaign

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/batkube/batkube/pkg/launch"
)

// Runner runs runs of a campaign on this machine, Parallel at a time. The
// runs share one launch.Ports, so that runs side by side never get the
// same port.
type Runner struct {
	// Out is the campaign's output folder: run R's outputs go to Out/R.Name.
	Out string
	// Parallel is how many runs run at once (at least 1).
	Parallel int
	// Rerun runs finished runs again.
	Rerun bool
	// Base is the launch configuration every run starts from: binaries,
	// simulator, progress interval; the run sets the rest.
	Base launch.Config
	// Events, if set, is told what happens, one event at a time.
	Events func(Event)
	// ProgressEvery is how often an EventProgress reports the running
	// runs (0: never).
	ProgressEvery time.Duration
}

// EventKind says what an Event reports.
type EventKind int

const (
	// EventSkipped: a finished run is kept (Summary is its summary).
	EventSkipped EventKind = iota
	// EventStarted: a run starts (State is what its folder held).
	EventStarted
	// EventDone: a run ended as it should (Summary).
	EventDone
	// EventFailed: a run failed (Err, and Summary if it wrote one).
	EventFailed
	// EventLog: something a person should know at once (Message).
	EventLog
	// EventProgress: where the running runs stand (Running).
	EventProgress
)

// Event is what a Runner reports.
type Event struct {
	Kind    EventKind
	Run     Run
	State   State
	Summary *launch.Summary
	Err     error
	Message string
	// Counts are the campaign's counts once the event happened.
	Counts Counts
	// Running are the runs under way (EventProgress), in index order.
	Running []Running
}

// Counts say where the runs given to Runner.Run stand.
type Counts struct {
	Total, Done, Failed, Running, Left int
}

// Running is a run under way and its latest progress.
type Running struct {
	Run      Run
	Progress launch.Progress
	// HasProgress is false until the run's server answered once.
	HasProgress bool
}

// Result is how a run ended.
type Result struct {
	Run Run
	// Skipped: the run had finished before; Summary is its summary.
	Skipped bool
	Summary *launch.Summary
	// Err is why the run failed, or why it did not run (interrupted).
	Err error
}

// Run runs runs (skipping the finished ones unless Rerun), Parallel at a
// time, and returns how each ended, in their order. A run that fails does
// not stop the others; ctx's end does (the runs under way are stopped,
// the others not started) and is then returned.
func (rn *Runner) Run(ctx context.Context, runs []Run) ([]Result, error) {
	st := &runnerState{rn: rn, results: make([]Result, len(runs)), running: map[int]*Running{}}
	st.counts.Total = len(runs)
	base := rn.Base
	if base.Ports == nil {
		base.Ports = launch.NewPorts()
	}

	// Finished runs first: the counts are right from the first event.
	var todo, kept []int
	for i, r := range runs {
		st.results[i].Run = r
		state, sum, err := Inspect(r, rn.Out)
		if err != nil {
			return nil, err
		}
		if state == Finished && !rn.Rerun {
			st.results[i].Skipped, st.results[i].Summary = true, sum
			kept = append(kept, i)
			continue
		}
		todo = append(todo, i)
	}
	st.counts.Done, st.counts.Left = len(kept), len(todo)
	for _, i := range kept {
		res := st.results[i]
		st.emit(Event{Kind: EventSkipped, Run: res.Run, State: Finished, Summary: res.Summary})
	}

	stopProgress := make(chan struct{})
	var progressDone sync.WaitGroup
	if rn.ProgressEvery > 0 {
		progressDone.Go(func() { st.reportProgress(rn.ProgressEvery, stopProgress) })
	}
	next := make(chan int)
	var workers sync.WaitGroup
	for range max(rn.Parallel, 1) {
		workers.Go(func() {
			for i := range next {
				st.runOne(ctx, i, base)
			}
		})
	}
feed:
	for _, i := range todo {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	workers.Wait()
	close(stopProgress)
	progressDone.Wait()

	if err := ctx.Err(); err != nil {
		for i := range st.results {
			if res := &st.results[i]; !res.Skipped && res.Summary == nil && res.Err == nil {
				res.Err = fmt.Errorf("campaign: not run: %w", err)
			}
		}
		return st.results, err
	}
	return st.results, nil
}

// runnerState is a Runner's state during Run.
type runnerState struct {
	rn      *Runner
	mu      sync.Mutex // guards what follows, and serialises events
	results []Result
	counts  Counts
	running map[int]*Running
}

// emit reports an event with the current counts.
func (st *runnerState) emit(e Event) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.emitLocked(e)
}

func (st *runnerState) emitLocked(e Event) {
	if st.rn.Events == nil {
		return
	}
	e.Counts = st.counts
	st.rn.Events(e)
}

// runOne runs results[i]'s run from an empty folder.
func (st *runnerState) runOne(ctx context.Context, i int, base launch.Config) {
	if ctx.Err() != nil {
		return // interrupted while it waited for a worker
	}
	r := st.results[i].Run
	state, _, err := Inspect(r, st.rn.Out)
	if err == nil {
		err = prepare(r, st.rn.Out)
	}
	if err != nil {
		st.finish(i, nil, err)
		return
	}
	st.mu.Lock()
	st.counts.Left--
	st.counts.Running++
	st.running[i] = &Running{Run: r}
	st.emitLocked(Event{Kind: EventStarted, Run: r, State: state})
	st.mu.Unlock()

	cfg := r.Config(base, st.rn.Out)
	cfg.Progress = func(p launch.Progress) {
		st.mu.Lock()
		defer st.mu.Unlock()
		if run := st.running[i]; run != nil {
			run.Progress, run.HasProgress = p, true
		}
	}
	cfg.Logf = func(format string, args ...any) {
		st.emit(Event{Kind: EventLog, Run: r, Message: fmt.Sprintf(format, args...)})
	}
	sum, err := launch.Run(ctx, cfg)
	var summary *launch.Summary
	if sum.Status != "" {
		summary = &sum
	}
	st.finish(i, summary, err)
}

// finish records how a run ended and reports it.
func (st *runnerState) finish(i int, sum *launch.Summary, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	res := &st.results[i]
	res.Summary, res.Err = sum, err
	if _, ok := st.running[i]; ok {
		delete(st.running, i)
		st.counts.Running--
	} else {
		st.counts.Left--
	}
	if err != nil {
		st.counts.Failed++
		st.emitLocked(Event{Kind: EventFailed, Run: res.Run, Summary: sum, Err: err})
		return
	}
	st.counts.Done++
	st.emitLocked(Event{Kind: EventDone, Run: res.Run, Summary: sum})
}

// reportProgress emits an EventProgress every period while runs run.
func (st *runnerState) reportProgress(period time.Duration, stop <-chan struct{}) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		st.mu.Lock()
		if len(st.running) > 0 {
			var running []Running
			for i := range st.results {
				if r, ok := st.running[i]; ok {
					running = append(running, *r)
				}
			}
			st.emitLocked(Event{Kind: EventProgress, Running: running})
		}
		st.mu.Unlock()
	}
}
