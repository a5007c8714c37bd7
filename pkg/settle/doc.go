// Package settle decides when the scheduler under test has done everything
// it can at the current simulated instant, so that the broker may let
// simulated time move on.
//
// A simulation step applies Batsim's events to the cluster (pods submitted,
// pods finished, nodes cordoned), then waits for the scheduler to react. The
// step must end neither too early (a pod that fits now would be bound at a
// later instant: the run is wrong) nor too late (wall time is wasted: the
// run is slow). A Policy makes that call; the broker asks it after every
// change it sees, and the policy answers from the scheduler's own state:
//
//   - KubeScheduler (package kubescheduler) reads an unmodified
//     kube-scheduler's queues, in-flight work and handled events from its
//     metrics endpoint and compares them with what the broker knows of the
//     cluster: exact, with no knob.
//   - Signals serves an opt-in "I am idle" signal that any scheduler can
//     send (POST IdlePath, see package signalclient): exact for the
//     schedulers that send it.
//   - Quiet takes silence for idleness: the API has seen no write for a
//     window. It is the last resort, for schedulers that say nothing; a run
//     reports how many of its steps ended that way (Stats).
//
// Auto picks among them as the run goes: the kube-scheduler policy when
// one is configured, the signals once a scheduler has sent one, silence
// otherwise.
//
// A step's wait (Settler.Wait, step.go) is this package's too: it takes
// in what clients do, waits for the controllers' Barrier (package
// controllers) and the policy to agree at one state of the store, voids a
// verdict any change since contradicts, and labels how the step ended
// (Reason: nothing pending, idle, silent, max-wait, unproven; label).
// What else a policy does (wake a wait, gate its schedulers, hold gangs'
// pod groups, count its probes, end the schedulers' waits, hear from
// them) it says in one value, Abilities.
//
// Who does what: this package decides; package broker applies a step and
// hands the wait what it needs of the cluster (Cluster: broker/settle.go);
// package simulation picks the run's policy from its configuration
// (--settle), as it assembles the rest. This package imports neither.
package settle
