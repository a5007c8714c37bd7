package ld

import "testing"

var sink Float
var sinkF float64

func BenchmarkAdd(b *testing.B) {
	x, y := FromFloat64(1234.5678), FromFloat64(0.001)
	for b.Loop() {
		x = Add(x, y)
	}
	sink = x
}

func BenchmarkSubDoubles(b *testing.B) {
	a, c := 1234.5678, 17.25
	for b.Loop() {
		sink = Sub(FromFloat64(a), FromFloat64(c))
		a += 1
	}
}

func BenchmarkDiv(b *testing.B) {
	x, y := FromFloat64(1234.5678), FromFloat64(3.3)
	for b.Loop() {
		sink = Div(x, y)
	}
}

func BenchmarkToFloat64(b *testing.B) {
	x := Add(FromFloat64(1234.5678), FromFloat64(1e-9))
	for b.Loop() {
		sinkF = x.Float64()
	}
}
