package engine

import (
	"fmt"
	"strconv"
	"testing"
)

// rapidJSONDouble reads a JSON number as Batsim 4.2.1 reads the dates of a
// decision process's replies: RapidJSON 1.1.0's default parsing (without
// kParseFullPrecisionFlag), which accumulates up to 2^53 of the significand
// in an integer, then at most 17 significant digits in a double, and
// scales it by one multiplication or division by a power of ten. Past 15
// or so significant digits it may be an ulp off the nearest double:
// "100000000000.00003" is read 100000000000.00005.
func rapidJSONDouble(s string) (float64, error) {
	i, neg := 0, false
	if i < len(s) && s[i] == '-' {
		neg, i = true, i+1
	}
	digit := func() (int, bool) {
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			return int(s[i] - '0'), true
		}
		return 0, false
	}
	var (
		i64       uint64
		d         float64
		useDouble bool
		digits    int // significant digits, as RapidJSON counts them
		expFrac   int
	)
	// the integer part: in i64 until it would overflow, then in d; the
	// first digit is not counted
	limit, last := uint64(1844674407370955161), 5
	if neg {
		limit, last = 922337203685477580, 8
	}
	if c, ok := digit(); ok {
		i64, i = uint64(c), i+1
		for c, ok := digit(); ok; c, ok = digit() {
			if i64 >= limit && (i64 != limit || c > last) {
				d, useDouble = float64(i64), true
				break
			}
			i64 = i64*10 + uint64(c)
			digits++
			i++
		}
		for c, ok := digit(); ok && useDouble; c, ok = digit() {
			d = d*10 + float64(c)
			i++
		}
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !useDouble {
			for {
				c, ok := digit()
				if !ok || i64 > 1<<53-1 {
					break
				}
				i64 = i64*10 + uint64(c)
				expFrac--
				if i64 != 0 {
					digits++
				}
				i++
			}
			d, useDouble = float64(i64), true
		}
		for {
			c, ok := digit()
			if !ok {
				break
			}
			if digits < 17 {
				d = d*10 + float64(c)
				expFrac--
				if d > 0 {
					digits++
				}
			}
			i++
		}
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg, i = s[i] == '-', i+1
		}
		for {
			c, ok := digit()
			if !ok {
				break
			}
			exp = exp*10 + c
			i++
		}
		if expNeg {
			exp = -exp
		}
		if !useDouble {
			d, useDouble = float64(i64), true
		}
	}
	if i != len(s) {
		return 0, fmt.Errorf("not a JSON number: %q", s)
	}
	if !useDouble {
		d = float64(i64)
	} else if p := exp + expFrac; p < -308 {
		d = scale(scale(d, -308), p+308)
	} else {
		d = scale(d, p)
	}
	if neg {
		d = -d
	}
	return d, nil
}

// scale is RapidJSON's FastPath: d × 10^p, or d / 10^-p, with 10^n the
// nearest double (its table of literals).
func scale(d float64, p int) float64 {
	switch {
	case p < -308:
		return 0
	case p >= 0:
		return d * pow10(p)
	}
	return d / pow10(-p)
}

func pow10(n int) float64 {
	v, err := strconv.ParseFloat("1e"+strconv.Itoa(n), 64)
	if err != nil {
		panic(err)
	}
	return v
}

// The values real RapidJSON 1.1.0 (Debian 12's rapidjson-dev) gives with
// its default flags, as Batsim 4.2.1 reads them.
func TestRapidJSONDouble(t *testing.T) {
	for s, want := range map[string]float64{
		"0": 0, "6": 6, "0.5": 0.5, "1e-05": 1e-5, "-2.5": -2.5,
		"1000000000.00003":   1000000000.00003,
		"10000000000.00003":  10000000000.000031,
		"1000000020.202001":  1000000020.202001,
		"100000000000.00003": 100000000000.00005,
		"100000000020.20201": 100000000020.202,
		"1000000000000.0001": 1000000000000,
		"10000000000020.201": 10000000000020.199,
	} {
		if got, err := rapidJSONDouble(s); err != nil || got != want {
			t.Errorf("rapidJSONDouble(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}
