package openb

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/batkube/batkube/pkg/outputs"
)

// ArrivalsFile is where the converter writes an arrival-only
// experiment's arrivals, beside the workload.
const ArrivalsFile = "arrivals.csv"

// WriteArrivals writes the arrivals as CSV: pod, arrived_at (simulated
// seconds), gpu_milli (what its request counts towards the arrivals), and
// the cluster's GPU capacity in thousandths as the first row's
// capacity_milli (the same on every row).
func WriteArrivals(w io.Writer, arrivals []Arrival, capacity int64) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"pod", "arrived_at", "gpu_milli", "capacity_milli"})
	for _, a := range arrivals {
		_ = cw.Write([]string{a.Pod.Name, strconv.FormatFloat(a.ArrivedAt, 'f', -1, 64), strconv.FormatInt(a.GPUMilli, 10), strconv.FormatInt(capacity, 10)})
	}
	cw.Flush()
	return cw.Error()
}

// AllocationPoint is the state of an arrival-only run when the GPU
// requests of the pods arrived so far first reach ArrivedPercent of the
// cluster's GPU thousandths: AllocatedPercent of them are held by running
// pods, after Arrivals pods.
type AllocationPoint struct {
	ArrivedPercent, AllocatedPercent float64
	Arrivals                         int
}

// AllocationCurve reads an arrival-only run (arrivals.csv, written by the
// converter, and the run's _pods.csv, whose devices column says what each
// pod's claims held) and returns its allocation at every step percent of
// arrivals, from 0 up to the last arrival: the paper's curve. A device
// the column names without a consumed capacity counts whole (1000).
func AllocationCurve(arrivalsCSV, runDir string, step float64) ([]AllocationPoint, error) {
	if !(step > 0) {
		return nil, fmt.Errorf("openb: allocation step %g: want above 0", step)
	}
	arrivals, err := outputs.ReadCSV(arrivalsCSV)
	if err != nil {
		return nil, err
	}
	if len(arrivals) == 0 {
		return nil, fmt.Errorf("openb: %s: no arrival", arrivalsCSV)
	}
	capacity, err := strconv.ParseInt(arrivals[0]["capacity_milli"], 10, 64)
	if err != nil || capacity <= 0 {
		return nil, fmt.Errorf("openb: %s: capacity_milli %q: want a number of thousandths above 0", arrivalsCSV, arrivals[0]["capacity_milli"])
	}
	pods, err := outputs.ReadCSV(filepath.Join(runDir, "_pods.csv"))
	if err != nil {
		return nil, err
	}
	type held struct{ started, milli float64 }
	byPod := make(map[string]held, len(pods))
	for _, r := range pods {
		name := r["job_id"][strings.LastIndex(r["job_id"], "!")+1:]
		h := held{started: math.Inf(1)}
		if r["started"] != "" {
			if h.started, err = strconv.ParseFloat(r["started"], 64); err != nil {
				return nil, fmt.Errorf("openb: _pods.csv: pod %s: started %q: %w", name, r["started"], err)
			}
		}
		if h.milli, err = devicesMilli(r["devices"]); err != nil {
			return nil, fmt.Errorf("openb: _pods.csv: pod %s: %w", name, err)
		}
		byPod[name] = h
	}
	type arrival struct {
		at    float64
		milli int64
		pod   string
	}
	list := make([]arrival, len(arrivals))
	for i, r := range arrivals {
		a := arrival{pod: r["pod"]}
		if a.at, err = strconv.ParseFloat(r["arrived_at"], 64); err != nil {
			return nil, fmt.Errorf("openb: %s: row %d: arrived_at: %w", arrivalsCSV, i+2, err)
		}
		if a.milli, err = strconv.ParseInt(r["gpu_milli"], 10, 64); err != nil {
			return nil, fmt.Errorf("openb: %s: row %d: gpu_milli: %w", arrivalsCSV, i+2, err)
		}
		if _, ok := byPod[a.pod]; !ok {
			return nil, fmt.Errorf("openb: pod %s arrived (%s) but is not in %s/_pods.csv: not this experiment's run?", a.pod, arrivalsCSV, runDir)
		}
		list[i] = a
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].at < list[j].at })
	// The pods running at each arrival: those started by then (none
	// leaves while pods arrive).
	starts := make([]held, 0, len(byPod))
	for _, h := range byPod {
		starts = append(starts, h)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].started < starts[j].started })
	var out []AllocationPoint
	var arrived int64
	var allocated float64
	next, s := 0.0, 0
	for i, a := range list {
		arrived += a.milli
		for s < len(starts) && starts[s].started <= a.at {
			allocated += starts[s].milli
			s++
		}
		pct := 100 * float64(arrived) / float64(capacity)
		for next <= pct+1e-9 {
			out = append(out, AllocationPoint{ArrivedPercent: next, AllocatedPercent: 100 * allocated / float64(capacity), Arrivals: i + 1})
			next += step
		}
	}
	return out, nil
}

// devicesMilli sums the thousandths of GPU a devices cell of _pods.csv
// holds (outputs.ParseDevices).
func devicesMilli(cell string) (float64, error) {
	devices, err := outputs.ParseDevices(cell)
	if err != nil {
		return 0, err
	}
	var total float64
	for _, d := range devices {
		total += float64(d.Milli())
	}
	return total, nil
}

// PaperAllocation is a row of the FGD paper's allocation table
// (fgd-paper-allocation-*.csv: workload, policy, arrived_gpu_percent,
// allocated_gpu_percent_mean, min, max, seeds).
type PaperAllocation struct {
	Policy                         string
	ArrivedPercent, Mean, Min, Max float64
}

// ReadPaperAllocation reads the paper's table.
func ReadPaperAllocation(path string) ([]PaperAllocation, error) {
	rows, err := outputs.ReadCSV(path)
	if err != nil {
		return nil, err
	}
	out := make([]PaperAllocation, 0, len(rows))
	for i, r := range rows {
		p := PaperAllocation{Policy: r["policy"]}
		for col, v := range map[string]*float64{"arrived_gpu_percent": &p.ArrivedPercent, "allocated_gpu_percent_mean": &p.Mean, "min": &p.Min, "max": &p.Max} {
			if *v, err = strconv.ParseFloat(r[col], 64); err != nil {
				return nil, fmt.Errorf("openb: %s: row %d: %s: %w", path, i+2, col, err)
			}
		}
		out = append(out, p)
	}
	return out, nil
}
