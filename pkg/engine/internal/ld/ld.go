// Package ld emulates the C long double of x86-64 (the x87 80-bit extended
// format: a 64-bit significand, rounded to nearest, ties to even), in which
// Batsim computes its job and machine statistics (starting_time, runtime,
// waiting and turnaround times, stretch, the time spent in each machine
// state) before casting them to double for its outputs. Computing them the
// same way gives the same last digits, and the same signs of zero, as
// Batsim's outputs.
//
// Only finite values are represented: the operations never see NaN nor
// infinities in the engine (dates are finite, and no division is by zero).
// The exponent range is that of an int32, wider than the x87's, so values
// that would be subnormal or overflow as long doubles stay normal (they do
// not occur as dates).
package ld

import (
	"math"
	"math/bits"
)

// Float is a long double. The zero value is +0.
type Float struct {
	mant uint64 // the significand, top bit set; 0 for a zero
	exp  int32  // the value is mant × 2^exp
	neg  bool
}

// Epsilon is 1e-5 as a long double (Batsim's 1e-5l, the runtime it writes
// for a job that took none): the nearest 64-bit significand to 1e-5.
var Epsilon = Float{mant: 0xa7c5ac471b478423, exp: -80}

// FromFloat64 returns the long double equal to f (a finite double).
func FromFloat64(f float64) Float {
	b := math.Float64bits(f)
	neg := b>>63 != 0
	e := int32(b >> 52 & 0x7ff)
	m := b & (1<<52 - 1)
	switch {
	case e == 0 && m == 0:
		return Float{neg: neg}
	case e == 0: // subnormal
		shift := bits.LeadingZeros64(m)
		return Float{mant: m << shift, exp: -1074 - int32(shift), neg: neg}
	}
	return Float{mant: (m | 1<<52) << 11, exp: e - 1075 - 11, neg: neg}
}

// Float64 rounds x to the nearest double, ties to even (the x87's cast).
func (x Float) Float64() float64 {
	if x.mant == 0 {
		if x.neg {
			return math.Copysign(0, -1)
		}
		return 0
	}
	m := x.mant >> 11
	rem := x.mant & 0x7ff
	exp := int(x.exp) + 11
	if rem > 0x400 || rem == 0x400 && m&1 == 1 {
		m++ // up to 2^53, still exact as a double
		if m == 1<<53 {
			m, exp = 1<<52, exp+1
		}
	}
	var v float64
	if e := exp + 52 + 1023; e > 0 && e < 0x7ff { // a normal double: m × 2^exp
		v = math.Float64frombits(uint64(e)<<52 | m&(1<<52-1))
	} else {
		v = math.Ldexp(float64(m), exp)
	}
	if x.neg {
		return -v
	}
	return v
}

// Exact returns x as a double, and whether it is one exactly.
func (x Float) Exact() (float64, bool) {
	switch {
	case x.mant == 0:
		return x.Float64(), true
	case x.mant&0x7ff != 0 || x.exp < -1085 || x.exp > 960:
		return 0, false
	}
	v := math.Float64frombits(uint64(x.exp+63+1023)<<52 | x.mant>>11&(1<<52-1))
	if x.neg {
		v = -v
	}
	return v, true
}

// IsZero reports whether x is +0 or -0.
func (x Float) IsZero() bool { return x.mant == 0 }

// Neg returns -x.
func (x Float) Neg() Float {
	x.neg = !x.neg
	return x
}

// Cmp returns -1, 0 or +1 as x is less than, equal to or greater than y
// (-0 equals +0).
func (x Float) Cmp(y Float) int {
	switch {
	case x.mant == 0 && y.mant == 0:
		return 0
	case x.mant == 0:
		if y.neg {
			return 1
		}
		return -1
	case y.mant == 0:
		if x.neg {
			return -1
		}
		return 1
	case x.neg != y.neg:
		if x.neg {
			return -1
		}
		return 1
	}
	c := cmpMagnitude(x, y)
	if x.neg {
		return -c
	}
	return c
}

// cmpMagnitude compares |x| and |y|, both non-zero.
func cmpMagnitude(x, y Float) int {
	switch {
	case x.exp != y.exp:
		if x.exp < y.exp {
			return -1
		}
		return 1
	case x.mant != y.mant:
		if x.mant < y.mant {
			return -1
		}
		return 1
	}
	return 0
}

