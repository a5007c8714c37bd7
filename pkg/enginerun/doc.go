// Package enginerun runs the embedded simulation engine (pkg/engine) as a
// Batsim peer: it plays Batsim's side of the Batsim 4.x protocol over ZeroMQ
// against a decision process, and writes Batsim's output files.
package enginerun
