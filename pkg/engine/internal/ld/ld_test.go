package ld

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// ref is the reference: math/big with a 64-bit mantissa, rounding to
// nearest even, as the x87 does.
func ref(x Float) *big.Float {
	f := new(big.Float).SetPrec(64).SetMode(big.ToNearestEven)
	f.SetUint64(x.mant)
	f.SetMantExp(f, int(x.exp))
	if x.neg {
		f.Neg(f)
	}
	return f
}

func same(got Float, want *big.Float) bool {
	if got.mant == 0 {
		return want.Sign() == 0 && got.neg == want.Signbit()
	}
	return ref(got).Cmp(want) == 0 && got.neg == want.Signbit()
}

func newRef() *big.Float { return new(big.Float).SetPrec(64).SetMode(big.ToNearestEven) }

// randDouble draws doubles of all magnitudes likely as dates, some close
// to each other, some equal, some with few significant bits.
func randDouble(rng *rand.Rand) float64 {
	switch rng.IntN(6) {
	case 0:
		return float64(rng.IntN(1000))
	case 1:
		return float64(rng.IntN(1000)) / 10
	case 2:
		return math.Ldexp(rng.Float64(), rng.IntN(120)-60)
	case 3:
		return rng.Float64() * 1e17
	case 4:
		return math.Ldexp(1, rng.IntN(200)-100)
	}
	return rng.Float64() * 100
}

func TestOperationsMatchBigFloatWithA64BitMantissa(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	vals := []Float{FromFloat64(0), FromFloat64(math.Copysign(0, -1)), Epsilon}
	for range 400 {
		v := randDouble(rng)
		if rng.IntN(3) == 0 {
			v = -v
		}
		vals = append(vals, FromFloat64(v))
	}
	// long doubles that are not doubles: sums and quotients
	for i := range 200 {
		vals = append(vals, Add(vals[3+i], vals[4+i]), Div(vals[5+i], Epsilon))
	}
	for i := range 20000 {
		x, y := vals[rng.IntN(len(vals))], vals[rng.IntN(len(vals))]
		if i%7 == 0 { // nearly equal operands
			y = Add(x, FromFloat64(math.Ldexp(1, int(x.exp)+rng.IntN(70))))
		}
		if got, want := Add(x, y), newRef().Add(ref(x), ref(y)); !same(got, want) {
			t.Fatalf("Add(%v, %v) = %v, want %v", ref(x), ref(y), ref(got), want)
		}
		if got, want := Sub(x, y), newRef().Sub(ref(x), ref(y)); !same(got, want) {
			t.Fatalf("Sub(%v, %v) = %v, want %v", ref(x), ref(y), ref(got), want)
		}
		if y.mant != 0 {
			if got, want := Div(x, y), newRef().Quo(ref(x), ref(y)); !same(got, want) {
				t.Fatalf("Div(%v, %v) = %v, want %v", ref(x), ref(y), ref(got), want)
			}
		}
		if got, want := x.Cmp(y), ref(x).Cmp(ref(y)); got != want {
			t.Fatalf("Cmp(%v, %v) = %d, want %d", ref(x), ref(y), got, want)
		}
		if a, b := x.Float64(), y.Float64(); x.exp > -1000 && x.exp < 1000 && y.exp > -1000 && y.exp < 1000 {
			if got, want := Diff(a, b), newRef().Sub(ref(FromFloat64(a)), ref(FromFloat64(b))); !same(got, want) {
				t.Fatalf("Diff(%v, %v) = %v, want %v", a, b, ref(got), want)
			}
		}
		if v, ok := x.Exact(); ok != (FromFloat64(v) == x) {
			t.Fatalf("Exact(%v) = %v, %v", ref(x), v, ok)
		}
		if x.exp > -1000 && x.exp < 1000 {
			want, _ := ref(x).Float64()
			if got := x.Float64(); got != want || math.Signbit(got) != math.Signbit(want) {
				t.Fatalf("Float64(%v) = %v, want %v", ref(x), got, want)
			}
		}
	}
}

func TestDoublesConvertExactly(t *testing.T) {
	for _, v := range []float64{0, 1, -1, 0.1, 1e17, 1e17 + 16, math.MaxFloat64, math.SmallestNonzeroFloat64, 5e-324 * 3, 123456.789} {
		if got := FromFloat64(v).Float64(); got != v {
			t.Errorf("%v came back as %v", v, got)
		}
	}
	if !math.Signbit(FromFloat64(math.Copysign(0, -1)).Float64()) {
		t.Error("-0 lost its sign")
	}
}

func TestEpsilonIsTheNearestLongDoubleToOneHundredThousandth(t *testing.T) {
	want, _, err := big.ParseFloat("1e-5", 10, 64, big.ToNearestEven)
	if err != nil {
		t.Fatal(err)
	}
	if !same(Epsilon, want) {
		t.Fatalf("Epsilon is %v, want %v", ref(Epsilon), want)
	}
}

// TestDifferencesOfDoubles checks differences of doubles, exact in a long
// double when the operands are close, rounded to 64 bits when they are far
// apart.
func TestDifferencesOfDoubles(t *testing.T) {
	a, b := 1e17, 0.1
	d := Sub(FromFloat64(a), FromFloat64(b))
	want := newRef().Sub(ref(FromFloat64(a)), ref(FromFloat64(b)))
	if !same(d, want) {
		t.Fatalf("1e17 - 0.1: got %v, want %v", ref(d), want)
	}
	if x := Sub(FromFloat64(10.009), FromFloat64(0.009)).Float64(); x != 10.009-0.009 {
		t.Fatalf("10.009 - 0.009: got %v, want the double difference %v", x, 10.009-0.009)
	}
	if z := Sub(FromFloat64(3), FromFloat64(3)); !z.IsZero() || z.neg {
		t.Fatal("3 - 3 is not +0")
	}
}

// TestSumAndMaxAsLongDoubles checks the double-while-exact accumulators
// against plain long double additions and comparisons.
func TestSumAndMaxAsLongDoubles(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 200 {
		var s Sum
		var m Max
		var want, wantMax Float
		for i := range 50 {
			var v Float
			switch rng.IntN(4) {
			case 0:
				v = FromFloat64(float64(rng.IntN(100)))
			case 1:
				v = FromFloat64(randDouble(rng))
			case 2:
				v = Div(FromFloat64(randDouble(rng)), FromFloat64(3))
			default:
				v = FromFloat64(float64(rng.IntN(1000)) / 8)
			}
			if round%2 == 0 {
				if d, ok := v.Exact(); ok {
					s.AddFloat64(d)
					m.UpdateFloat64(d)
				} else {
					s.Add(v)
					m.Update(v)
				}
			} else {
				s.Add(v)
				m.Update(v)
			}
			want = Add(want, v)
			if v.Cmp(wantMax) > 0 {
				wantMax = v
			}
			if s.Value() != want && !(s.Value().IsZero() && want.IsZero()) {
				t.Fatalf("round %d, value %d: sum %v, want %v", round, i, ref(s.Value()), ref(want))
			}
			if m.Value().Cmp(wantMax) != 0 {
				t.Fatalf("round %d, value %d: max %v, want %v", round, i, ref(m.Value()), ref(wantMax))
			}
			if s.Float64() != want.Float64() {
				t.Fatalf("round %d: Float64 %v, want %v", round, s.Float64(), want.Float64())
			}
		}
	}
}
