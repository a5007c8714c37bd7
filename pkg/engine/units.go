package engine

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/batkube/batkube/pkg/decimal"
)

// SimGrid's units, as a platform writes its hosts' speeds and its links'
// bandwidths and latencies: a number, then a unit.

// speedUnits are SimGrid's speed units: f and flops with their decimal
// prefixes (abbreviated for f, spelled out for flops).
var speedUnits = func() map[string]float64 {
	units := map[string]float64{"": 1, "f": 1, "flops": 1}
	abbrev := []string{"k", "M", "G", "T", "P", "E", "Z", "Y"}
	long := []string{"kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta"}
	scale := 1.0
	for i := range abbrev {
		scale *= 1000
		units[abbrev[i]+"f"] = scale
		units[long[i]+"flops"] = scale
	}
	return units
}()

// parseSpeeds reads a SimGrid speed attribute: one speed per pstate,
// comma-separated, each a number with an optional unit ("1Gf", "1.5e9f",
// "100Mf,50Mf", "2 gigaflops").
func parseSpeeds(s string) ([]float64, error) {
	parts := strings.Split(s, ",")
	speeds := make([]float64, 0, len(parts))
	for _, part := range parts {
		v, err := parseSpeed(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		speeds = append(speeds, v)
	}
	return speeds, nil
}

// parseSpeed reads one speed as SimGrid does: a number as strtod reads it
// (leading spaces skipped), then a unit, exactly (no space before it; none
// means f).
func parseSpeed(s string) (float64, error) {
	num := strings.TrimLeft(s, " \t\n\v\f\r")
	n := decimal.Prefix(num)
	if n == 0 {
		return 0, fmt.Errorf("speed %q: not a number", s)
	}
	v, err := strconv.ParseFloat(num[:n], 64)
	if err != nil {
		return 0, fmt.Errorf("speed %q: %w", s, err)
	}
	scale, ok := speedUnits[num[n:]]
	if !ok {
		return 0, fmt.Errorf("speed %q: unknown unit %q (want f, kf, Mf, Gf, ... or flops, kiloflops, ..., right after the number)", s, num[n:])
	}
	v *= scale
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("speed %q: want a finite, non-negative number", s)
	}
	return v, nil
}

// latencyUnits are SimGrid's time units.
var latencyUnits = map[string]float64{
	"": 1, "ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1,
	"m": 60, "h": 3600, "d": 86400, "w": 604800,
}

// bandwidthUnits are SimGrid's bandwidth units: bytes (Bps) or bits (bps)
// per second, with decimal (k, M, G...) or binary (Ki, Mi, Gi...)
// prefixes.
var bandwidthUnits = func() map[string]float64 {
	units := map[string]float64{"": 1}
	decimal := []string{"k", "M", "G", "T", "P", "E", "Z", "Y"}
	binary := []string{"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"}
	for _, base := range []struct {
		unit  string
		scale float64
	}{{"Bps", 1}, {"bps", 0.125}} {
		units[base.unit] = base.scale
		d, b := base.scale, base.scale
		for i := range decimal {
			d *= 1000
			b *= 1024
			units[decimal[i]+base.unit] = d
			units[binary[i]+base.unit] = b
		}
		units["K"+base.unit] = units["k"+base.unit]
	}
	return units
}()

// parseLatency reads a SimGrid latency ("10us", "1.5E-9s", "0"); none is 0.
func parseLatency(s string) (float64, error) {
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	return parseQuantity("latency", s, latencyUnits)
}

// parseBandwidth reads a SimGrid bandwidth ("1GBps", "10Gbps", "1.25E8").
func parseBandwidth(s string) (float64, error) {
	v, err := parseQuantity("bandwidth", s, bandwidthUnits)
	if err == nil && v <= 0 {
		err = fmt.Errorf("bandwidth %q: want a positive number", s)
	}
	return v, err
}

func parseQuantity(what, s string, units map[string]float64) (float64, error) {
	num := strings.TrimSpace(s)
	n := decimal.Prefix(num)
	if n == 0 {
		return 0, fmt.Errorf("%s %q: not a number", what, s)
	}
	v, err := strconv.ParseFloat(num[:n], 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", what, s, err)
	}
	scale, ok := units[num[n:]]
	if !ok {
		return 0, fmt.Errorf("%s %q: unknown unit %q", what, s, num[n:])
	}
	v *= scale
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%s %q: want a finite, non-negative number", what, s)
	}
	return v, nil
}
