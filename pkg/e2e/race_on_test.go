//go:build race

package e2e

// raceEnabled is true when the tests run with the race detector, so that
// the Batkube binaries they start are built with it too.
const raceEnabled = true
