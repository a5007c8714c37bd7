package engine

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// What each decision of the decision process does (Apply applies them in
// turn, server.go says when): its applyTo, which the Decision interface
// asks of every decision.

func (d ExecuteJob) applyTo(e *Engine) error      { return e.execute(d) }
func (d RejectJob) applyTo(e *Engine) error       { return e.reject(d) }
func (d KillJob) applyTo(e *Engine) error         { return e.kill(d) }
func (d CallMeLater) applyTo(e *Engine) error     { return e.callMeLater(d) }
func (d RegisterJob) applyTo(e *Engine) error     { return e.registerJob(d) }
func (d RegisterProfile) applyTo(e *Engine) error { return e.registerProfile(d) }
func (d Notify) applyTo(e *Engine) error          { return e.notify(d) }
func (d SetJobMetadata) applyTo(e *Engine) error  { return e.setMetadata(d) }

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

// lookupWaiting finds a job a decision would have done ("rejected",
// "executed"): only a job waiting to start can be.
func (e *Engine) lookupWaiting(id, done string) (int32, error) {
	idx, err := e.lookup("job_id", id)
	if err != nil {
		return 0, err
	}
	if s := e.status[idx] & statusMask; s != statusSubmitted {
		return 0, inField("job_id", "job %q is %s: only a job waiting to start can be %s", id, s, done)
	}
	return idx, nil
}

func (e *Engine) reject(d RejectJob) error {
	idx, err := e.lookupWaiting(d.JobID, "rejected")
	if err != nil {
		return err
	}
	e.status[idx] = statusRejected | e.status[idx]&killAsked
	e.ended = append(e.ended, idx)
	e.nbDone++
	e.record(idx, Rejected, 0, 0, nil)
	return nil
}

func (e *Engine) callMeLater(d CallMeLater) error {
	if !(d.When > e.now) {
		return inField("timestamp", "asked to be called at %g, which is not after now (%g)", d.When, e.now)
	}
	if math.IsInf(d.When, 0) {
		return inField("timestamp", "asked to be called at %g, want a finite date", d.When)
	}
	// Batsim's waiter sleeps When - now, but at least 10 µs (a shorter
	// sleep may not move SimGrid's clock), and SimGrid's clock then reads
	// now plus that.
	e.sleep(&timer{kind: timerCall}, max(d.When-e.now, minWait))
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
