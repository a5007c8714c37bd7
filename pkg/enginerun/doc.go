// Package enginerun runs the embedded simulation engine (pkg/engine) as a
// Batsim peer: it plays Batsim's side of the Batsim 4.x protocol over ZeroMQ
// against a decision process, and writes Batsim's output files. Its
// messages carry their dates with six decimals, as Batsim writes them: a
// decision process answering with those dates gets its decisions applied
// at them, as with Batsim. The decision
// process cannot tell it from real Batsim by the protocol; what the engine
// simulates (flops / speed, shared cores, SimGrid's network model, no I/O or
// energy) and how
// it differs from Batsim 4.2.1 is described in package engine.
package enginerun
