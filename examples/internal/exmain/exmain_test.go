package exmain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"syscall"
	"testing"
)

func TestExit(t *testing.T) {
	for _, tt := range []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, 0, ""},
		{fmt.Errorf("watching: %w", context.Canceled), 0, ""},
		{&url.Error{Op: "Get", URL: "http://127.0.0.1:1/api/v1/pods", Err: io.EOF}, 0, "sched: the API server is gone: Get \"http://127.0.0.1:1/api/v1/pods\": EOF\n"},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), 0, "sched: the API server is gone: dial: connection refused\n"},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), 0, "sched: the API server is gone: read: connection reset by peer\n"},
		{errors.New("binding w0-1: forbidden"), 1, "sched: binding w0-1: forbidden\n"},
	} {
		var b bytes.Buffer
		if code := Exit(&b, "sched", tt.err); code != tt.code || b.String() != tt.stderr {
			t.Errorf("Exit(%v): code %d, stderr %q; want %d, %q", tt.err, code, b.String(), tt.code, tt.stderr)
		}
	}
}
