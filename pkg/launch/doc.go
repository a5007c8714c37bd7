// Package launch runs a whole simulation: Batkube's API server and broker
// (kubernetes-server --simulate), a scheduler (the bundled upstream
// kube-scheduler by default, or any command) and Batsim — a real batsim
// binary, or Batkube's embedded engine (batkube-engine) that speaks the same
// protocol over the same socket. Each is a process of its own, as a user
// would run them by hand, so the run exercises exactly that path and the
// summary can report each process's CPU time and peak memory.
package launch
