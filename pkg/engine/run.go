package engine

import (
	"math"
	"slices"
	"strconv"

	"github.com/batkube/batkube/pkg/engine/internal/ld"
)

// run is a running job.
type run struct {
	job   int32
	start float64
	// wall is the walltime left, Batsim's remaining_time: the job's
	// walltime at its start, less the time each leaf took (a delay
	// subtracts its length, a computation the time it ran); negative when
	// there is none (and then for the rest of the job, as in Batsim when
	// rounding takes it below zero).
	wall      float64
	alloc     []int // sorted resource ids
	executors []int // the resource of each executor
	profiles  map[string]*Profile
	// timer is the leaf's: a delay's sleep, or a computation's end;
	// wallTimer is the walltime's timeout while a computation runs.
	timer, wallTimer timer

	// where the job is in its profile: the composed profiles it is inside
	// (outermost first) and the running leaf
	steps     []step
	leaf      *Profile
	leafStart float64
	// atWall says that a delay leaf sleeps until the walltime (it is not
	// shorter than the time left).
	atWall bool
	act    *activity // the leaf's parallel task, if it computes or sends

	// ending says that the job has ended (at end, with endState and
	// endRet) and its hosts are free, but Batsim's server has not heard
	// of it yet (its message is on its way: server.go).
	ending   bool
	end      float64
	endState JobState
	endRet   int
}

// step is a composed profile being run: pos counts the sub-profiles started
// (over all repetitions), Batsim's current_task_index.
type step struct {
	p   *Profile
	pos int
}

func (e *Engine) newRun() *run {
	if n := len(e.freeRuns); n > 0 {
		r := e.freeRuns[n-1]
		e.freeRuns = e.freeRuns[:n-1]
		return r
	}
	r := &run{}
	r.timer = timer{kind: timerRun, run: r}
	r.wallTimer = timer{kind: timerWall, run: r}
	return r
}

func (e *Engine) freeRun(r *run) {
	r.alloc, r.profiles, r.leaf, r.act = nil, nil, nil, nil
	r.ending = false
	r.executors = r.executors[:0]
	r.steps = r.steps[:0]
	e.freeRuns = append(e.freeRuns, r)
}

// execute starts a job: EXECUTE_JOB.
func (e *Engine) execute(d ExecuteJob) error {
	idx, err := e.lookupWaiting(d.JobID, "executed")
	if err != nil {
		return err
	}
	job := e.jobs[idx]
	profiles := e.wstate[job.Workload].profiles
	prof := profiles[job.Profile]
	alloc, err := e.checkAlloc(d)
	if err != nil {
		return err
	}
	executors := len(alloc)
	for i, m := range d.Mapping {
		if m < 0 || m >= len(alloc) {
			return inField("mapping", "job %q: executor %d is mapped to the %d-th resource of an allocation of %d", d.JobID, i, m, len(alloc))
		}
	}
	if len(d.Mapping) > 0 {
		executors = len(d.Mapping)
	}
	if !anySize(prof, profiles) {
		if len(d.Mapping) > 0 && len(d.Mapping) != job.Res {
			return inField("mapping", "job %q asks for %d resources but its mapping has %d executors", d.JobID, job.Res, len(d.Mapping))
		}
		if len(d.Mapping) == 0 && len(alloc) != job.Res {
			return inField("alloc", "job %q asks for %d resources but was given %d (%s)", d.JobID, job.Res, len(alloc), formatIDs(alloc))
		}
	}
	if err := checkExecutors(prof, profiles, executors); err != nil {
		field := "alloc"
		if len(d.Mapping) > 0 {
			field = "mapping"
		}
		return inField(field, "job %q: %w", d.JobID, err)
	}
	if !e.opts.ComputeSharing {
		for _, h := range alloc {
			if jobs := e.hosts[h].jobs; len(jobs) > 0 {
				return inField("alloc", "job %q: resource %d (%s) is running job %q and compute sharing is off (Batsim's --enable-compute-sharing)",
					d.JobID, h, e.platform.Resources[h].Name, e.jobs[jobs[0]].ID)
			}
		}
	}
	for _, h := range alloc {
		if e.hosts[h].state == machineUnavailable {
			return inField("alloc", "job %q: resource %d (%s) is unavailable (an external event made it so): it cannot compute jobs now", d.JobID, h, e.platform.Resources[h].Name)
		}
	}

	r := e.newRun()
	r.job, r.start, r.alloc, r.profiles = idx, e.now, alloc, profiles
	r.wall = job.Walltime // -1: none
	if len(d.Mapping) > 0 {
		for _, m := range d.Mapping {
			r.executors = append(r.executors, alloc[m])
		}
	} else {
		r.executors = append(r.executors, alloc...)
	}
	e.runs[idx] = r
	e.status[idx] = statusRunning | e.status[idx]&killAsked
	e.nbRunning++
	for _, h := range alloc {
		e.hostJobStart(h, idx)
	}
	e.traceMachineStates()
	e.enter(r, prof)
	return nil
}

