// Package batsky serves simulated time to schedulers built with batsky-go
// (github.com/oar-team/batsky-go), the patched Go time package of the 2020
// Batkube prototype, over ZeroMQ, and turns their timers into timers of the
// simulated clock, which the broker asks Batsim to wake it up for.
//
// # The protocol, as batsky-go and the prototype speak it
//
// Read in oar-team/batsky-go at 2b89772 (2020-08-07, its last commit): time/requester.go
// (RequestTime, run), time/time.go (now, runtimeNano, Now), time/sleep.go
// (when, startTimer, NewTimer, Reset, Sleep, AfterFunc), time/tick.go
// (NewTicker) and README.md; in oar-team/batkube at ba3620e (2020-08-17):
// pkg/broker/broker.go (handleTimeRequestsFromScheduler,
// processTimerRequests, the --batsky-endpoint flag) and pkg/broker/zmq.go;
// in oar-team/batsky-go-poc at dc45ec3: broker-go/broker.go (a mock broker).
// No code was taken from them.
//
//   - Sockets. The scheduler's time package binds a ZeroMQ REP socket to
//     tcp://127.0.0.1:27000, hard-coded (time/requester.go, run; Connect
//     until commit 33cc99b, Bind since), the first time the scheduler asks
//     for the time. The broker holds the REQ socket and connects to it
//     (pkg/broker/zmq.go, NewRequestSocket; flag --batsky-endpoint, default
//     tcp://127.0.0.1:27000). The broker is therefore the requesting side:
//     a time server here is a ZeroMQ client. Before 33cc99b the REP socket
//     connected and the broker bound (batsky-go-poc's mock broker binds its
//     REQ): Options.Bind serves those builds. Still older builds (2020-04,
//     a second handshake socket on port 27001) are not supported.
//   - One exchange is four messages, the broker always starting:
//     1. broker → scheduler: the five bytes "ready";
//     2. scheduler → broker: a JSON array of integers, the durations in
//     nanoseconds of the timers requested since the last exchange ("[]" when
//     none; plain time readings are not listed);
//     3. broker → scheduler: the current simulated time, eight bytes, an
//     unsigned 64-bit little-endian count of nanoseconds;
//     4. scheduler → broker: the four bytes "done".
//     batsky-go panics on anything else in messages 1 and 3 (other text
//     than "ready", fewer than eight bytes).
//   - The broker answers at once, with the current time, never later: the
//     prototype loops exchanges back to back in a goroutine of its own
//     (batsky-go's README: "an empty message is sent anyways so as not to
//     slow down the simulation"). Scheduler goroutines that called
//     RequestTime meanwhile block until the next exchange and all get the
//     time of message 3.
//   - time.Now() and friends call RequestTime(0): they only wait for message
//     3. batsky-go builds Now as time.Unix(0, n), so n is read as Unix
//     nanoseconds; the prototype sent nanoseconds since the start of the
//     simulation (its objects were stamped on the Unix epoch too).
//   - NewTimer(d), After, Sleep, AfterFunc, Reset and NewTicker compute the
//     timer's instant with when(d) = RequestTime(d) + d for d > 0: the
//     duration travels in message 2 of the next exchange, and the instant is
//     the time of message 3 plus d. A goroutine per timer then polls the
//     time (RequestTime(0) in a loop, one exchange per turn); once it reads a
//     time at or past the instant it fires, after one more exchange (the loop
//     reads the time again before calling the timer's function). The broker
//     does nothing when the instant comes: the timer fires within two
//     exchanges after simulated time has reached it.
//   - CALL_ME_LATER: the prototype turned each duration into a CALL_ME_LATER
//     at now + d rounded to the millisecond (processTimerRequests), behind an
//     enableCallMeLaters switch that its final version leaves off
//     ("deprecated"), relying on periodic wake-ups instead.
//
// # What Server does
//
// Server plays the broker's part: it runs exchanges back to back (or at most
// one per Options.Interval) and, at message 3, reads the Clock once,
// registers a Clock timer at that time plus each duration of message 2 (so
// the timers appear in Clock.NextTimer, the broker asks for a CALL_ME_LATER
// at the earliest, and Clock.Set reports them fired), and answers that time
// as clock.Now().UnixNano(): batsky-go's Now then equals the simulated time
// that stamps the API's objects. Run with the epoch at 1970-01-01T00:00:00Z
// to send nanoseconds since the start, exactly as the prototype did. Instants
// are exact to the nanosecond, not rounded to the millisecond.
//
// A scheduler that dies or restarts mid-exchange (its connection drops) is
// handled by opening a fresh socket and starting over with "ready".
//
// # What cannot be supported, and why
//
//   - Cancelling timers: the protocol carries no cancellation, so a stopped
//     or reset batsky-go timer still wakes the simulation at its instant (one
//     needless step), and its Clock timer is removed only when it fires.
//   - Ticks after the first: batsky-go re-arms a ticker locally
//     (t.when = currentTime + period) without telling the broker, so only a
//     ticker's first instant becomes a Clock timer; later ticks fire at the
//     first exchange after their instant, whenever the simulation gets there
//     for other reasons.
//   - Knowing when a scheduler has seen a new time: plain readings are not
//     listed in message 2, and a timer fires in the scheduler only at the
//     exchange after the one that carried the new time, so the broker must
//     let a few exchanges pass (its quiet window) after Set wakes timers.
//   - Epochs before 1970 or after 2262: batsky-go maps a negative time to
//     the largest one, and int64 nanoseconds end in 2262; New refuses a
//     Clock whose epoch is before 1970, and times beyond 2262 are sent as the
//     largest representable one.
package batsky
