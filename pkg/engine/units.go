package engine

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/batkube/batkube/pkg/decimal"
)

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
