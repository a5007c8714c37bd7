package launch

import (
	"fmt"
	"io"
	"math"
)

// Spread describes a quantity over repeated runs.
type Spread struct {
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stdDev"` // sample standard deviation (0 for one run)
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// SpreadOf summarises xs (at least one value).
func SpreadOf(xs []float64) Spread {
	s := Spread{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, x := range xs {
		s.Mean += x
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	s.Mean /= float64(len(xs))
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.StdDev = math.Sqrt(ss / float64(len(xs)-1))
	}
	return s
}

func (s Spread) String() string {
	return fmt.Sprintf("%.3f ± %.3f (min %.3f, max %.3f)", s.Mean, s.StdDev, s.Min, s.Max)
}

// Repetition summarises repeated runs of one simulation: a scheduler whose
// choice among equal scores varies (kube-scheduler's does) gives different outputs
// each time, and a comparison of schedulers must look past that noise.
type Repetition struct {
	Runs            int       `json:"runs"`
	Makespan        Spread    `json:"makespanSeconds"`
	MeanWaitingTime Spread    `json:"meanWaitingTimeSeconds"`
	Wall            Spread    `json:"wallSeconds"`
	Summaries       []Summary `json:"summaries"`
}

// Repeat summarises the summaries of repeated runs (at least one).
func Repeat(sums []Summary) Repetition {
	var mk, wait, wall []float64
	for _, s := range sums {
		mk, wait, wall = append(mk, s.Makespan), append(wait, s.MeanWaitingTime), append(wall, s.Wall.Seconds())
	}
	return Repetition{Runs: len(sums), Makespan: SpreadOf(mk), MeanWaitingTime: SpreadOf(wait), Wall: SpreadOf(wall), Summaries: sums}
}

// Write prints the repetition for a person.
func (r Repetition) Write(w io.Writer) {
	fmt.Fprintf(w, "over %d runs (mean ± standard deviation):\n", r.Runs)
	fmt.Fprintf(w, "  makespan      %s s simulated\n", r.Makespan)
	fmt.Fprintf(w, "  mean waiting  %s s simulated\n", r.MeanWaitingTime)
	fmt.Fprintf(w, "  wall time     %s s\n", r.Wall)
}
