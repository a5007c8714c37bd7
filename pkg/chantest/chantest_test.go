package chantest

import (
	"fmt"
	"testing"
	"time"
)

func TestRecvReturnsTheValueSent(t *testing.T) {
	c := make(chan int, 1)
	c <- 7
	if got := Recv(t, c, time.Minute, "no value"); got != 7 {
		t.Errorf("Recv = %d, want 7", got)
	}
}

// fatalTB records what Fatalf would fail the test with.
type fatalTB struct {
	testing.TB
	failure string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) { f.failure = fmt.Sprintf(format, args...) }

func TestRecvFailsWhenNothingComes(t *testing.T) {
	tb := &fatalTB{TB: t}
	got := Recv(tb, make(chan string), time.Millisecond, "no reply to request %d", 3)
	if want := "no reply to request 3 (waited 1ms)"; tb.failure != want {
		t.Errorf("failure %q, want %q", tb.failure, want)
	}
	if got != "" {
		t.Errorf("Recv after the failure = %q, want the zero value", got)
	}
}
