package engine

import "fmt"

// The time Batsim's messages take.
//
// Batsim runs a job's actor on the first host of its allocation and its
// server on the master host; when the job ends, the actor sends the server
// a message of one byte (send_message in Batsim's ipp.cpp), and the
// decision process hears of the end only when the server has it. With
// SimGrid's ptask_L07 model, the one Batsim sets, a message alone on its
// route takes the route's latency (the sum of its links', plus the
// distance between the hosts in a Vivaldi zone) plus its size over the
// narrowest bandwidth, with no latency or bandwidth factor. So on
// a platform whose routes have latency every job end reaches the decision
// process that much later (1.6 ms on Batsim's cluster512.xml), although
// the job ends, and its hosts are free, at its own date. The engine
// computes each host's route to the master host as SimGrid does
// (routing.go) and delays JOB_COMPLETED by that message's time
// (Resource.Notice); the messages between Batsim's actors on the master
// host cross its route to itself (Platform.MasterMessage). How Batsim's
// server gets them, one at a time, is server.go's.
//
// A message is timed as if alone on its route. The server getting one at
// a time, messages never share a link with each other; but in SimGrid a
// link loaded by jobs' communications (bandwidth.go) slows a message's
// byte too (by a nanosecond or so), which the engine leaves out.

// MessageTime is the time a message of one byte takes on a route when it is
// alone there (SimGrid's ptask_L07 model, with no latency or bandwidth
// factor): the route's latency, then the byte at its narrowest bandwidth.
type MessageTime struct {
	// Latency is the sum of the route's links' latencies, plus the
	// distance between the hosts in a Vivaldi zone, in seconds.
	Latency float64
	// Bandwidth is the narrowest link's, in bytes per second; 0 for a
	// route of no link.
	Bandwidth float64
}

// takesTime reports whether the message takes any time.
func (m MessageTime) takesTime() bool { return m != MessageTime{} }

// Seconds is the message's time: latency plus a byte at the bandwidth.
func (m MessageTime) Seconds() float64 {
	if m.Bandwidth == 0 {
		return m.Latency
	}
	return m.Latency + 1/m.Bandwidth
}

// messageTime is the time one byte takes from host src to host dst.
func (n *network) messageTime(src, dst string) (MessageTime, error) {
	s, d := n.points[src], n.points[dst]
	if s == nil || d == nil {
		return MessageTime{}, fmt.Errorf("no host %q or %q", src, dst)
	}
	var r pathAcc
	if err := n.route(s, d, &r, 0); err != nil {
		return MessageTime{}, fmt.Errorf("route from %q to %q: %w", src, dst, err)
	}
	return MessageTime{Latency: r.latency, Bandwidth: r.minBW}, nil
}

// noticeTime is the time the end message of a run takes to the master
// host: from its first host (Batsim runs the job's actor there).
func (e *Engine) noticeTime(r *run) MessageTime {
	if e.opts.NoNetwork || len(r.alloc) == 0 {
		return MessageTime{}
	}
	return e.platform.Resources[r.alloc[0]].Notice
}
