package engine

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/batkube/batkube/pkg/engine/internal/ld"
	"github.com/batkube/batkube/pkg/simtime/timerq"
)

// The engine's clock is SimGrid's (the one Batsim runs on), a double that
// advances by steps: at each step SimGrid takes the least remaining
// duration over its pending actions (a sleep's time left, a computation's
// work left over its rate), adds it to the clock (a rounded addition), and
// subtracts it from every sleep's time left (a rounded subtraction, a
// sleep with less than 1e-9 s left being over). Where doubles are coarse
// (16 s apart at 1e17 s) the clock gains or loses time at each step: a
// delay of 20.7 s that sees three other events end reads 22 s at 1e16 s.
//
// The engine keeps the same clock (Engine.now), and a virtual time
// (Engine.vt), the exact sum of the steps, by which its timers are ordered:
// a timer set for d seconds is due at vt + d. A long sleep (steppedFrom or
// more) has its time left decremented at each step as SimGrid does, since
// its rounding shows (a job submitter sleeping 9e10 s wakes 1.5e-5 s
// early when others ended meanwhile); a shorter one's rounding is below
// 1e-12 s and is left out.

const (
	// sleepPrecision is SimGrid's surf/precision: a sleep with less than
	// that left after a step is over.
	sleepPrecision = 1e-9
	// doneBelow is the work left (a fraction of the computation) under
	// which SimGrid counts a computation done after a step: its
	// maxmin/precision times its surf/precision.
	doneBelow = 1e-14
	// steppedFrom is the length from which a sleep is decremented step by
	// step.
	steppedFrom = 1024.0
)

// timerKind is what a timer stands for.
type timerKind uint8

const (
	timerRun     timerKind = iota // a run's leaf: a delay's sleep or a computation's end
	timerWall                     // a run's walltime, while it computes (wait_for's timeout)
	timerCall                     // a CALL_ME_LATER's waiter
	timerTarget                   // Batsim's request-reply actor sleeping until a decision's date
	timerReceive                  // a message to Batsim's server crossing the network
	timerSubmit                   // a workload's job submitter (from here on: kept aside)
	timerEvents                   // an events file's submitter
)

// timer is a SimGrid action the engine waits for.
type timer struct {
	item  timerq.Item[*timer] // when lazy: due at item.At() in virtual time
	kind  timerKind
	armed bool
	born  uint64  // creation order: SimGrid handles the actions ended in one step in this order
	left  float64 // when stepped: SimGrid's time left
	sidx  int     // when stepped: 1 + index in Engine.stepped
	fidx  int     // when a lazy submitter's: 1 + index in Engine.few
	run   *run    // timerRun, timerWall
	index int     // timerSubmit: the workload; timerEvents: the events file
}

// sleep arms t to go off d seconds from now, as a SimGrid sleep of d.
func (e *Engine) sleep(t *timer, d float64) {
	e.disarm(t)
	e.born++
	t.born, t.armed = e.born, true
	if d >= steppedFrom && !math.IsInf(d, 1) {
		t.left = d
		e.stepped = append(e.stepped, t)
		t.sidx = len(e.stepped)
		return
	}
	if t.kind >= timerSubmit {
		// One per workload or events file: kept aside, out of the
		// queue of the many runs' timers.
		t.item.Value = t
		t.item.SetAt(e.vt.Plus(max(d, 0)))
		e.few = append(e.few, t)
		t.fidx = len(e.few)
		return
	}
	t.item.Value = t
	e.timers.Schedule(&t.item, e.vt.Plus(max(d, 0)))
}

// computeEnds arms t, a computation's timer, to go off in d seconds (+Inf:
// never), keeping its creation order if it is armed already (a computation
// whose pace changes is the same SimGrid action).
func (e *Engine) computeEnds(t *timer, d float64) {
	if !t.armed {
		e.born++
		t.born = e.born
	}
	if math.IsInf(d, 1) {
		e.timers.Cancel(&t.item)
		t.armed = true // still running, but never ends by itself
		return
	}
	t.armed = true
	t.item.Value = t
	e.timers.Schedule(&t.item, e.vt.Plus(max(d, 0)))
}

// disarm stops t.
func (e *Engine) disarm(t *timer) {
	t.armed = false
	switch {
	case t.sidx > 0:
		e.removeStepped(t.sidx - 1)
	case t.fidx > 0:
		e.removeFew(t.fidx - 1)
	default:
		e.timers.Cancel(&t.item)
	}
}

func (e *Engine) removeFew(i int) {
	e.few = swapRemove(e.few, i, func(t *timer) *int { return &t.fidx })
}

func (e *Engine) removeStepped(i int) {
	e.stepped = swapRemove(e.stepped, i, func(t *timer) *int { return &t.sidx })
}

