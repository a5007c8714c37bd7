package timerq

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestPopsByInstantThenSchedulingOrder(t *testing.T) {
	var q Queue[string]
	a, b, c, d := &Item[string]{Value: "a"}, &Item[string]{Value: "b"}, &Item[string]{Value: "c"}, &Item[string]{Value: "d"}
	q.Schedule(a, 5)
	q.Schedule(b, 1)
	q.Schedule(c, 5)
	q.Schedule(d, 3)
	q.Schedule(d, 5) // moved: now after a and c at 5
	if !q.Cancel(b) || q.Cancel(b) || b.Queued() {
		t.Fatal("Cancel: want true for a queued item, then false")
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
// random and checks the pops against a simple sorted model.
func TestRandomScheduleMatchesASortedReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q Queue[int]
	its := make([]*Item[int], 200)
	type ref struct {
		at  time.Duration
		seq int
	}
	model := map[int]ref{}
	seq := 0
	for i := range its {
		its[i] = &Item[int]{Value: i}
	}
	for range 5000 {
		i := rng.IntN(len(its))
		if rng.IntN(4) == 0 {
			q.Cancel(its[i])
			delete(model, i)
			continue
		}
		at := time.Duration(rng.IntN(50))
		seq++
		q.Schedule(its[i], at)
		model[i] = ref{at, seq}
	}
	var want []int
	for i := range model {
		want = append(want, i)
	}
	slices.SortFunc(want, func(x, y int) int {
		if model[x].at != model[y].at {
			return int(model[x].at - model[y].at)
		}
		return model[x].seq - model[y].seq
	})
	var got []int
	for it := q.Pop(); it != nil; it = q.Pop() {
		got = append(got, it.Value)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pops differ from the sorted model:\n got %v\nwant %v", got, want)
	}
}
