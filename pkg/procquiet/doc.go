// Package procquiet decides, from outside and without the cooperation of
// the program, that a local process is quiescent: none of its threads is
// running or runnable, and none ran during an interval.
//
// Batkube uses it as a barrier for schedulers that expose no count of the
// events they have handled (kube-scheduler 1.18): once every event has
// been written to the scheduler's watch connections, a quiescent scheduler
// process has handled them, because for a Go program "no thread running or
// runnable" implies "every goroutine blocked" (a runnable goroutine always
// has a thread running or runnable to run it, and an event delivered to a
// socket the program polls wakes the thread waiting in epoll).
//
// # What is read
//
// For every thread listed in /proc/PID/task:
//
//   - the state letter, field 3 of /proc/PID/task/TID/stat;
//   - the first and third fields of /proc/PID/task/TID/schedstat: the
//     thread's accounted CPU run time in nanoseconds (se.sum_exec_runtime)
//     and the number of times it was switched onto a CPU
//     (sched_info.pcount).
//
// The switch count matters: the kernel updates the run time of a thread
// that is on a CPU only at scheduler ticks and when it leaves the CPU, so
// the run time alone can be stale, while the switch count is incremented
// the moment the thread gets a CPU. A thread that woke and ran between two
// snapshots therefore changes its switch count even if it is caught in the
// short window where it has already declared itself sleeping but has not
// yet left the CPU.
//
// # What quiescent guarantees
//
// [Quiescent] (and [QuietBetween] on two snapshots taken by the caller)
// reports true only if, for the two snapshots, the process has the same
// set of threads, every thread has the same run time and switch count, and
// every thread is sleeping in both (state S or I; see [Sleeping] for the
// other letters). Let A be the instant the first snapshot ended and B the
// instant the second began. Then during all of [A, B]:
//
//   - no thread of the process was on a CPU: it would have been switched
//     in (switch count changed) or been on a CPU at A already (state R at
//     its first reading, or run time accounted when it left);
//   - no thread was runnable: a thread that became runnable in [A, B] and
//     did not run is still runnable at B, so state R in the second
//     snapshot;
//   - no thread was created or exited (creating or exiting needs a thread
//     of the process to run; the thread sets are compared besides).
//
// Each thread's quiet interval is in fact longer, from its reading in the
// first snapshot to its reading in the second; [A, B] is the part common
// to all threads.
//
// # What it does not guarantee
//
//   - Timers. A thread sleeping until a timeout (a Go timer, time.Sleep, a
//     futex or epoll_wait with a timeout, a periodic resync) is sleeping:
//     the process is quiescent now and will run again later. The caller
//     must account for pending timers by other means.
//   - Data in flight. Bytes written to a socket or a pipe that the kernel
//     has not yet queued on the receiving end (TCP send window, Nagle,
//     softirq processing deferred to ksoftirqd) have not woken anybody
//     yet. The caller must know that
//     what it wrote has been delivered (on loopback a completed write has
//     normally been queued on the receiving socket, but this is not a
//     kernel promise; the peer socket's rx_queue in /proc/net/tcp counts
//     delivered bytes not yet read by the program).
//   - The future. A thread woken right after the second snapshot (by a
//     timer, a signal, arriving data, another process) runs after B: the
//     verdict is about [A, B] only.
//   - Work outside the process: requests it sent and whose answers have
//     not arrived, child processes, the kernel acting on its behalf (I/O
//     in progress without a thread in D state, io_uring).
//   - A stopped process (SIGSTOP, a debugger) is never quiescent: it may
//     have been stopped in the middle of its work (see [Sleeping]).
//   - One kernel race is left open: a thread shows S from the moment it
//     declares itself asleep, a few instructions before it leaves the CPU.
//     A thread that stayed on a CPU through the whole interval, without a
//     scheduler tick, and was caught in that window by both of its state
//     readings would be missed. A thread that really sleeps between the
//     readings is not: leaving the CPU updates its run time.
//
// Reading /proc does not wake the process observed. A Quiescent call
// costs a few syscalls per thread (about 0.35 ms for 30 threads on the
// 2-core VM where this package was written); a [Sampler] keeps the files
// open and does not allocate.
//
// A false verdict is not proof of work: housekeeping threads wake on their
// own (the Go runtime's sysmon for a while after activity, GC workers,
// periodic log flushes). Callers poll until true, within a deadline.
//
// # Requirements
//
// Linux with CONFIG_SCHED_INFO (any of CONFIG_SCHEDSTATS or
// CONFIG_TASK_DELAY_ACCT; true of every mainstream distribution kernel):
// without it /proc/PID/task/TID/schedstat is absent or reads "0 0 0", and
// Quiescent returns an error wrapping [ErrNoSchedInfo] rather than a
// verdict it cannot back. The stat and schedstat files are world-readable,
// so no privilege is needed to watch another user's process unless /proc
// is mounted with hidepid. Other systems: every function returns an error
// wrapping [errors.ErrUnsupported].
package procquiet
