package clockclient

import (
	"net/http/httptest"
	"testing"

	"github.com/batkube/batkube/pkg/simtime/simclock"
	"github.com/batkube/batkube/pkg/simtime/timeservice"
)

// BenchmarkNow measures the round trip of a reading over loopback HTTP.
func BenchmarkNow(b *testing.B) {
	hs := httptest.NewServer(timeservice.NewHandler(simclock.New(simclock.DefaultEpoch), nil))
	b.Cleanup(hs.Close) // after the client's Close, which mustNew registers next
	c := mustNew(b, hs.URL, Options{OnError: func(err error) { b.Error(err) }})
	for b.Loop() {
		c.Now()
	}
}
