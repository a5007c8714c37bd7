// Package e2e runs unmodified upstream Kubernetes binaries (kube-scheduler
// 1.37 and 1.18, kubectl 1.37, kube-controller-manager 1.37, Kueue's
// manager and the QoS-driven kube-scheduler, built by `make upstream` into
// bin/, or found in $BATKUBE_BIN) with Batkube. Most tests run whole
// simulations as batkube-run does (launch.Run): separate processes over
// real ZeroMQ and HTTP, kubernetes-server, batkube-engine and the example
// schedulers built from this checkout for the tests (with the race
// detector when the tests have it), beside the upstream binaries. The
// README's, the campaigns' and the reports' tests run the batkube-run,
// batkube-swf, batkube-campaign and batkube-report commands themselves,
// and the start-up and memory benchmarks a kubernetes-server process. The
// kubectl and kube-scheduler tests that need no simulation (and the
// server-side dry run of a campaign's Job) run against an in-process
// Batkube API server (servertest). The tests fail, rather than skip, when
// an upstream binary is missing: `make test` builds them first.
package e2e
