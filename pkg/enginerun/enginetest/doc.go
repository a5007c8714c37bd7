// Package enginetest provides decision processes for testing Batsim peers
// over the real protocol: a serving loop and a trivial first-fit scheduler.
package enginetest
