// Package clockclient gives a scheduler the simulated time of a Batkube run:
// Clock implements k8s.io/utils/clock's WithTicker and WithDelayedExecution
// (Now, Since, After, NewTimer, AfterFunc, Sleep, Tick, NewTicker) over the
// HTTP clock that Batkube serves beside the Kubernetes API (package
// timeservice, /batkube/v1/clock). Hand it to the scheduler wherever it takes
// a clock.Clock; it is pure Go (no cgo, no ZeroMQ).
//
//	clk, err := clockclient.New("http://127.0.0.1:8001", clockclient.Options{})
//	defer clk.Close()
//
// With a rest.Config (TLS, token), pass rest.HTTPClientFor(cfg) as
// Options.HTTPClient and cfg.Host as the server.
//
// Costs. Now and Since make one HTTP round trip each (a GET on a kept-alive
// connection: some 100-200 µs on loopback, see BenchmarkNow). This is the
// price of exactness: simulated time moves only when the broker sets it, at
// moments a client cannot foresee, so a cached or pushed value would be
// stale right after a step, and a Now that starts after the broker moved the
// clock (say, after the scheduler saw a pod created at that step) would read
// the old time. With a round trip it always reads the new one.
//
// A timer or ticker costs one goroutine and one pending HTTP request (one
// connection under HTTP/1.1) while it waits; creating, resetting or stopping
// one does not block. The server registers each in the simulated clock, so
// the broker asks Batsim to wake the simulation exactly at its instant; it
// fires when simulated time reaches it, never before, and carries that
// simulated time. The instant of NewTimer(d) or Reset(d) is d after the
// simulated time at which the server receives the request.
//
// Semantics follow the time package of Go 1.23 and later: Stop and Reset
// report whether the timer was active (a fired timer whose value has not
// been received still counts as active), and after they return no stale
// value is received from C. A ticker drops ticks for a slow receiver and
// never ticks twice for one instant. NewTicker with a non-positive interval
// reports an error through Options.OnError and returns a ticker that never
// ticks (instead of panicking as time.NewTicker does); Tick returns nil.
//
// Failures. A failed wait is retried (in wall-clock time, 10 ms doubling to
// 1 s) for the same instant; a refused one (4xx: bad token, no clock served)
// is reported and not retried, so its timer never fires. A failed Now
// returns the latest simulated time this Clock has seen (the zero time before
// any) and reports the error; NowContext returns it. After Close, timers
// never fire and Sleep returns at once.
package clockclient
