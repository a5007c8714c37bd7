package clockclient

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
	"github.com/batkube/batkube/pkg/simtime/simclock"
	"github.com/batkube/batkube/pkg/simtime/timeservice"
)

// The clock served as an extension of the real API server, behind its
// bearer token and request logging, as cmd/kubernetes-server wires it.
func TestThroughTheAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole API server (about 15 s under -race)")
	}
	sim := simclock.New(epoch)
	ts := servertest.Start(t, server.Options{
		Clock:       sim,
		BearerToken: "secret",
		Verbosity:   2,
		Extensions:  []apiserver.NonResourceHandler{timeservice.NewHandler(sim, nil)},
	})
	e := newErrs()
	c := mustNew(t, ts.URL, Options{BearerToken: "secret", OnError: e.add})
	sim.Set(30)
	if got := c.Now(); !got.Equal(epoch.Add(30 * time.Second)) {
		t.Errorf("Now() = %v, want 30s", got)
	}
	tm := c.NewTimer(time.Second)
	waitTimer(t, sim, 31*time.Second)
	sim.Set(31)
	if got := receive(t, tm.C()); !got.Equal(epoch.Add(31 * time.Second)) {
		t.Errorf("fired with %v", got)
	}
	tm.Reset(time.Minute)
	waitTimer(t, sim, 91*time.Second)
	tm.Stop()
	waitNone(t, sim)

	noToken, err := New(ts.URL, Options{OnError: e.add})
	if err != nil {
		t.Fatal(err)
	}
	defer noToken.Close()
	var se *StatusError
	if _, err := noToken.NowContext(t.Context()); !errors.As(err, &se) || se.Code != http.StatusUnauthorized {
		t.Errorf("without the token: %v, want a 401", err)
	}
	if len(e.get()) != 0 {
		t.Errorf("errors reported: %v", e.get())
	}
}
