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
// and requested calls (in the order their SimGrid actions were created),
// then submissions, then the no_more_static_job_to_submit notification
// after the last static submission, then external events (with
// no_more_external_event_to_occur after the last). The cost of a simulation
// grows with its events, not with the simulated time: the engine jumps from
// one event to the next.
//
// # Time
//
// Simulated time is SimGrid's clock, a double number of seconds (any
// finite date >= 0: 1e17 s as well as 0.1), and dates are computed as
// SimGrid and Batsim compute them (see clock.go): the clock advances by
// steps, each the least time left over the pending actions (sleeps, whose
// time left is decremented at each step, computations, whose work left is),
// added with rounding; a sleep with less than 1e-9 s left is over, a
// computation with less than 1e-14 of its work left is done. So a delay of
// 20.7 s started at 1e16 s, while three other jobs' steps ended, ends 22 s
// later (doubles are 2 s apart there), as with Batsim; 0.1 + 0.2 is
// 0.30000000000000004. Job submitters and events submitters sleep from one
// date to the next as Batsim's do ((double)(subtime - clock), computed in
// long double), and submit a job they slept for even if the clock reads an
// ulp before its subtime. The outputs are computed from those dates in long
// double (x87's 80 bits, as Batsim computes them on x86-64) and cast to
// double (internal/ld), so that their last digits are Batsim's. The
// engine's timers are ordered by a virtual time, the exact sum of the
// steps (a double-double); the time left of sleeps shorter than 1024 s is
// not rounded at each step (its rounding is below 1e-12 s).
//
// # The computation model, and what it leaves out
//
// The engine simulates delays, computations and the network, each part in
// a file named for it:
//
//   - A delay profile takes exactly its delay, whatever else runs on its
//     hosts; a composed profile runs its steps in order, repeat times
//     (run.go runs a job's profile leaf by leaf).
//
//   - A computation puts flops on each executor's host (parallel: its
//     amount for each executor; parallel_homogeneous: cpu on each;
//     parallel_homogeneous_total: cpu split evenly over them). An executor
//     uses one core of its host at the speed of the host's initial power
//     state: computation time = flops / host speed, and alone a job takes
//     the time of its slowest executor. A leaf that computes or
//     communicates is one SimGrid parallel task (parallel_task.go): its
//     flops and its bytes progress together, at one rate.
//
//   - Compute sharing (Options.ComputeSharing, Batsim's
//     --enable-compute-sharing) lets jobs share a host's cores, as SimGrid's
//     ptask_L07 host model (the one Batsim uses) shares them:
//     a host offers cores × speed flops per second (SharePerCore, the
//     default; ShareWholeHost offers speed and ignores cores), an executor
//     never gets more than one core (speed), and the capacity is divided as
//     SimGrid's fair bottleneck solver (ptask_L07's default,
//     fair_sharing.go) divides it: in equal flops per second between the
//     executors on the host, unless one is held back elsewhere. So a host
//     with c cores runs up to c single-executor jobs at full speed; beyond
//     that k executors get speed × c / k flops per second each (a job of
//     1e9 flops and one of 3e9 sharing a core end at 2 s and 4 s), two
//     executors of one job on one host take two shares, and a parallel job
//     advances at the pace its most loaded host allows.
//
//   - The network is the platform's (platform_network.go reads it, with
//     the units of units.go): its links (bandwidth, latency, SHARED,
//     SPLITDUPLEX or FATPIPE), routes and zone routes, clusters (private
//     links, limiters, backbones, loopbacks) and cabinets, routed
//     (routing.go) as SimGrid 3.32 routes them (Full, Floyd, Dijkstra,
//     Cluster, Vivaldi, None).
//
//   - Jobs communicate as in SimGrid's ptask_L07 model (bandwidth.go): a
//     parallel task that communicates (the com of parallel,
//     parallel_homogeneous and parallel_homogeneous_total profiles) first
//     waits the longest latency of its routes, then progresses at the pace
//     its hosts and links allow, each link's bandwidth shared with the
//     other tasks crossing it by the fair bottleneck solver (the bytes of
//     all the task's flows on a SHARED link or a SPLITDUPLEX link's way
//     add up; a FATPIPE link bounds each flow alone, so only the task's
//     largest flow on it counts), bounded by the TCP window (gamma / (2 ×
//     latency × bytes)).
//
//   - Batsim's own messages cross the network too (message_time.go: the
//     time a message takes; server.go: Batsim's server getting them): a
//     job's end reaches Batsim's server after the route from the job's
//     first host to the master host (latency, then one byte at its
//     bandwidth); the server gets one message at a time, in the order they
//     were put, and tells the decision process only when its mailbox is
//     empty; every message of Batsim's actors on the master host
//     (submitters' hello, batches and goodbye, each decision and the
//     SCHED_READY after them, waiters, killers) crosses its route to
//     itself, as in Batsim 4.2.1: SimGrid's default loopback (one byte at
//     10 GBps, 1e-10 s) or what the platform routes (15 µs on Batsim's
//     small_platform.xml, 600 µs on cluster512.xml). Options.NoNetwork
//     turns Batsim's messages back into instants.
//
// There is no I/O model (disks are ignored; the profile types
// parallel_homogeneous_pfs and data_staging are refused, as are send, recv,
// smpi and usage_trace), no energy model (no power states to switch:
// consumed_energy is -1 and consumed_joules 0 in the outputs). Use real Batsim
// (SimGrid) when I/O or energy matter: the protocol and the outputs are the
// same, so the same decision process runs against both.
//
// # What mirrors Batsim 4.2.1
//
//   - Compute resources get ids 0..n-1 in the lexicographic order of their
//     host names, byte by byte (SimGrid's Engine::get_all_hosts sorts them,
//     and Batsim 4.2.1 numbers them in that order: Bourassa, Jupiter,
//     alpha, node0, node1, node10, node2...). The master host (the host
//     named by PlatformOptions.MasterHost, Batsim's -m or --master-host,
//     master_host by default, or a host with the property role=master;
//     exactly one) is not a resource; a host named by -m must have no role
//     property (Batsim makes it "role,master" and aborts). Hosts with
//     role=storage are storage resources, with ids after the compute
//     ones. Clusters name their hosts prefix, number, suffix for each
//     number of their radical ("1-4,6"), with the cluster's speeds (its
//     first) and cores; cabinets, inside a zone routed as a Cluster, name
//     theirs the same way, with one speed and one core. Speeds are a
//     number then a unit right after it (1Gf, 2gigaflops), one per power
//     state, the host's pstate attribute choosing the one simulated. Every resource's
//     properties get an empty "role" if they had none; the core attribute
//     is not a property. Zone properties are merged from the outermost zone
//     inwards, inner zones winning; a <cluster>'s <prop>s are both its
//     zone's properties and each of its hosts' (SimGrid copies them).
//   - Workloads are checked as Batsim loads them: the fields each profile
//     type requires (com included), a parallel profile with one cpu amount
//     per resource of the jobs that use it directly, res an integer,
//     walltime -1 or positive.
//   - Static jobs of a workload are submitted in (subtime, "workload!id")
//     order, workloads in the order given; no_more_static_job_to_submit
//     follows the last submission (never comes without any workload).
//   - An allocation must have exactly res resources, or res executors when
//     a mapping is given, except for parallel_homogeneous_total profiles (or
//     composed profiles made only of them). Without compute sharing, a host
//     runs one job at a time: real Batsim aborts on a second one
//     ("time-sharing on compute machines is disabled"); the engine ends the
//     run with a *DecisionError on the EXECUTE_JOB's alloc.
//   - Walltime (-1 or none: no walltime), as Batsim's do_delay_task and
//     execute_parallel_task handle it: the job carries the walltime left
//     from leaf to leaf (a delay takes its length off it, a computation the
//     time it ran); a delay runs its whole length only if it is shorter
//     than the time left, and otherwise sleeps until the walltime and
//     reaches it (a delay as long as the walltime reaches it, and so does
//     any delay once no time is left); a computation is waited for until
//     the walltime, and completes if it ends in the step of its timeout
//     (SimGrid handles the computation, started first, before the timeout:
//     a computation as long as the walltime completes). Reaching it ends
//     the job COMPLETED_WALLTIME_REACHED (return code -1). Where rounding
//     takes the time left below zero, the rest of the job has no walltime,
//     as in Batsim.
//   - External events (Options.Events, Batsim's --events): an events
//     file's events occur at their timestamps (sorted by timestamp, then
//     machine_available, machine_unavailable and generic events, then as
//     written). machine_unavailable makes machines unavailable: the jobs
//     running on them go on and end as they would (Batsim kills none: what
//     to do is left to the decision process), the machines stay
//     unavailable when their jobs end, and starting a job on one is an
//     error (Batsim aborts); machine_available makes them computing (if a
//     job still runs on them) or idle. Either is notified with a NOTIFY
//     event_machine_unavailable or event_machine_available naming the
//     machines; a generic event (of another type, with
//     --forward-unknown-events) is forwarded as a NOTIFY whose data is the
//     event's object. no_more_external_event_to_occur follows the last
//     event of the last file, and the simulation does not end before.
//     Unavailable machines count in no column of _machine_states.csv; their
//     time goes to _schedule.csv's time_unavailable. A machine made
//     unavailable twice, or available while it is not unavailable, is an
//     error (Batsim aborts).
//   - A profile's "ret" (default 0) is its return code: non-zero ends the
//     job COMPLETED_FAILED with that code (a failing step ends a composed
//     job).
//   - KILL_JOB: each running job named gets a JOB_COMPLETED with state
//     COMPLETED_KILLED at the kill's timestamp, with return code -2 if it
//     was computing (Batsim cancels its parallel task, which returns -2) or
//     -1 if it was in a delay (it keeps its initial return code); then one
//     JOB_KILLED lists every job named whose kill had not been asked before
//     (jobs that finished since the last message included, without a
//     JOB_COMPLETED), with the progress of the killed ones. Killing a job
//     that has not started, or a rejected one, is an error.
//   - Batsim forgets a job once the message after its end (its
//     JOB_COMPLETED, or the next one after its REJECT_JOB) is sent: any
//     later decision naming it (KILL_JOB, SET_JOB_METADATA, EXECUTE_JOB...)
//     is an error, as real Batsim aborts on it ("Cannot get job ...: it does
//     not exist"). SET_JOB_METADATA on a job that ended since the last
//     message is accepted and changes nothing (its row is written).
//   - REJECT_JOB is not answered (Batsim 4.2.1 sends no JOB_COMPLETED for a
//     rejected job); the job is written to the jobs output as REJECTED.
//   - CALL_ME_LATER must be after now (Batsim aborts otherwise) and is
//     answered at least 10 µs later (Batsim's waiter never sleeps less).
//   - Dynamic jobs: REGISTER_PROFILE creates its workload if needed;
//     REGISTER_JOB needs a subtime and an existing profile, and the job is
//     submitted at once (with AcknowledgeDynamicJobs, its JOB_SUBMITTED
//     comes at once, whatever its subtime); the simulation ends only after
//     NOTIFY registration_finished.
//   - A job with a null execution time is written with 0.00001 s, as Batsim
//     does.
//   - The simulation ends (SIMULATION_ENDS) when every static job has been
//     submitted, every submitted job is finished or rejected, no
//     CALL_ME_LATER is pending and, with dynamic jobs, registration_finished
//     has been received.
//   - Anything real Batsim aborts on (an unknown job, a job not waiting to
//     start, a resource that does not exist, a busy host without compute
//     sharing, a wake-up in the past...) is a *DecisionError naming the
//     event of the reply and its field; the simulation cannot go on after
//     it.
//
// # What differs from Batsim 4.2.1
//
//   - Batsim reads the dates of a decision process's replies with
//     RapidJSON's default parsing, which past 15 significant digits may be
//     a double off the nearest ("100000000000.00003" is read
//     100000000000.00005); package enginerun reads them exactly, so from
//     1e10 s on a decision may take effect an ulp earlier than in Batsim.
//     The engine's clock, from 1e10 s on, may also be an ulp off Batsim's in
//     the dates of its messages (not in its outputs).
//   - Batsim's one-byte messages never wait for bandwidth: in SimGrid a
//     link loaded by a job's communications slows a message's byte (a
//     nanosecond or so). Bypass routes, <peer>s and the torus, fat-tree and
//     dragonfly topologies of <cluster> (routed as a flat cluster) are not
//     read, and Platform.NetworkNotes says so; WIFI links are taken as
//     SHARED. Hosts with no route to the master host (real Batsim aborts
//     when a job ends there) hear of their jobs' ends at once, and a
//     NetworkNote says so.
//   - Batsim writes the dates of its messages with six decimals; package
//     enginerun does too, so that a decision process answering with the
//     now it read gets its decisions applied at that date (possibly up to
//     5e-7 s after the engine's clock: the engine then advances to it, as
//     Batsim sleeps until it). The engine itself takes any date.
//   - Events of one instant: the engine reports them in one message,
//     completions first. Real Batsim reports the completion of a computing
//     job (not of a delay one) that ends at the instant of a submission in
//     a second message, after the decision about the submission, and sends
//     no_more_static_job_to_submit (and no_more_external_event_to_occur)
//     in a message of its own. With the same
//     decisions the outputs are identical (checked by replaying real runs'
//     decisions); a live scheduler may decide differently with real Batsim,
//     since it sees the hosts still busy.
//   - No energy, power states, storage or MPI profiles;
//     _schedule.trace is not written. Batsim's -r (--add-role-to-hosts) is
//     not supported.
//   - _machine_states.csv (Options.MachineStatesOutput; written by default,
//     as by Batsim, unless --disable-machine-state-tracing) has Batsim's
//     header and a row after each job start and each job end, with no host
//     ever sleeping or switching. Replaying real runs' decisions gives the
//     same file byte for byte (testdata/batsim-4.2.1): a job started at 0
//     is written at 4e-10 or 5e-10 where Batsim's messages cross SimGrid's
//     default loopback, and rows of jobs ending at the instant others start
//     follow those sub-nanosecond latencies, as in Batsim. Ties of %g's six
//     digits to the nanosecond are rounded up, as Batsim's slightly late
//     clock rounds them. A waiting time of an ulp below zero (a job started
//     where SimGrid's rounded steps make the clock read an ulp before its
//     subtime) is written -0.000000, as Batsim writes it.
//   - time_idle, time_computing and time_unavailable are Batsim's
//     accounting (each host's time in each state up to its last change,
//     summed in long double), and equal Batsim's for
//     the same decisions. They depend on placement: with compute sharing,
//     jobs overlapping on one host count once in time_computing, and a
//     host's idle time stops at its last job's end, so runs of one trace
//     with different placements differ.
//   - A simulation that cannot go on (jobs wait, none runs, no call is
//     pending) is an error at once, where real Batsim waits for ever or
//     SimGrid reports a deadlock.
//   - A storage resource in an EXECUTE_JOB is an error even for a delay
//     profile (Batsim only refuses computations on storage hosts).
//   - A negative ret is refused when the workload is read (Batsim would
//     report -1 as COMPLETED_WALLTIME_REACHED, -2 as COMPLETED_KILLED and
//     abort on others); composed profiles are checked for cycles.
//   - _schedule.csv's batsim_version is "batkube-engine".
//   - Where real Batsim aborts, the engine returns an error and the run
//     (package enginerun) still writes both outputs with the jobs finished
//     so far; real Batsim aborts without flushing them (it writes them only
//     when its connection to the decision process breaks). enginerun also
//     creates the folder of the export prefix, which Batsim requires to
//     exist.
package engine
