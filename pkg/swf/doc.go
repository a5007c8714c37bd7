// Package swf reads traces in the Standard Workload Format (SWF) of the
// Parallel Workloads Archive and converts them into Batsim workloads of
// delay jobs.
//
// It owns two things: the faithful reading of an SWF file (Read, ReadFrom
// and ReadFile, the last two also reading gzip-compressed traces:
// every header comment and all 18 fields of every job line, typed, -1 kept
// as -1) and the conversion of such a trace into a Batsim workload (Convert:
// which records are kept, how many hosts a job asks for, its delay and
// walltime, and the requests its profile carries). It knows nothing of
// Kubernetes, pods, nodes or the broker: the "cpu" and "memory" fields it
// may put in a delay profile are plain numbers and quantity strings that
// the rest of Batkube interprets. It has no global mutable state.
//
// # The format
//
// The definition followed is the archive's page "The Standard Workload
// Format", version 2.2 (www.cs.huji.ac.il/labs/parallel/workload/swf.html).
// What this package relies on, field by field:
//
//   - A job is one line of 18 whitespace-separated numbers; lines starting
//     with ';' are comments, and the header comments at the top of a file
//     have the form "; Key: value" (Version, Computer, Installation,
//     MaxJobs, MaxRecords, Preemption, UnixStartTime, TimeZoneString,
//     StartTime, EndTime, MaxNodes, MaxProcs, MaxRuntime, MaxMemory,
//     AllowOveruse, MaxQueues, Queues, Queue, MaxPartitions, Partitions,
//     Partition, Note...). Read keeps every comment, in order, keyed or
//     free; it also accepts blank lines, CRLF line ends, tabs, leading
//     spaces, and integral values written as decimals ("123.0").
//   - A field that is irrelevant or unknown holds -1 (the definition: such
//     fields "appear with a value of -1"). Read keeps -1; Convert treats
//     any negative value as unknown.
//   - Time fields (submit, wait, run, average CPU, requested and think
//     times) are seconds and may be fractional, which the definition
//     permits; the other fields are integers, except the two memory fields
//     (kilobytes per processor, averages), which Read also keeps as
//     float64. A run time of 0 is possible: per the definition it means
//     that the job ran for less than half a second.
//   - Field 5, the number of allocated processors, is in most cases the
//     number the job used; field 8 is the number it requested.
//   - Field 9, the requested time, is in many logs the user's runtime
//     estimate (upper bound) used for backfilling; the definition lets a
//     header comment say that it is CPU time instead, which this package
//     does not try to detect.
//   - Field 11, the status: 1 completed, 0 failed, 5 cancelled (added in
//     version 2.1), -1 for models, where it is meaningless. The definition
//     allows other values when a log records checkpointing or swapping (its
//     usage note on the subject, and the "Preemption" header comment): the
//     lines of a job's partial executions, 2 (to be continued), 3 (the last
//     part, the job completed) and 4 (the last part, the job failed), the
//     job as a whole keeping its own line with status 0, 1 or 5.
//
// # Conversion conventions
//
// Convert follows the conventions of Batsim 4.2.1's own converter
// (tools/swf_to_batsim_workload_delay.py) where they apply, and the
// definition above for the rest:
//
//   - One job line becomes one Batsim job whose id is the SWF job number,
//     whose profile is a delay of exactly the run time (field 4), and whose
//     submission time is the SWF submit time shifted so that the first kept
//     job submits at 0 (Options.KeepAbsoluteTimes keeps the trace's own
//     times). Jobs are sorted by submit time, then job number. (Batsim's
//     converter rounds delays up to the next whole second, floor(run) plus
//     one, to share profiles; this package keeps the exact run time.)
//   - Processors: the requested number (field 8) when it is known (> 0),
//     else the allocated one (field 5); Options.Processors set to
//     ProcessorsAllocated reverses the preference, allocated (Batsim's
//     converter's choice) then requested.
//   - Hosts: with Options.CoresPerHost 0, Batsim's convention, one
//     processor is one host: res = processors, and the profile carries no
//     cpu nor memory (Batkube then gives each pod its host to itself). With
//     CoresPerHost C > 0, res = ceil(P/C) hosts and each of the res pods
//     requests cpu = ceil(P/res) cores, so that no pod asks more than C and
//     all together cover P; memory, when known, is the requested memory per
//     processor (field 10; or, with Options.MemoryFromUsed, the used memory,
//     field 7, when the requested one is unknown) times the pod's cores,
//     rounded up to a whole Mi.
//   - Walltime (Options.Walltime): WalltimeMax, the default and Batsim's,
//     is max(requested time, WalltimeFactor x run time), the factor being 2
//     by default; WalltimeRequested is the requested time alone, or no
//     walltime when it is unknown; WalltimeNone gives no job a walltime.
//   - Profiles are named after their content ("d120", "d120_c4_m2Gi"), so
//     that the output is the same for the same trace and options.
//   - nb_res (Options.NbRes, else the header's MaxProcs, else its MaxNodes,
//     converted into hosts through CoresPerHost, else the biggest kept job).
//
// # Cleaning
//
// Each record is kept or dropped by the first of these rules that applies;
// the Report counts the dropped ones under the reason strings below (the
// Reason constants).
//
//  1. partial-execution: status 2, 3 or 4. Such a line is one part of a
//     checkpointed or swapped job, which the definition describes as a
//     whole in its own line; converting the parts too would run the job
//     twice.
//  2. cancelled-before-start: status 5 and a run time of -1 or 0: the job
//     was cancelled before it ran and never occupied the machine.
//  3. cancelled: status 5 with a positive run time, only with
//     Options.DropCancelled. By default such a job is kept: it held its
//     processors for its run time before it was cancelled.
//  4. failed: status 0, only with Options.DropFailed. By default failed
//     jobs are kept: they ran, their run time is real, and they occupied
//     the machine.
//  5. unknown-run-time: a negative (-1) run time.
//  6. zero-run-time: a run time of 0 (under half a second: nothing to
//     simulate, and Batsim's converter drops it too).
//  7. no-processors: neither the requested nor the allocated number of
//     processors is known (> 0).
//  8. unknown-submit-time: a negative (-1) submit time.
//  9. walltime-not-above-run-time: the walltime the policy gives is not
//     longer than the run time, as Batsim's converter requires (with
//     WalltimeRequested, a job that overran its request; with WalltimeMax,
//     only when WalltimeFactor <= 1).
//  10. bigger-than-platform: the job asks for more hosts than nb_res when
//     nb_res is given or read from the header (or for more than 2^31-1
//     hosts): it could never run.
//  11. duplicate-job-number: a record whose job number an earlier record
//     (in submit order) already has: Batsim job ids must be unique.
//
// Then, in submit order, the window and the limit: before-from (submit
// time < Options.From), after-to (submit time >= Options.To, when To > 0),
// beyond-max-jobs (past the first Options.MaxJobs kept jobs). Statuses -1
// and any other code are kept like completed jobs. The archive publishes
// cleaned versions of many logs (flurries of jobs by a single user
// removed): this package does not detect such anomalies, so convert the
// cleaned log when there is one.
package swf
