package procquiet

import "errors"

var (
	// ErrExited is wrapped by the errors of Quiescent when every thread of
	// the process has exited but the process has not been reaped (a
	// zombie). Such errors also match os.ErrNotExist.
	ErrExited = errors.New("process has exited")

	// ErrNoSchedInfo is wrapped by the errors of Quiescent when the kernel
	// does not account per-thread scheduling (no CONFIG_SCHED_INFO): a
	// thread that ran between two snapshots could then not be told from
	// one that did not.
	ErrNoSchedInfo = errors.New("kernel does not account thread runs (/proc/PID/task/TID/schedstat absent or zero)")

	// ErrNotFound is wrapped by the errors of PeerPID when the socket or
	// the process owning it was not found.
	ErrNotFound = errors.New("not found")

	// ErrAmbiguous is wrapped by the errors of PeerPID when several
	// processes hold the peer's socket (inherited across fork), or several
	// sockets match an unspecified local address.
	ErrAmbiguous = errors.New("ambiguous peer")
)

// Thread is one thread as read from /proc/PID/task/TID.
type Thread struct {
	// TID is the thread's ID.
	TID int
	// State is the state letter of /proc/PID/task/TID/stat: R running or
	// runnable, S sleeping, D uninterruptible, T stopped, t traced, Z
	// zombie, X dead, I idle (kernel threads), P parked.
	State byte
	// RunTime is the thread's CPU time in nanoseconds as last accounted by
	// the scheduler (field 1 of schedstat). While the thread is on a CPU
	// it lags behind by up to a scheduler tick.
	RunTime uint64
	// Switches is the number of times the thread was switched onto a CPU
	// (field 3 of schedstat), incremented as soon as it gets one.
	Switches uint64
}

// Threads is a snapshot of the threads of one process.
type Threads struct {
	// PID is the process the snapshot is of.
	PID int
	// List holds the threads read, in increasing TID order.
	List []Thread
	// Vanished counts threads listed in /proc/PID/task that had exited
	// before their files could be read: the thread set changed while the
	// snapshot was taken, and they are not in List.
	Vanished int
}

// Sleeping reports whether a thread in state s is unable to run of its own
// accord right now, so that a process whose threads are all Sleeping (and
// did not run) has nothing in progress.
//
//   - S (interruptible sleep) and I (idle): sleeping.
//   - R (running or runnable) and D (uninterruptible: disk I/O, page-in,
//     vfork parent, a lock held by another task): busy.
//   - T (stopped by a signal) and t (stopped by a tracer): busy. The
//     kernel does not say whether the thread was running or sleeping when
//     it was stopped, so it may hold unfinished work that it will resume
//     on SIGCONT or when the tracer lets it go; calling it quiescent would
//     let the caller conclude that events it cannot have handled were
//     handled. A stop is stable, so a caller waiting for quiescence times
//     out, which is the right outcome for a scheduler that makes no
//     progress.
//   - Z (zombie) and X (dead): sleeping. The thread will never run again;
//     this is the state of a thread-group leader that exited while other
//     threads go on, which are judged on their own. A process whose
//     threads are all Z or X has exited: Quiescent reports ErrExited.
//   - anything else (P parked, which only kernel threads use, and letters
//     unknown to this package): busy, to stay on the safe side.
func Sleeping(s byte) bool {
	switch s {
	case 'S', 'I', 'Z', 'X':
		return true
	}
	return false
}

// exited reports whether the snapshot shows a process whose threads have
// all exited.
func (t *Threads) exited() bool {
	if len(t.List) == 0 {
		return t.Vanished > 0
	}
	for i := range t.List {
		if s := t.List[i].State; s != 'Z' && s != 'X' {
			return false
		}
	}
	return true
}

// schedInfoMissing reports whether a live sleeping thread shows a zero
// switch count: every thread has run before it can sleep, so the kernel
// does not account switches.
func (t *Threads) schedInfoMissing() bool {
	for i := range t.List {
		th := &t.List[i]
		if (th.State == 'S' || th.State == 'I') && th.Switches == 0 {
			return true
		}
	}
	return false
}

// QuietBetween reports whether before and after, two snapshots of the
// same process taken in that order, show that the process was quiescent
// from the end of before to the start of after: no thread vanished while
// either was taken, both list the same threads, each with the same run
// time and switch count, and every thread is [Sleeping] in both. See the
// package documentation for what this guarantees. It does not check for
// ErrExited or ErrNoSchedInfo (Quiescent does): a process whose threads
// all exited is reported quiet.
func QuietBetween(before, after Threads) bool {
	if before.PID != after.PID || before.Vanished != 0 || after.Vanished != 0 ||
		len(before.List) != len(after.List) {
		return false
	}
	for i := range before.List {
		b, a := &before.List[i], &after.List[i]
		if b.TID != a.TID || b.RunTime != a.RunTime || b.Switches != a.Switches ||
			!Sleeping(b.State) || !Sleeping(a.State) {
			return false
		}
	}
	return true
}