// swapRemove removes s[i], moving the last timer into its place; index
// is a timer's field that holds 1 + its index in s (0 once removed).
func swapRemove(s []*timer, i int, index func(*timer) *int) []*timer {
	t := s[i]
	last := len(s) - 1
	if i != last {
		s[i] = s[last]
		*index(s[i]) = i + 1
	}
	s[last] = nil
	*index(t) = 0
	return s[:last]
}

// nextStep returns the duration of SimGrid's next step: the least time
// left over the pending timers; false if none is pending.
func (e *Engine) nextStep() (float64, bool) {
	var next timerq.Time
	ok := false
	if it := e.timers.Peek(); it != nil {
		next, ok = it.At(), true
	}
	for _, t := range e.few {
		if at := t.item.At(); !ok || at.Before(next) {
			next, ok = at, true
		}
	}
	d := math.Inf(1)
	if ok {
		d = max(0, next.Minus(e.vt))
	}
	for _, t := range e.stepped {
		d, ok = min(d, t.left), true
	}
	return d, ok
}

// step advances the clock by d, as a SimGrid step, and fires the timers
// that are then over: the runs', walltimes', calls' and requests' in the
// order their actions were created, then the submitters' in the order of
// the workloads (and events files).
func (e *Engine) step(d float64) {
	e.round++
	if d > 0 {
		e.now += d
		e.vt = e.vt.Plus(d)
	}
	due := e.due[:0]
	for i := 0; i < len(e.stepped); {
		t := e.stepped[i]
		t.left -= d
		if t.left < sleepPrecision {
			e.removeStepped(i)
			due = append(due, t)
			continue
		}
		i++
	}
	// what is due within sleepPrecision of the clock
	lim := e.vt.Plus(sleepPrecision)
	for i := 0; i < len(e.few); {
		t := e.few[i]
		if t.item.At().Before(lim) {
			e.removeFew(i)
			due = append(due, t)
			continue
		}
		i++
	}
	back := e.notDue[:0]
	for {
		it := e.timers.Peek()
		if it == nil || !it.At().Before(lim) {
			break
		}
		e.timers.Pop()
		if t := it.Value; t.kind == timerRun && t.run.act != nil {
			if left := it.At().Minus(e.vt); left > 0 && t.run.act.rate*left >= doneBelow {
				back = append(back, t) // a computation with work left
				continue
			}
		} else if t.kind == timerReceive && e.crossing {
			if left := it.At().Minus(e.vt); left > 0 && e.current.cost.Bandwidth*left >= doneBelow {
				back = append(back, t) // a message's byte still crossing
				continue
			}
		}
		due = append(due, it.Value)
	}
	for _, t := range back {
		e.timers.Schedule(&t.item, t.item.At())
	}
	// insertion sort: few timers end in one step
	for i := 1; i < len(due); i++ {
		for j := i; j > 0 && firesBefore(due[j], due[j-1]); j-- {
			due[j], due[j-1] = due[j-1], due[j]
		}
	}
	for _, t := range due {
		if t.armed && e.err == nil {
			t.armed = false
			e.fire(t)
		}
	}
	// (the timers belong to runs and submitters, kept for reuse: no need
	// to clear the slices)
	e.due, e.notDue = due[:0], back[:0]
}

// firesBefore orders the timers over in one step.
func firesBefore(a, b *timer) bool {
	if ca, cb := a.kind >= timerSubmit, b.kind >= timerSubmit; ca != cb {
		return cb
	}
	if a.kind >= timerSubmit {
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.index < b.index
	}
	return a.born < b.born
}

// dueNow reports whether a timer is due without the clock moving (a step
// of 0).
func (e *Engine) dueNow() bool {
	if it := e.timers.Peek(); it != nil && !e.vt.Before(it.At()) {
		return true
	}
	for _, t := range e.few {
		if !e.vt.Before(t.item.At()) {
			return true
		}
	}
	return false
}

// fire handles a timer that went off.
func (e *Engine) fire(t *timer) {
	switch t.kind {
	case timerRun:
		e.onRunTimer(t.run)
	case timerWall:
		e.onWallTimer(t.run)
	case timerReceive:
		e.onReceiveTimer()
	case timerCall:
		e.post(message{cost: e.masterMsg, handle: e.wakeUp})
	case timerTarget:
		e.targetReached = true
	case timerSubmit:
		e.onSubmitter(e.submitters[t.index])
	case timerEvents:
		e.onSubmitter(e.eventSubmitters[t.index])
	}
}

// advanceUntil runs the simulation up to the date ts, as Batsim's
// request-reply actor sleeps from now until a decision's timestamp (if it
// is after now), then runs the steps that take no time: what happens at
// that date happens before the decision. The clock then reads ts, but for
// the rounding of the steps in between.
func (e *Engine) advanceUntil(ts float64) {
	if ts > e.now {
		e.sleep(&e.target, ts-e.now)
		e.targetReached = false
		for !e.targetReached && e.err == nil {
			d, _ := e.nextStep()
			e.step(d)
		}
	}
	for e.err == nil && e.dueNow() {
		e.step(0)
	}
}

