// Package engine is an embedded, Batsim-compatible simulator: it reads a
// SimGrid platform and Batsim workloads, runs the simulation event by event,
// and talks to a decision process through Batsim's request/reply cycle, with
// its own Go types for the events it emits and the decisions it takes (each
// maps 1:1 onto a Batsim 4.x protocol event; the protocol codec lives
// elsewhere).
//
// # The cycle
//
//	e, err := engine.New(platform, workloads, engine.Options{ComputeSharing: true})
//	for {
//		msg, err := e.Next()     // {now, events}: what Batsim would send
//		...                      // decide
//		err = e.Apply(now, ds)   // {now', decisions}: the reply, now' >= msg.Now
//		if e.Over() { break }
//	}
//
// The first message holds SimulationBegins alone; the last SimulationEnds
// alone (answer it with an Apply without decisions). Decisions are applied at
// their timestamps: whatever happens in the simulation between the request's
// now and a decision's timestamp (a job completing, a job being submitted)
// happens first and is reported, with its own timestamp, in the next message,
// as Batsim does. A decision stamped before the request's now is applied at
// the request's now. Events of one instant come in one message: completions
// and requested calls (in the order they were scheduled), then submissions,
// then the no_more_static_job_to_submit notification after the last static
// submission. The cost of a simulation grows with its events, not with the
// simulated time: the engine jumps from one event to the next.
//
// Time is kept internally as integer nanoseconds since the start (so that
// 0.1 + 0.2 == 0.3) and shown as float seconds at the edges.
//
// # What mirrors Batsim 4.2.1
//
//   - Compute resources get ids 0..n-1 in the lexicographic order of their
//     host names (SimGrid's Engine::get_all_hosts sorts them, and Batsim 4.2.1
//     numbers them in that order: node0, node1, node10, node2...). The master
//     host (a host named master_host or with the property role=master) is not
//     a compute resource; hosts with role=storage are storage resources, with
//     ids after the compute ones. Every resource's properties get an empty
//     "role" if they had none; zone properties are merged from the outermost
//     zone inwards, inner zones winning.
//   - Static jobs of a workload are submitted in (subtime, "workload!id")
//     order, workloads in the order given.
//   - A job starts at the timestamp of its EXECUTE_JOB (real Batsim adds a
//     few simulated microseconds for its internal messages).
//   - An allocation must have exactly res resources, or res executors when a
//     mapping is given, except for parallel_homogeneous_total profiles (or
//     composed profiles made only of them). Without compute sharing, a host
//     may run one job at a time.
//   - Walltime: a job still running when walltime seconds have passed since
//     its start ends COMPLETED_WALLTIME_REACHED (return code -1); a task that
//     would end exactly at the walltime counts as reaching it. -1 or no
//     walltime means none.
//   - A profile's "ret" (default 0) is its return code: non-zero ends the job
//     COMPLETED_FAILED with that code (a failing step ends a composed job).
//   - KILL_JOB: each running job named gets a JOB_COMPLETED with state
//     COMPLETED_KILLED (return code -1) at the kill's timestamp, then one
//     JOB_KILLED lists every job named whose kill had not been asked before
//     (already finished ones included, without a JOB_COMPLETED), with the
//     progress of the killed ones. Killing a job that has not started is an
//     error.
//   - REJECT_JOB is not answered (Batsim 4.2.1 sends no JOB_COMPLETED for a
//     rejected job); the job is written to the jobs output as REJECTED.
//   - A job with a null execution time is written with 0.00001 s, as Batsim
//     does.
//   - The simulation ends when every static job has been submitted, every
//     submitted job is finished or rejected, no CALL_ME_LATER is pending and,
//     with dynamic jobs, registration_finished has been received.
//   - Anything real Batsim aborts on (an unknown job, a job not waiting to
//     start, a resource that does not exist, a busy host without compute
//     sharing, a wake-up in the past...) is an error naming what was wrong;
//     the simulation cannot go on after it.
//
// # The computation model, and what it leaves out
//
// A delay profile takes exactly its delay, whatever else runs on its hosts.
// A computation (parallel, parallel_homogeneous, parallel_homogeneous_total)
// puts a number of flops on each executor's host; alone, it takes as long as
// its slowest executor: max(flops / speed). There is no network and no I/O
// model: com amounts are ignored, as are links, routes and disks. Use real
// Batsim (SimGrid) when communications or contention on links matter.
//
// When several computations share a host (compute sharing on), their rates
// are set as SimGrid's ptask_L07 host model (which Batsim uses) sets them,
// network aside: a host offers cores × speed flops per second
// (SharePerCore, the default; ShareWholeHost offers speed and ignores cores),
// an executor never gets more than one core (speed), and the capacity is
// divided by max-min fairness over the jobs' progress rates. So a host with
// c cores runs up to c single-executor jobs at full speed; beyond that k jobs
// progress at the same fraction of their work per second (not the same flops
// per second: this is L07's rule), and a parallel job advances at the pace
// its most loaded host allows.
package engine
