package engine

// Batsim's server receives one message at a time. Its actors put their
// messages in its mailbox (a job's end from the job's first host, a
// submission from a submitter, an external event, a waiter's wake-up, the
// decisions of the request-reply actor, one by one, then its SCHED_READY),
// and the server gets them in the order they were put; a message crosses
// the network only once the server gets it, and its sender waits until it
// has. So a message from a host whose route to the master host has latency
// (message_time.go) keeps the server busy for that time, and the messages
// behind it wait. The server tells the decision process what happened only
// when its mailbox is empty. So two jobs ending at once on hosts 120 µs
// away from the master are heard of at +120 µs and +240 µs, in one message
// sent at +240 µs.
//
// Messages between actors of the master host cross its route to itself:
// SimGrid's loopback (a tenth of a nanosecond for one byte), or what the
// platform makes of it (15 µs on Batsim's small_platform.xml, 600 µs
// through cluster512.xml's backbone). The engine runs Batsim's actors
// message by message (Engine.masterMsg): submitters say hello, send each batch of
// submissions and say goodbye, each waiting for the server to get the
// message before going on; the request-reply actor sends each decision,
// then SCHED_READY; a waiter and a killer each send one message when done.

// message is a message to Batsim's server: once the server gets it, it
// crosses the network in cost seconds, then the server handles it (ends
// run, or calls handle).
type message struct {
	cost     MessageTime
	run      *run     // a job's end, from its first host
	decision Decision // a decision of the request-reply actor
	handle   func()
	round    uint64 // the step it was put in
	seq      uint64 // the order it was put in
}

// busy reports whether Batsim's server is getting a message, or has
// messages waiting: a new one then waits its turn.
func (e *Engine) busy() bool {
	return e.receiving || len(e.inbox) > 0
}

// post puts a message in the server's mailbox and returns its number (the
// server handles them in that order).
func (e *Engine) post(m message) uint64 {
	e.posted++
	m.round, m.seq = e.round, e.posted
	if e.busy() {
		e.inbox = append(e.inbox, m)
	} else {
		e.get(m)
	}
	return m.seq
}

// serverSends reports whether the server, having handled a message, finds
// its mailbox empty and tells the decision process what happened. The
// messages put in the step where it got that message do not count: in a
// SimGrid scheduling round, the actors' puts are simcalls that take effect
// after the round, whereas the server reads the mailbox at once (so a job
// ending at the instant a submission arrives is heard of after the
// decisions about it, as in real Batsim).
func (e *Engine) serverSends() bool {
	if e.receiving && e.current.round != e.round {
		return false
	}
	for _, m := range e.inbox {
		if m.round != e.round {
			return false
		}
	}
	return true
}

// get is the server getting a message: it crosses the network, or is
// handled at once if that takes no time. As in SimGrid, the message first
// waits the route's latency (over, like a sleep, when less than 1e-9 s is
// left after a step), then its byte crosses at the bandwidth (over when
// less than doneBelow of it is left): two steps.
func (e *Engine) get(m message) {
	if !m.cost.takesTime() {
		e.handle(m)
		return
	}
	e.receiving, e.current = true, m
	if m.cost.Latency > 0 {
		e.crossing = false
		e.sleep(&e.recvTimer, m.cost.Latency)
		return
	}
	e.cross()
}

// cross sends the message's byte once its latency is over.
func (e *Engine) cross() {
	if e.current.cost.Bandwidth == 0 {
		e.received()
		return
	}
	e.crossing = true
	e.sleep(&e.recvTimer, 1/e.current.cost.Bandwidth)
}

// onReceiveTimer is the message's latency, or its byte, being over.
func (e *Engine) onReceiveTimer() {
	if e.crossing {
		e.received()
		return
	}
	e.cross()
}

func (e *Engine) handle(m message) {
	e.handled = m.seq
	switch {
	case m.run != nil:
		e.noticeEnd(m.run)
	case m.decision != nil:
		e.decisionErr = m.decision.applyTo(e)
	default:
		m.handle()
	}
}

// received is the message being got arriving: the server handles it, then
// gets the messages waiting, up to the next one that takes time.
func (e *Engine) received() {
	m := e.current
	e.receiving, e.current = false, message{}
	e.handle(m)
	for !e.receiving && len(e.inbox) > 0 && e.err == nil {
		next := e.inbox[0]
		e.inbox[0] = message{}
		e.inbox = e.inbox[1:]
		e.get(next)
	}
	if len(e.inbox) == 0 {
		e.inbox = nil
	}
}

// sendDecision is the request-reply actor sending a decision: the server
// applies it once it gets it; its error, if any.
func (e *Engine) sendDecision(d Decision) error {
	e.decisionErr = nil
	e.send(message{cost: e.masterMsg, decision: d})
	return e.decisionErr
}

// send is the request-reply actor (or a submitter) sending a message and
// waiting until the server has handled it; false if the simulation failed
// or cannot go on meanwhile.
func (e *Engine) send(m message) bool {
	seq := e.post(m)
	// a killer created by the last decision puts its message after this
	// one
	e.flushKillers()
	for e.handled < seq && e.err == nil {
		d, ok := e.nextStep()
		if !ok {
			e.fail(e.stuck())
			return false
		}
		e.step(d)
	}
	return e.err == nil
}

// batchSender is a Batsim submitter (of jobs, or of external events) whose
// messages take time (Engine.masterMsg), as Batsim 4.2.1's static
// submitters run: it says hello; once the server has got that, it reads
// the clock (cur), and the items dated no later than cur make one message;
// at the first dated later, it sends that message (if any), waits until
// the server has got it, then sleeps (double)(date - cur) and reads the
// clock again: the item it slept for starts the next message. After the
// last message, it says goodbye.
type batchSender struct {
	dates   []float64 // the items', in order
	next    int       // the first item not in a message yet
	from    int       // the first item of the message being made
	cur     float64
	started bool
	timer   *timer
	deliver func(from, to int) // the server handling a message of items
	bye     func()             // the server handling the goodbye
}

// onBatchSender runs the sender at its start (its timer goes off at 0) and
// when it wakes from a sleep.
func (e *Engine) onBatchSender(b *batchSender) {
	if !b.started {
		b.started = true
		e.post(message{cost: e.masterMsg, handle: func() {
			b.cur = e.now
			e.batchOn(b)
		}})
		return
	}
	b.cur = e.now
	b.from = b.next
	b.next++
	e.batchOn(b)
}

// batchOn adds the items dated no later than cur to the message, sends it,
// and sleeps until the next item's date, or says goodbye.
func (e *Engine) batchOn(b *batchSender) {
	for b.next < len(b.dates) && !(b.dates[b.next] > b.cur) {
		b.next++
	}
	from, to := b.from, b.next
	then := func() {
		if b.next < len(b.dates) {
			e.sleep(b.timer, sleepUntil(b.dates[b.next], b.cur))
			return
		}
		e.post(message{cost: e.masterMsg, handle: b.bye})
	}
	if to == from {
		then()
		return
	}
	e.post(message{cost: e.masterMsg, handle: func() {
		b.deliver(from, to)
		then()
	}})
}

// flushKillers puts the killers' messages waiting for the request-reply
// actor's next one: it is sleeping instead.
func (e *Engine) flushKillers() {
	for _, k := range e.afterPut {
		e.post(k)
	}
	e.afterPut = e.afterPut[:0]
}
