//go:build linux

package procquiet

import (
	"fmt"
	"os"
)

// Quiescent takes two snapshots of process pid back to back and reports
// whether they show it quiescent: see [QuietBetween] and the package
// documentation for what true guarantees and what it does not. The
// interval observed is short (the time to read one snapshot, some hundreds
// of microseconds); callers poll until true, within a deadline.
//
// Errors: a process that does not exist (or has exited and been reaped)
// gives an error wrapping os.ErrNotExist; a zombie one, ErrExited and
// os.ErrNotExist; a kernel without per-thread scheduling accounting,
// ErrNoSchedInfo.
func Quiescent(pid int) (bool, error) {
	var s Sampler
	defer s.Close()
	return s.Quiescent(pid)
}

// Quiescent is [Quiescent] with the Sampler's open files and buffers:
// polling one process, it does not allocate. It returns false as soon as
// a thread is seen busy, without reading the others.
func (s *Sampler) Quiescent(pid int) (bool, error) {
	if busy, err := s.snapshot(pid, &s.a, true); err != nil || busy || s.a.Vanished > 0 {
		return false, err
	}
	if busy, err := s.snapshot(pid, &s.b, true); err != nil || busy {
		return false, err
	}
	return verdict(&s.a, &s.b)
}

// verdict is QuietBetween(*a, *b) with the errors of Quiescent.
func verdict(a, b *Threads) (bool, error) {
	if b.exited() {
		return false, fmt.Errorf("procquiet: pid %d: %w (zombie): %w", b.PID, ErrExited, os.ErrNotExist)
	}
	if a.schedInfoMissing() || b.schedInfoMissing() {
		return false, fmt.Errorf("procquiet: pid %d: %w", b.PID, ErrNoSchedInfo)
	}
	return QuietBetween(*a, *b), nil
}
