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
	defer hs.Close()
	c, err := New(hs.URL, Options{OnError: func(err error) { b.Error(err) }})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for b.Loop() {
		c.Now()
	}
}