// checkAlloc returns the sorted, duplicate-free allocation of an EXECUTE_JOB.
func (e *Engine) checkAlloc(d ExecuteJob) ([]int, error) {
	if len(d.Alloc) == 0 {
		return nil, inField("alloc", "job %q: empty allocation", d.JobID)
	}
	alloc := slices.Clone(d.Alloc)
	slices.Sort(alloc)
	alloc = slices.Compact(alloc)
	n := len(e.platform.Resources)
	for _, id := range alloc {
		switch {
		case id >= n && id < n+len(e.platform.Storage):
			return nil, inField("alloc", "job %q: resource %d (%s) is a storage resource, not a compute one", d.JobID, id, e.platform.Storage[id-n].Name)
		case id < 0 || id >= n:
			return nil, inField("alloc", "job %q: resource %d does not exist (the platform has %d compute resources, 0-%d)", d.JobID, id, n, n-1)
		}
	}
	return alloc, nil
}

// hostJobStart puts a job on a machine: it is computing (Batsim's
// update_machines_on_job_run, which changes the state even when it was
// computing already).
func (e *Engine) hostJobStart(h int, job int32) {
	e.setState(h, machineComputing)
	e.hosts[h].jobs = append(e.hosts[h].jobs, job)
}

// hostJobEnd takes a job off a machine: idle if it runs no other, unless it
// is unavailable (Batsim's update_machines_on_job_end).
func (e *Engine) hostJobEnd(h int, job int32) {
	hs := &e.hosts[h]
	if i := slices.Index(hs.jobs, job); i >= 0 {
		hs.jobs = slices.Delete(hs.jobs, i, i+1)
	}
	if len(hs.jobs) == 0 && hs.state != machineUnavailable {
		e.setState(h, machineIdle)
	}
}

// setState changes the state of machine h, as Batsim's
// Machine::update_machine_state does: the time since its last change goes
// to the state it leaves, and the counts of machines in each state follow.
func (e *Engine) setState(h int, s machineState) {
	hs := &e.hosts[h]
	acc := &hs.idle
	switch hs.state {
	case machineIdle:
		e.nbIdle--
	case machineComputing:
		acc = &hs.working
		e.nbComputing--
	case machineUnavailable:
		acc = &hs.unavailable
	}
	if d, exact := ld.ExactDiff(e.now, hs.last); exact {
		acc.AddFloat64(d)
	} else {
		acc.Add(ld.Diff(e.now, hs.last))
	}
	switch s {
	case machineIdle:
		e.nbIdle++
	case machineComputing:
		e.nbComputing++
	}
	hs.state, hs.last = s, e.now
}

// enter runs the job from profile p on: it descends into composed profiles
// and starts the first leaf that takes time, finishing the leaves that take
// none (and the job, if nothing is left).
func (e *Engine) enter(r *run, p *Profile) {
	for {
		for p.Type == ProfileComposed {
			r.steps = append(r.steps, step{p: p})
			p = r.profiles[p.Seq[0]]
		}
		if e.startLeaf(r, p) {
			return
		}
		next, ret, done := r.afterLeaf(p)
		if done {
			e.finishRun(r, stateOf(ret), ret)
			return
		}
		p = next
	}
}

func stateOf(ret int) JobState {
	if ret == 0 {
		return CompletedSuccessfully
	}
	return CompletedFailed
}

// afterLeaf moves on once the leaf is done: it returns the next leaf or
// composed profile to enter, or the job's return code when it is over.
func (r *run) afterLeaf(leaf *Profile) (next *Profile, ret int, done bool) {
	if leaf.Ret != 0 {
		return nil, leaf.Ret, true
	}
	for len(r.steps) > 0 {
		top := &r.steps[len(r.steps)-1]
		top.pos++
		if top.pos < top.p.Repeat*len(top.p.Seq) {
			return r.profiles[top.p.Seq[top.pos%len(top.p.Seq)]], 0, false
		}
		composed := top.p
		r.steps = r.steps[:len(r.steps)-1]
		if composed.Ret != 0 {
			return nil, composed.Ret, true
		}
	}
	return nil, 0, true
}