// Add returns x + y, rounded.
func Add(x, y Float) Float {
	if x.mant == 0 {
		if y.mant == 0 {
			return Float{neg: x.neg && y.neg}
		}
		return y
	}
	if y.mant == 0 {
		return x
	}
	a, b := x, y
	if cmpMagnitude(a, b) < 0 {
		a, b = b, a
	}
	// a's significand is the high word of a 128-bit fixed-point number;
	// b's is shifted right into it by the exponents' difference, the bits
	// that fall off or'ed into the lowest one (sticky), which is far below
	// the rounding position.
	d := int64(a.exp) - int64(b.exp)
	var bhi, blo uint64
	switch {
	case d == 0:
		bhi = b.mant
	case d < 64:
		bhi, blo = b.mant>>d, b.mant<<(64-d)
	case d == 64:
		blo = b.mant
	case d < 128:
		blo = b.mant >> (d - 64)
		if b.mant<<(128-d) != 0 {
			blo |= 1
		}
	default:
		blo = 1
	}
	exp := int64(a.exp) - 64
	if a.neg == b.neg {
		lo, c := bits.Add64(0, blo, 0)
		hi, c := bits.Add64(a.mant, bhi, c)
		if c != 0 { // 129 bits: shift the carry in
			lo = lo>>1 | hi<<63 | lo&1
			hi = hi>>1 | 1<<63
			exp++
		}
		return round(hi, lo, exp, a.neg)
	}
	lo, br := bits.Sub64(0, blo, 0)
	hi, _ := bits.Sub64(a.mant, bhi, br)
	if hi == 0 && lo == 0 {
		return Float{} // x - x is +0 when rounding to nearest
	}
	var n int
	if hi == 0 {
		n = 64 + bits.LeadingZeros64(lo)
	} else {
		n = bits.LeadingZeros64(hi)
	}
	switch {
	case n >= 64:
		hi, lo = lo<<(n-64), 0
	case n > 0:
		hi, lo = hi<<n|lo>>(64-n), lo<<n
	}
	return round(hi, lo, exp-int64(n), a.neg)
}

// Sub returns x - y, rounded.
func Sub(x, y Float) Float { return Add(x, y.Neg()) }

// Diff returns a - b for two doubles, rounded to a long double: their
// double difference when that is exact (as it is for close dates), else
// the long double one.
func Diff(a, b float64) Float {
	if d, ok := ExactDiff(a, b); ok {
		return FromFloat64(d)
	}
	return Sub(FromFloat64(a), FromFloat64(b))
}

// ExactDiff returns a - b as a double, and whether it is exact.
func ExactDiff(a, b float64) (float64, bool) {
	d := a - b
	if b >= 0 && b <= 2*a && a <= 2*b && a < math.MaxFloat64 {
		return d, true // Sterbenz: close doubles subtract exactly
	}
	// Knuth's two-sum: d is exact when its rounding error is zero.
	bb := d - a
	return d, (a-(d-bb))+(-b-bb) == 0 && d-d == 0 // d-d: not an infinity
}

// Div returns x / y, rounded; y must not be zero.
func Div(x, y Float) Float {
	if y.mant == 0 {
		panic("ld: division by zero")
	}
	neg := x.neg != y.neg
	if x.mant == 0 {
		return Float{neg: neg}
	}
	// q = floor(x.mant × 2^127 / y.mant), 128 bits, in [2^126, 2^128).
	q1, r := bits.Div64(x.mant>>1, x.mant<<63, y.mant)
	q0, r := bits.Div64(r, 0, y.mant)
	exp := int64(x.exp) - int64(y.exp) - 127
	if q1>>63 == 0 {
		q1, q0 = q1<<1|q0>>63, q0<<1
		exp--
	}
	if r != 0 {
		q0 |= 1
	}
	return round(q1, q0, exp, neg)
}

// round returns (hi:lo) × 2^exp rounded to a 64-bit significand, hi's top
// bit being set.
func round(hi, lo uint64, exp int64, neg bool) Float {
	if lo > 1<<63 || lo == 1<<63 && hi&1 == 1 {
		hi++
		if hi == 0 {
			hi = 1 << 63
			exp++
		}
	}
	exp += 64
	if exp > math.MaxInt32 || exp < math.MinInt32 {
		panic("ld: exponent out of range")
	}
	return Float{mant: hi, exp: int32(exp), neg: neg}
}
