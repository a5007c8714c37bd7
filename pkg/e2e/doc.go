// Package e2e runs unmodified upstream Kubernetes binaries (kube-scheduler
// 1.37 and 1.18, kubectl 1.37, built by `make upstream` into bin/) against an
// in-process Batkube API server. The tests fail, rather than skip, when a
// binary is missing: `make test` builds them first.
package e2e