// startLeaf starts a delay or a computation, and reports whether it takes
// time (if not, it is already done). As Batsim's do_delay_task, a delay
// runs its whole length only if it is shorter than the walltime left, and
// otherwise sleeps until the walltime, which it then reaches (a delay as
// long as the time left reaches it). A computation is waited for until the
// walltime (the timeout of wait_for, a sleep started after it): one that
// ends at that step completes, as SimGrid handles the computation before
// its timeout.
func (e *Engine) startLeaf(r *run, p *Profile) bool {
	r.leaf, r.leafStart = p, e.now
	if p.Type == ProfileDelay {
		r.atWall = r.wall >= 0 && !(p.Delay < r.wall)
		if r.atWall {
			e.sleep(&r.timer, r.wall)
		} else {
			e.sleep(&r.timer, p.Delay)
		}
		return true
	}
	r.atWall = false
	a := e.newActivity(r, p)
	if a == nil {
		// Nothing to compute or send: SimGrid completes the empty
		// parallel task at once, before a timeout of the same date.
		return false
	}
	r.act = a
	if a.latency > 0 {
		// the parallel task waits its latency first (SimGrid gives it
		// no share meanwhile), created before the timeout
		a.waiting = true
		a.remaining, a.rate, a.updated = 1, 0, e.vt
		e.sleep(&r.timer, a.latency)
	} else {
		e.born++
		r.timer.born, r.timer.armed = e.born, true // created before the timeout
	}
	if r.wall >= 0 {
		e.sleep(&r.wallTimer, r.wall)
	}
	if !a.waiting {
		e.reschedule(e.sharer.add(a, e.vt))
	}
	return true
}

// onRunTimer handles the end of a run's leaf: a delay's sleep (which may
// be the walltime's), or a computation done.
func (e *Engine) onRunTimer(r *run) {
	if a := r.act; a != nil && a.waiting {
		// the latency is over: the task now shares hosts and links
		a.waiting = false
		r.timer.armed = true // the same SimGrid action: its order stays
		e.reschedule(e.sharer.add(a, e.vt))
		return
	}
	leaf := r.leaf
	if r.act == nil {
		if r.atWall {
			e.finishRun(r, CompletedWalltimeReached, -1)
			return
		}
		// Batsim's remaining_time: a delay subtracts its length (if
		// time is left).
		if r.wall > 0 {
			r.wall -= leaf.Delay
		}
	} else {
		e.stopActivity(r)
		// A computation subtracts the time it took (if there is a
		// walltime).
		if r.wall >= 0 {
			e.disarm(&r.wallTimer)
			r.wall -= e.now - r.leafStart
		}
	}
	next, ret, done := r.afterLeaf(leaf)
	if done {
		e.finishRun(r, stateOf(ret), ret)
		return
	}
	e.enter(r, next)
}

// onWallTimer handles the walltime of a run while it computes: the job
// reaches it, unless its computation is done in this step too (with less
// than doneBelow of its work left).
func (e *Engine) onWallTimer(r *run) {
	if a := r.act; a != nil && !a.waiting && r.timer.armed && r.timer.item.Queued() {
		if left := r.timer.item.At().Minus(e.vt); left <= 0 || a.rate*left < doneBelow {
			e.disarm(&r.timer)
			e.onRunTimer(r)
			return
		}
	}
	e.finishRun(r, CompletedWalltimeReached, -1)
}

// finishRun ends a job now: its hosts are free; JOB_COMPLETED, and its row
// in the jobs output, come when Batsim's server hears of the end: now if
// the job was killed (the killer runs on the master host) or if its first
// host's message to the master takes no time, that message's time later
// otherwise.
func (e *Engine) finishRun(r *run, state JobState, ret int) {
	e.disarm(&r.timer)
	e.disarm(&r.wallTimer)
	if r.act != nil {
		e.stopActivity(r)
	}
	for _, h := range r.alloc {
		e.hostJobEnd(h, r.job)
	}
	e.traceMachineStates()
	r.ending, r.end, r.endState, r.endRet = true, e.now, state, ret
	if state == CompletedKilled {
		// the killer tells the server (see kill)
		return
	}
	e.post(message{cost: e.noticeTime(r), run: r})
}

