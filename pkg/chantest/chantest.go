// Package chantest owns the tests' waits on a channel: take the next value
// it sends, or fail the test when none comes within a deadline. That deadline
// is a safety net turning a hang into a failure, never a synchronisation: it
// should be generous.
package chantest

import (
	"fmt"
	"testing"
	"time"
)

// Recv returns the next value received from c. If none comes within within,
// it fails tb with the message format and args (as fmt.Sprintf formats
// them) and how long it waited, and tb's goroutine stops there.
func Recv[T any](tb testing.TB, c <-chan T, within time.Duration, format string, args ...any) T {
	tb.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(within):
		tb.Fatalf("%s (waited %v)", fmt.Sprintf(format, args...), within)
	}
	var zero T // reached only if tb.Fatalf returns, as a fake TB's may
	return zero
}
