package engine

import (
	"math"
	"strings"
	"testing"
)

func TestNetworkUnits(t *testing.T) {
	for s, want := range map[string]float64{
		"10Gbps": 1.25e9, "1.25E8": 1.25e8, "1.25E8Bps": 1.25e8, "1KiBps": 1024, "2MBps": 2e6, "1kbps": 125,
	} {
		if got, err := parseBandwidth(s); err != nil || got != want {
			t.Errorf("bandwidth %q: %v, %v, want %v", s, got, err, want)
		}
	}
	for s, want := range map[string]float64{"1.5E-9s": 1.5e-9, "500us": 500e-6, "1ms": 1e-3, "0": 0, "2m": 120, "3ns": 3e-9, "": 0} {
		if got, err := parseLatency(s); err != nil || math.Abs(got-want) > 1e-24 {
			t.Errorf("latency %q: %v, %v, want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"fast", "10 parsecs", "-1GBps", "0Bps", "1e400Bps"} {
		if _, err := parseBandwidth(s); err == nil {
			t.Errorf("bandwidth %q: no error", s)
		}
	}
	if _, err := ParsePlatform(strings.NewReader(`<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/><link id="l" bandwidth="fast" latency="1us"/></zone></platform>`)); err == nil || !strings.Contains(err.Error(), `link "l"`) {
		t.Errorf("a link of bandwidth \"fast\": %v, want an error naming it", err)
	}
}