// noticeEnd is Batsim's server hearing of a run's end: JOB_COMPLETED, and
// the job's row in the jobs output.
func (e *Engine) noticeEnd(r *run) {
	idx := r.job
	e.outbox = append(e.outbox, JobCompleted{
		Timestamp:  e.now,
		JobID:      e.jobs[idx].ID,
		State:      r.endState,
		ReturnCode: r.endRet,
		Alloc:      r.alloc,
	})
	e.status[idx] = statusOf(r.endState) | e.status[idx]&killAsked
	e.ended = append(e.ended, idx)
	e.runs[idx] = nil
	e.nbRunning--
	e.nbDone++
	e.record(idx, r.endState, r.start, r.end, r.alloc)
	e.freeRun(r)
}

// kill kills jobs: KILL_JOB.
func (e *Engine) kill(d KillJob) error {
	if len(d.JobIDs) == 0 {
		return inField("job_ids", "no job to kill")
	}
	var ids []string
	var progress map[string]*Progress
	var killed []*run
	for i, id := range d.JobIDs {
		field := "job_ids[" + strconv.Itoa(i) + "]"
		idx, err := e.lookup(field, id)
		if err != nil {
			return err
		}
		s := e.status[idx]
		if s&killAsked != 0 {
			continue
		}
		switch {
		case s&statusMask == statusRunning && e.runs[idx].ending:
			// It has ended, and its end message is on its way: Batsim's
			// killer leaves it alone, and JOB_COMPLETED still comes.
		case s&statusMask == statusRunning:
			if progress == nil {
				progress = map[string]*Progress{}
			}
			r := e.runs[idx]
			progress[id] = e.progress(r)
			e.finishRun(r, CompletedKilled, killedReturnCode(r))
			killed = append(killed, r)
		case !s.finished():
			return inField(field, "job %q is %s: only a running or finished job can be killed", id, s&statusMask)
		}
		e.status[idx] |= killAsked
		ids = append(ids, id)
	}
	// Batsim's killer, on the master host, has killed them: its
	// KILLING_DONE tells the server (JOB_COMPLETED for each, then
	// JOB_KILLED), after the request-reply actor's next message when
	// messages of the master host take time.
	done := func() {
		for _, r := range killed {
			e.noticeEnd(r)
		}
		if len(ids) > 0 {
			e.outbox = append(e.outbox, JobKilled{Timestamp: e.now, JobIDs: ids, Progress: progress})
		}
	}
	if e.masterMsg.takesTime() {
		e.afterPut = append(e.afterPut, message{cost: e.masterMsg, handle: done})
	} else {
		done()
	}
	return nil
}

// killedReturnCode is the return code of a job killed by KILL_JOB, as
// Batsim 4.2.1 reports it: -2 when a computation was cancelled (its
// parallel task returns -2), -1 when a delay was interrupted (the job keeps
// its initial return code).
func killedReturnCode(r *run) int {
	if r.act != nil {
		return -2
	}
	return -1
}

// progress describes how far a run has gone, as Batsim's task tree.
func (e *Engine) progress(r *run) *Progress {
	leaf := &Progress{Profile: r.leaf.Name}
	switch {
	case r.act != nil:
		r.act.settle(e.vt)
		leaf.Progress = 1 - r.act.remaining
	case r.leaf.Type == ProfileDelay && r.leaf.Delay > 0:
		leaf.Progress = (e.now - r.leafStart) / r.leaf.Delay
	}
	leaf.Progress = math.Min(1, math.Max(0, leaf.Progress))
	p := leaf
	for i := len(r.steps) - 1; i >= 0; i-- {
		p = &Progress{Profile: r.steps[i].p.Name, CurrentTaskIndex: r.steps[i].pos, CurrentTask: p}
	}
	return p
}

// formatIDs writes resource ids as a Batsim interval set: "0-3 7".
func formatIDs(ids []int) string {
	return string(appendIDs(nil, ids))
}

// appendIDs appends sorted, distinct ids as a Batsim interval set.
func appendIDs(b []byte, ids []int) []byte {
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendInt(b, ids[i])
		if j > i {
			b = append(b, '-')
			b = appendInt(b, ids[j])
		}
		i = j + 1
	}
	return b
}
