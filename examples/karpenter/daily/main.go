// Command daily writes the day-long workload of the Karpenter example
// (examples/karpenter/daily.json, for examples/karpenter/daily-platform.xml)
// as a Batsim workload: one-pod jobs whose arrivals follow a daily cycle,
// few at night and most in the afternoon.
//
// Arrivals are a Poisson process whose rate over the day is
//
//	rate(t) = mean × (1 − depth × cos(2π (t − trough) / 24 h))
//
// with its trough at 02:00 and its peak twelve hours later, drawn by
// thinning with a fixed seed, so that the file is the same on every
// machine. Each job asks for 2, 6, 12 or 24 cores (4 GiB a core) and runs
// for 10 to 90 minutes; the jobs of 12 and 24 cores fit no ordinary host
// of the platform (8 cores), so that only nodes Karpenter launches run
// them, and at the afternoon's peak the smaller ones outgrow the ordinary
// hosts too.
//
//	go run -C examples/karpenter ./daily > examples/karpenter/daily.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"time"
)

// day is what the generator is asked for.
type day struct {
	hours       float64 // length of the workload (arrivals stop there)
	jobsPerHour float64 // mean arrival rate over a whole day
	depth       float64 // the cycle's depth: 0 flat, 1 no arrival at the trough
	seed        uint64
}

// weighted is a value and how often it is drawn.
type weighted struct {
	value, weight int
}

// The job mix: mostly small and short jobs, a few that need a large node
// or run long.
var (
	coreCounts = []weighted{{2, 4}, {6, 3}, {12, 2}, {24, 1}}
	minutes    = []weighted{{10, 3}, {20, 3}, {30, 2}, {60, 1}, {90, 1}}
)

// trough is the time of day with the fewest arrivals.
const trough = 2 * time.Hour

func main() {
	d := day{}
	flag.Float64Var(&d.hours, "hours", 24, "length of the workload in hours (arrivals stop there)")
	flag.Float64Var(&d.jobsPerHour, "jobs-per-hour", 10, "mean arrivals per hour over a whole day")
	flag.Float64Var(&d.depth, "depth", 0.8, "depth of the daily cycle, from 0 (flat) to 1 (no arrival at 02:00)")
	flag.Uint64Var(&d.seed, "seed", 1, "seed of the draws")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: daily [--hours H] [--jobs-per-hour N] [--depth D] [--seed S] > workload.json\n\n"+
			"Writes a Batsim workload of one-pod jobs whose arrivals follow a daily cycle.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 || !(d.hours > 0) || !(d.jobsPerHour > 0) || !(d.depth >= 0 && d.depth <= 1) || math.IsInf(d.hours, 0) || math.IsInf(d.jobsPerHour, 0) {
		flag.Usage()
		os.Exit(2)
	}
	if err := d.write(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "daily:", err)
		os.Exit(1)
	}
}

// workload is the Batsim workload file written.
type workload struct {
	NbRes       int                `json:"nb_res"`
	Description string             `json:"description"`
	Jobs        []job              `json:"jobs"`
	Profiles    map[string]profile `json:"profiles"`
}

type job struct {
	ID       string  `json:"id"`
	Subtime  float64 `json:"subtime"`
	Walltime float64 `json:"walltime"`
	Res      int     `json:"res"`
	Profile  string  `json:"profile"`
}

type profile struct {
	Type   string  `json:"type"`
	Delay  float64 `json:"delay"`
	CPU    int     `json:"cpu"`
	Memory string  `json:"memory"`
}

// platformHosts is the number of compute hosts of daily-platform.xml
// (Batsim's nb_res).
const platformHosts = 16

// write writes the workload as indented JSON, one job a line.
func (d day) write(w io.Writer) error {
	wl := d.generate()
	out := fmt.Appendf(nil, "{\n  \"nb_res\": %d,\n  \"description\": %q,\n  \"jobs\": [\n", wl.NbRes, wl.Description)
	for i, j := range wl.Jobs {
		line, err := json.Marshal(j)
		if err != nil {
			return err
		}
		out = append(out, "    "...)
		out = append(out, line...)
		if i < len(wl.Jobs)-1 {
			out = append(out, ',')
		}
		out = append(out, '\n')
	}
	profiles, err := json.MarshalIndent(wl.Profiles, "  ", "  ")
	if err != nil {
		return err
	}
	out = fmt.Appendf(out, "  ],\n  \"profiles\": %s\n}\n", profiles)
	_, err = w.Write(out)
	return err
}

// generate draws the jobs: arrivals by thinning a Poisson process of the
// cycle's peak rate, then each job's shape and duration.
func (d day) generate() workload {
	rng := rand.New(rand.NewPCG(d.seed, 0x6461696c79)) // "daily"
	end := d.hours * 3600
	peak := d.jobsPerHour * (1 + d.depth) / 3600 // arrivals a second at the peak
	wl := workload{
		NbRes: platformHosts,
		Description: fmt.Sprintf("Karpenter's day: %g hours of one-pod jobs arriving %g an hour on average, "+
			"following a daily cycle (depth %g: fewest at 02:00, most at 14:00), of 2, 6, 12 or 24 cores for 10 to 90 minutes "+
			"(go run -C examples/karpenter ./daily --hours %g --jobs-per-hour %g --depth %g --seed %d)",
			d.hours, d.jobsPerHour, d.depth, d.hours, d.jobsPerHour, d.depth, d.seed),
		Profiles: map[string]profile{},
	}
	for t := 0.0; ; {
		t += rng.ExpFloat64() / peak
		if t >= end {
			break
		}
		if rng.Float64()*(1+d.depth) > d.rate(t) {
			continue
		}
		cores, mins := draw(rng, coreCounts), draw(rng, minutes)
		name := fmt.Sprintf("c%d-%dm", cores, mins)
		if _, ok := wl.Profiles[name]; !ok {
			wl.Profiles[name] = profile{Type: "delay", Delay: float64(mins * 60), CPU: cores, Memory: fmt.Sprintf("%dGi", 4*cores)}
		}
		wl.Jobs = append(wl.Jobs, job{
			ID:       fmt.Sprintf("job-%d", len(wl.Jobs)),
			Subtime:  math.Round(t*1000) / 1000,
			Walltime: float64(2 * mins * 60),
			Res:      1,
			Profile:  name,
		})
	}
	return wl
}

// rate is the arrival rate at t seconds, relative to the day's mean.
func (d day) rate(t float64) float64 {
	phase := 2 * math.Pi * (t - trough.Seconds()) / (24 * 3600)
	return 1 - d.depth*math.Cos(phase)
}

// draw picks a value of the table by weight.
func draw(rng *rand.Rand, table []weighted) int {
	total := 0
	for _, s := range table {
		total += s.weight
	}
	n := rng.IntN(total)
	for _, s := range table {
		if n < s.weight {
			return s.value
		}
		n -= s.weight
	}
	panic("unreachable")
}
