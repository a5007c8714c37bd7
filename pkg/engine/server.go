package engine

// Batsim's server receives one message at a time. Its actors put their
// messages in its mailbox (a job's end from the job's first host, a
// submission from a submitter, an external event, a waiter's wake-up, the
// decisions of the request-reply actor), and the server gets them in the
// order they were put; a message crosses the network only once the server
// gets it, so a message from a host whose route to the master host has
// latency (network.go) keeps the server busy for that time, and the
// messages behind it wait. The server tells the decision process what
// happened only when its mailbox is empty. So two jobs ending at once on
// hosts 120 µs away from the master are heard of at +120 µs and +240 µs,
// in one message sent at +240 µs.
//
// The engine keeps that order: while a job's end message crosses the
// network (Engine.transfer), what the server would get next waits in
// Engine.inbox, and no message is sent to the decision process. Messages
// from the master host itself take no time (real SimGrid gives them its
// loopback's tenths of a nanosecond, which the engine leaves out).

// inboxItem is a message waiting for Batsim's server: a job's end message
// (it then crosses the network), or what the server does when it gets a
// message from the master host.
type inboxItem struct {
	notice *run
	do     func()
}

// busy reports whether Batsim's server is getting a message from afar, or
// has messages waiting: a new message then waits its turn.
func (e *Engine) busy() bool {
	return e.transfer != nil || (len(e.inbox) > 0 && !e.draining)
}

// later queues what the server does with a message from the master host
// until it gets it.
func (e *Engine) later(do func()) {
	e.inbox = append(e.inbox, inboxItem{do: do})
}

// receive is the server getting a job's end message: at once if it comes
// from a host at no distance, or once it has crossed the network.
func (e *Engine) receive(r *run) {
	if delay := e.noticeDelay(r); delay > 0 {
		e.transfer = r
		e.sleep(&r.notice, delay)
		return
	}
	e.noticeEnd(r)
}

// received is a job's end message arriving: the server handles it, then
// gets the messages waiting, up to the next one that must cross the
// network.
func (e *Engine) received(r *run) {
	e.transfer = nil
	e.noticeEnd(r)
	e.draining = true
	for e.transfer == nil && len(e.inbox) > 0 && e.err == nil {
		it := e.inbox[0]
		e.inbox[0] = inboxItem{}
		e.inbox = e.inbox[1:]
		if it.notice != nil {
			e.receive(it.notice)
		} else {
			it.do()
		}
	}
	e.draining = false
	if len(e.inbox) == 0 {
		e.inbox = nil
	}
}

// waitIdle runs the simulation until the server has got every message
// waiting: a decision of the request-reply actor waits its turn too.
func (e *Engine) waitIdle() {
	for e.busy() && e.err == nil {
		d, ok := e.nextStep()
		if !ok {
			return
		}
		e.step(d)
	}
}
