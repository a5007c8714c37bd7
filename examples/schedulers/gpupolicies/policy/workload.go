package policy

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// The columns of a target workload file (batkube-openb writes it as
// target-workload.csv): a pod type a line, its cpu request in thousandths
// of a core, its number of GPUs and the thousandths of each (1000: whole
// GPUs), the GPU models it accepts ("V100M16|V100M32", empty for any) and
// its popularity. Other columns (batkube-openb's pods) are ignored.
const (
	ColumnCPU        = "cpu_milli"
	ColumnGPUs       = "num_gpu"
	ColumnGPUMilli   = "gpu_milli"
	ColumnModels     = "gpu_spec"
	ColumnPopularity = "popularity"
)

// ReadWorkloadFile reads a target workload file (see ReadWorkload).
func ReadWorkloadFile(path string) (Workload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w, err := ReadWorkload(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// ReadWorkload reads a target workload in CSV, columns by name (any order;
// gpu_spec may be absent). The popularities are scaled to sum to 1, so
// they may as well be counts.
func ReadWorkload(r io.Reader) (Workload, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty target workload: want a header line")
		}
		return nil, err
	}
	col := map[string]int{}
	for i, name := range header {
		col[strings.TrimSpace(name)] = i
	}
	for _, name := range []string{ColumnCPU, ColumnGPUs, ColumnGPUMilli, ColumnPopularity} {
		if _, ok := col[name]; !ok {
			return nil, fmt.Errorf("no column %s (want %s, %s, %s, %s and optionally %s)", name, ColumnCPU, ColumnGPUs, ColumnGPUMilli, ColumnPopularity, ColumnModels)
		}
	}
	var w Workload
	var sum float64
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		t, err := readPodType(rec, col)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		w = append(w, t)
		sum += t.Popularity
	}
	if !(sum > 0) {
		return nil, errors.New("the pod types' popularities sum to 0: want at least one above 0")
	}
	for i := range w {
		w[i].Popularity /= sum
	}
	return w, nil
}

func readPodType(rec []string, col map[string]int) (PodType, error) {
	field := func(name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var t PodType
	var err error
	if t.CPU, err = strconv.ParseInt(field(ColumnCPU), 10, 64); err != nil || t.CPU < 0 {
		return t, fmt.Errorf("%s %q: want thousandths of a core, 0 or more", ColumnCPU, field(ColumnCPU))
	}
	if t.GPUs, err = strconv.Atoi(field(ColumnGPUs)); err != nil || t.GPUs < 0 {
		return t, fmt.Errorf("%s %q: want a number of GPUs, 0 or more", ColumnGPUs, field(ColumnGPUs))
	}
	if t.Milli, err = strconv.ParseInt(field(ColumnGPUMilli), 10, 64); err != nil || t.Milli < 0 || t.Milli > MilliPerGPU ||
		(t.GPUs == 0) != (t.Milli == 0) || (t.GPUs > 1 && t.Milli != MilliPerGPU) {
		return t, fmt.Errorf("%s %q with %s %d: want 0 without GPU, 1 to %d for one GPU, %d for several", ColumnGPUMilli, field(ColumnGPUMilli), ColumnGPUs, t.GPUs, MilliPerGPU, MilliPerGPU)
	}
	if models := field(ColumnModels); models != "" {
		for _, m := range strings.Split(models, "|") {
			if m = strings.TrimSpace(m); m != "" {
				t.Models = append(t.Models, m)
			}
		}
	}
	if t.Popularity, err = strconv.ParseFloat(field(ColumnPopularity), 64); err != nil || !(t.Popularity >= 0) || math.IsInf(t.Popularity, 0) {
		return t, fmt.Errorf("%s %q: want a number, 0 or more", ColumnPopularity, field(ColumnPopularity))
	}
	return t, nil
}
