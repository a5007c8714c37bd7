package signalclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
)

// TestServerGoneTellsAClosedServerFromOtherErrors sends idle signals over
// real sockets: to a server that has closed, to one that cuts the
// connection before answering (a reset and a plain close), to one that
// refuses the signal, and with a cancelled context. Only the first three
// say the server is gone.
func TestServerGoneTellsAClosedServerFromOtherErrors(t *testing.T) {
	cut := func(reset bool) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok && reset {
				_ = tc.SetLinger(0) // close with a RST
			}
			_ = conn.Close()
		}
	}
	refuse := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `the idle signal needs a "scheduler" name`, http.StatusBadRequest)
	})
	closed := httptest.NewServer(refuse)
	closed.Close()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		url  string
		ctx  context.Context
		gone bool
	}{
		{"closed server", closed.URL, context.Background(), true},
		{"reset before the answer", serve(t, cut(true)), context.Background(), true},
		{"closed before the answer", serve(t, cut(false)), context.Background(), true},
		{"signal refused", serve(t, refuse), context.Background(), false},
		{"cancelled", serve(t, refuse), cancelled, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(&rest.Config{Host: tc.url}, "test")
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Idle(tc.ctx, "1")
			if err == nil {
				t.Fatal("Idle: no error")
			}
			t.Logf("%v", err)
			if got := ServerGone(err); got != tc.gone {
				t.Errorf("ServerGone(%v) = %t, want %t", err, got, tc.gone)
			}
		})
	}
	if ServerGone(nil) || ServerGone(errors.New("other")) {
		t.Error("ServerGone of nil or of an unrelated error: true")
	}
}

// serve serves h on the loopback until the end of the test and returns
// its URL.
func serve(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