// submitter is one of Batsim's static submitters, of a workload's jobs
// (newJobSubmitter) or of an events file's events (newEventSubmitter): it
// submits its items in the order of their dates, sleeping from one date to
// the next, then says goodbye.
type submitter struct {
	dates  []float64   // the items', in order
	handle func(i int) // the server handling item i
	bye    func()      // the server handling the goodbye
	next   int
	slept  bool // it sleeps until dates[next]
	timer  timer
	batch  *batchSender // when messages of the master host take time
}

// newJobSubmitter returns the submitter of a static workload, whose jobs
// are the engine's from first on: it submits them in the order of their
// subtimes, then ids.
func (e *Engine) newJobSubmitter(index int, jobs []*Job, first int32) *submitter {
	order := make([]int32, len(jobs))
	for i := range jobs {
		order[i] = first + int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		ja, jb := jobs[a-first], jobs[b-first]
		if c := cmp.Compare(ja.Subtime, jb.Subtime); c != 0 {
			return c
		}
		return strings.Compare(ja.ID, jb.ID)
	})
	s := &submitter{dates: make([]float64, len(order)), timer: timer{kind: timerSubmit, index: index},
		handle: func(i int) { e.submit(order[i]) }, bye: e.submitterDone}
	for i, idx := range order {
		s.dates[i] = jobs[idx-first].Subtime
	}
	return s
}

// startSubmitter starts s at 0, sending its items in batches when the
// master host's messages take time.
func (e *Engine) startSubmitter(s *submitter) {
	if e.masterMsg.takesTime() {
		s.batch = e.newBatches(s)
	}
	e.sleep(&s.timer, 0)
}

// sleepUntil is how long Batsim's submitters sleep from cur to date:
// (double)(date - cur), computed in long double.
func sleepUntil(date, cur float64) float64 {
	if d, exact := ld.ExactDiff(date, cur); exact {
		return d
	}
	return ld.Diff(date, cur).Float64()
}

// submitDue reports whether the next item of s, woken up at cur, is due;
// if it is not, s sleeps until its date. The item it slept for is due
// whatever the clock reads.
func (e *Engine) submitDue(s *submitter, cur float64) bool {
	if date := s.dates[s.next]; date > cur && !s.slept {
		e.sleep(&s.timer, sleepUntil(date, cur))
		s.slept = true
		return false
	}
	s.slept = false
	return true
}

// onSubmitter wakes a submitter up. It submits the item it slept for (even
// if the clock, rounded at each step, reads a little less than its date),
// then the next ones while their date is not after the clock; for the next
// one it sleeps (double)(date - clock), computed in long double: the clock
// then reads that date, but for the rounding of the steps in between. Once
// it has none left, it says goodbye; no_more_static_job_to_submit follows
// the last job submitter's, no_more_external_event_to_occur the last
// events submitter's.
func (e *Engine) onSubmitter(s *submitter) {
	if s.batch != nil {
		e.onBatchSender(s.batch)
		return
	}
	cur := e.now
	for s.next < len(s.dates) {
		if !e.submitDue(s, cur) {
			return
		}
		i := s.next
		s.next++
		if e.busy() {
			e.post(message{handle: func() { s.handle(i) }})
		} else {
			s.handle(i) // as posting it would: the server gets it at once
		}
	}
	e.post(message{handle: s.bye})
}

// submitterDone is a submitter's goodbye reaching the server:
// no_more_static_job_to_submit after the last one's.
func (e *Engine) submitterDone() {
	e.submittersDone++
	if e.submittersDone == len(e.submitters) {
		e.noMoreStaticJobs()
	}
}

// newBatches makes a submitter send its items in batches.
func (e *Engine) newBatches(s *submitter) *batchSender {
	return &batchSender{dates: s.dates, timer: &s.timer,
		deliver: func(from, to int) {
			for i := from; i < to; i++ {
				s.handle(i)
			}
		},
		bye: s.bye}
}

// noMoreStaticJobs is no_more_static_job_to_submit, once the last
// submitter's goodbye has reached the server.
func (e *Engine) noMoreStaticJobs() {
	e.noMoreStatic = true
	e.outbox = append(e.outbox, Notification{Timestamp: e.now, Kind: NoMoreStaticJobToSubmit})
}

// wakeUp is a CALL_ME_LATER's waiter reaching the server.
func (e *Engine) wakeUp() {
	e.calls--
	e.outbox = append(e.outbox, RequestedCall{Timestamp: e.now})
}
