package timerq

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

func at(s float64) Time { return Time{}.Plus(s) }

func TestPopsByDateThenSchedulingOrder(t *testing.T) {
	var q Queue[string]
	a, b, c, d := &Item[string]{Value: "a"}, &Item[string]{Value: "b"}, &Item[string]{Value: "c"}, &Item[string]{Value: "d"}
	q.Schedule(a, at(1e17+16))
	q.Schedule(b, at(0.1))
	q.Schedule(c, at(1e17+16))
	q.Schedule(d, at(0.30000000000000004))
	q.Schedule(d, at(1e17+16)) // moved: now after a and c
	if !q.Cancel(b) || q.Cancel(b) || b.Queued() {
		t.Fatal("Cancel: want true for a queued item, then false")
	}
	if q.Peek() != a || a.At() != at(1e17+16) {
		t.Fatalf("Peek: got %v", q.Peek())
	}
	var got []string
	for it := q.Pop(); it != nil; it = q.Pop() {
		if it.Queued() {
			t.Fatalf("%s still queued after Pop", it.Value)
		}
		got = append(got, it.Value)
	}
	if want := []string{"a", "c", "d"}; !slices.Equal(got, want) {
		t.Fatalf("popped %v, want %v", got, want)
	}
	if q.Peek() != nil || q.Len() != 0 {
		t.Fatal("an emptied queue is not empty")
	}
}

// TestRandomScheduleMatchesASortedReference moves and cancels items at
// random, with dates close to one another and infinite ones, and checks the
// pops against a sorted model.
func TestRandomScheduleMatchesASortedReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dates := []float64{0, 0.1, 0.2, 0.30000000000000004, 0.3, 1e17, 1e17 + 16, math.Inf(1), 5e-324}
	var q Queue[int]
	its := make([]*Item[int], 300)
	type ref struct {
		at  Time
		seq int
	}
	model := map[int]ref{}
	seq := 0
	for i := range its {
		its[i] = &Item[int]{Value: i}
	}
	for n := range 20000 {
		i := rng.IntN(len(its))
		switch {
		case rng.IntN(4) == 0:
			if q.Cancel(its[i]) != (model[i] != ref{}) {
				t.Fatalf("Cancel(%d): wrong answer", i)
			}
			delete(model, i)
		case n%5000 == 4999: // drain part of the queue
			for range 50 {
				it := q.Pop()
				if it == nil {
					break
				}
				delete(model, it.Value)
			}
		default:
			t := at(dates[rng.IntN(len(dates))])
			switch rng.IntN(3) {
			case 0:
				t = at(float64(rng.IntN(40)) / 8)
			case 1: // dates 1e17 + a few thousandths: distinct in virtual time
				t = at(1e17).Plus(float64(rng.IntN(4)) * 0.003)
			}
			seq++
			q.Schedule(its[i], t)
			model[i] = ref{t, seq}
		}
	}
	want := make([]int, 0, len(model))
	for i := range model {
		want = append(want, i)
	}
	slices.SortFunc(want, func(x, y int) int {
		if model[x].at.Before(model[y].at) {
			return -1
		}
		if model[y].at.Before(model[x].at) {
			return 1
		}
		return model[x].seq - model[y].seq
	})
	if q.Len() != len(want) {
		t.Fatalf("Len: %d, want %d", q.Len(), len(want))
	}
	var got []int
	for it := q.Pop(); it != nil; it = q.Pop() {
		got = append(got, it.Value)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pops differ from the sorted model:\n got %v\nwant %v", got, want)
	}
}

