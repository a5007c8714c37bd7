// Package simtime gives a scheduler plugin "now": the simulated time of a
// Batkube run, read from GET /batkube/v1/clock on the API server the
// scheduler talks to, or wall time on a cluster that serves no such clock
// (a real one answers 404 or 403), which Clock says in the log.
//
// A plugin that measured waiting with time.Now() would compute nonsense in a
// simulation running 10,000 times faster than real time. Reading the clock is
// an HTTP round trip, too costly for a queue's sort function, so Clock keeps
// its latest reading (Now, no I/O) and reads again on demand: Read always,
// ReadIfChanged only when a key given by the caller differs from the one of
// the previous keyed reading. The plugin's key is the resourceVersion its
// scheduler's pod and node informers have stored: simulated time moves only
// between the steps of a run, each step changes pods, and an informer stores
// a change before any handler hears of it. So a reading keyed that way,
// taken before a pod enters the scheduling queue, is the instant of the
// changes the scheduler acts upon; the rest of the time Now costs nothing.
//
// This is a small reader of Batkube's clock protocol (package timeservice of
// the Batkube module documents it), not an import of the Batkube module: the
// plugin's module pins exactly the dependency versions of the bundled
// kube-scheduler so that both share one build cache, and Batkube's own
// dependencies would change them.
package simtime
