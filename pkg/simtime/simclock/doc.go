// Package simclock is the simulated clock of a Batkube run: simulated seconds,
// as Batsim counts them, mapped onto a fixed epoch so that object timestamps
// are reproducible, and the timers of time-virtualised schedulers, which fire
// when the broker moves simulated time past them.
package simclock
