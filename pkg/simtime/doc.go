// Package simtime is the home of simulated time; its packages each own one
// piece, and run in these places:
//
//   - simclock (in kubernetes-server): the clock of a run, simulated
//     seconds as Batsim counts them on a fixed epoch, and the timers of
//     time-virtualised schedulers. The broker moves it when Batsim's
//     messages say time has passed; object timestamps and the API server's
//     notion of now read it.
//   - timerq (inside simclock and the embedded engine, pkg/engine): the
//     timers' priority queue, on double-double dates.
//   - timeservice (in kubernetes-server): the clock served over HTTP
//     beside the Kubernetes API (/batkube/v1/clock): a scheduler reads now
//     and waits for an instant, which becomes a CALL_ME_LATER to Batsim.
//     timeservice/batsky serves the same clock to schedulers built with
//     batsky-go, over its ZeroMQ protocol.
//   - clockclient (in a scheduler's process): a k8s.io/utils/clock over
//     timeservice, that a Go scheduler takes in place of the real clock.
//   - kubeclock (in kube-controller-manager's process, compiled there as
//     k8s.io/utils/clock itself): the clock of every controller, reading
//     simulated time from the run's clock page (written by simclock's
//     Mirror) and waiting on timeservice, so that upstream controllers,
//     unmodified, run on simulated time.
//
// Simulated time never moves by itself: only the broker advances simclock,
// after Batsim's messages (see docs/time.md).
package simtime