// TestTimeIsExactEnoughForSteps checks the double-double arithmetic of
// virtual time against math/big: sums of 20,000 steps of all sizes stay
// within 1e-10 s of the exact sum past 1e17 s (SimGrid's precision is
// 1e-9 s), and differences of close dates are the steps.
func TestTimeIsExactEnoughForSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	exact := new(big.Float).SetPrec(300)
	v := Time{}
	for i := range 20000 {
		d := rng.Float64() * math.Pow(10, float64(rng.IntN(20)-3))
		if i == 10 {
			d = 1e17
		}
		exact.Add(exact, new(big.Float).SetFloat64(d))
		prev := v
		v = v.Plus(d)
		got := new(big.Float).SetPrec(300).Add(new(big.Float).SetFloat64(v.Hi), new(big.Float).SetFloat64(v.Lo))
		diff, _ := new(big.Float).Sub(got, exact).Float64()
		if math.Abs(diff) > 1e-10 {
			t.Fatalf("after %d steps the sum is off by %g", i+1, diff)
		}
		if v.Before(prev) || (d > 0 && !prev.Before(v)) {
			t.Fatalf("step %d of %g: %v is not after %v", i, d, v, prev)
		}
		// A double-double holds a date to about 2^-106 of it: the step
		// comes back within a few of those units of the later date.
		if back := v.Minus(prev); math.Abs(back-d) > math.Abs(v.Hi)*0x1p-104 {
			t.Fatalf("step %d: (t+%g)-t = %g", i, d, back)
		}
	}
	if x := at(1e17).Plus(0.003).Minus(at(1e17)); x != 0.003 {
		t.Fatalf("(1e17+0.003)-1e17 = %g, want 0.003", x)
	}
}

// TestFromInt64IsExactAndKeepsTheOrder checks FromInt64 against math/big
// over the whole range of int64, its ends included: every Time is the
// integer exactly, normalised, and Times compare as their integers do.
func TestFromInt64IsExactAndKeepsTheOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ns := []int64{math.MinInt64, math.MinInt64 + 1, -1<<53 - 1, -1 << 53, -1, 0, 1, 1<<53 - 1, 1 << 53, 1<<53 + 1,
		1<<63 - 1<<32, 1<<63 - 1<<32 + 1, math.MaxInt64 - 1, math.MaxInt64}
	for range 20000 {
		n := int64(rng.Uint64()) >> rng.IntN(64) // of every magnitude
		ns = append(ns, n, n+1, n+1<<11)         // with neighbours a double does not tell apart
	}
	for _, n := range ns {
		v := FromInt64(n)
		sum := new(big.Float).SetPrec(200).SetFloat64(v.Hi)
		sum.Add(sum, new(big.Float).SetFloat64(v.Lo))
		if got, acc := sum.Int64(); acc != big.Exact || got != n {
			t.Fatalf("FromInt64(%d) = %v, which is %v (%v)", n, v, sum, acc)
		}
		if ulp := math.Nextafter(math.Abs(v.Hi), math.Inf(1)) - math.Abs(v.Hi); math.Abs(v.Lo) > ulp/2 {
			t.Fatalf("FromInt64(%d) = %v: not normalised", n, v)
		}
	}
	slices.Sort(ns)
	for i := 1; i < len(ns); i++ {
		a, b := FromInt64(ns[i-1]), FromInt64(ns[i])
		if a.Before(b) != (ns[i-1] < ns[i]) || b.Before(a) {
			t.Fatalf("%d and %d: Before gives %t and %t", ns[i-1], ns[i], a.Before(b), b.Before(a))
		}
	}
}

func TestSetAtDatesAnItemOutsideAQueueOnly(t *testing.T) {
	var it Item[int]
	it.SetAt(at(2))
	if it.At() != at(2) || it.Queued() {
		t.Fatalf("SetAt outside a queue: %v, queued %t", it.At(), it.Queued())
	}
	var q Queue[int]
	q.Schedule(&it, at(1))
	defer func() {
		if recover() == nil {
			t.Error("SetAt on a queued item did not panic")
		}
		if it.At() != at(1) {
			t.Errorf("the queued item's date became %v", it.At())
		}
	}()
	it.SetAt(at(3))
}
