// Package compare computes the figures by which runs of different
// schedulers on one platform and workload are compared — makespan, mean
// and 95th-percentile waiting time, mean slowdown, cpu utilisation — from
// each run's output folder, and prints them as a Markdown table.
package compare

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/batkube/batkube/pkg/engine"
	"github.com/batkube/batkube/pkg/translate"
)

// Figures are one run's figures. Times are simulated seconds.
type Figures struct {
	Name      string `json:"name"`
	Jobs      int    `json:"jobs"`
	Succeeded int    `json:"succeeded"`
	// Makespan and MeanWait are _schedule.csv's; P95Wait is the 95th
	// percentile of _jobs.csv's waiting times (nearest rank), MeanSlowdown
	// the mean of its stretch column.
	Makespan     float64 `json:"makespanSeconds"`
	MeanWait     float64 `json:"meanWaitingSeconds"`
	P95Wait      float64 `json:"p95WaitingSeconds"`
	MeanSlowdown float64 `json:"meanSlowdown"`
	// Utilisation is the cpu the jobs' pods requested while they ran
	// (core-seconds) over the platform's allocatable cpu during the makespan.
	Utilisation float64 `json:"utilisation"`
	// Wall is the run's wall-clock time (summary.json), 0 if unknown.
	Wall time.Duration `json:"wallNanoseconds"`
}

// Setting is what the figures need besides a run's folder: the platform
// and the workloads the run simulated (for requests and capacity).
type Setting struct {
	Platform  string
	Workloads []string
}

// Read computes the figures of the run in dir.
func Read(name, dir string, s Setting) (Figures, error) {
	f := Figures{Name: name}
	jobs, err := readCSV(filepath.Join(dir, "_jobs.csv"))
	if err != nil {
		return f, err
	}
	sched, err := readCSV(filepath.Join(dir, "_schedule.csv"))
	if err != nil {
		return f, err
	}
	if len(sched) != 1 {
		return f, fmt.Errorf("compare: %s: want one row in _schedule.csv, got %d", dir, len(sched))
	}
	if f.Makespan, err = number(sched[0], "makespan"); err != nil {
		return f, fmt.Errorf("compare: %s: %w", dir, err)
	}
	if f.MeanWait, err = number(sched[0], "mean_waiting_time"); err != nil {
		return f, fmt.Errorf("compare: %s: %w", dir, err)
	}
	cpu, capacity, err := s.requests()
	if err != nil {
		return f, err
	}
	var waits []float64
	var cpuSeconds, slowdowns float64
	for _, row := range jobs {
		f.Jobs++
		if row["final_state"] == "COMPLETED_SUCCESSFULLY" {
			f.Succeeded++
		}
		if row["final_state"] == "REJECTED" {
			continue // never ran: no waiting time to speak of
		}
		wait, err1 := number(row, "waiting_time")
		run, err2 := number(row, "execution_time")
		stretch, err3 := number(row, "stretch")
		if err := firstError(err1, err2, err3); err != nil {
			return f, fmt.Errorf("compare: %s: job %s: %w", dir, row["job_id"], err)
		}
		waits = append(waits, wait)
		slowdowns += stretch
		cpuSeconds += cpu[row["workload_name"]+"!"+row["job_id"]] * run
	}
	if n := len(waits); n > 0 {
		slices.Sort(waits)
		f.P95Wait = waits[int(math.Ceil(0.95*float64(n)))-1]
		f.MeanSlowdown = slowdowns / float64(n)
	}
	if capacity > 0 && f.Makespan > 0 {
		f.Utilisation = cpuSeconds / (capacity * f.Makespan)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "summary.json")); err == nil {
		var sum struct {
			Wall time.Duration `json:"wallNanoseconds"`
		}
		if json.Unmarshal(data, &sum) == nil {
			f.Wall = sum.Wall
		}
	}
	return f, nil
}

// requests returns the cpu (cores) each job's pods request, by
// "workload!id" with Batsim's workload names (w0, w1...), and the platform's
// allocatable cpu.
func (s Setting) requests() (map[string]float64, float64, error) {
	platform, err := engine.ReadPlatformFile(s.Platform)
	if err != nil {
		return nil, 0, fmt.Errorf("compare: %w", err)
	}
	var capacity float64
	for _, r := range platform.Resources {
		h := translate.Host{ID: r.ID, Name: r.Name, Properties: r.Properties, ZoneProperties: r.ZoneProperties}
		if translate.IsMaster(h) {
			continue
		}
		node, err := translate.Node(h, translate.NodeOptions{})
		if err != nil {
			return nil, 0, fmt.Errorf("compare: %w", err)
		}
		capacity += node.Status.Allocatable.Cpu().AsApproximateFloat64()
	}
	cpu := map[string]float64{}
	for i, path := range s.Workloads {
		w, err := engine.ReadWorkloadFile(path, engine.BatsimWorkloadName(i))
		if err != nil {
			return nil, 0, fmt.Errorf("compare: %w", err)
		}
		for _, j := range w.Jobs {
			p := w.Profiles[j.Profile]
			if p == nil {
				return nil, 0, fmt.Errorf("compare: %s: job %s: unknown profile %q", path, j.ID, j.Profile)
			}
			var fields, profile map[string]json.RawMessage
			if err := firstError(json.Unmarshal(j.Raw, &fields), json.Unmarshal(p.Raw, &profile)); err != nil {
				return nil, 0, fmt.Errorf("compare: %s: job %s: %w", path, j.ID, err)
			}
			pods, err := translate.Pods(translate.Job{ID: j.ID, Res: j.Res, Walltime: j.Walltime, Fields: fields, Profile: profile}, translate.PodOptions{})
			if err != nil {
				return nil, 0, fmt.Errorf("compare: %s: %w", path, err)
			}
			for _, pod := range pods {
				cpu[j.ID] += podCPU(pod)
			}
		}
	}
	return cpu, capacity, nil
}

func podCPU(p *corev1.Pod) float64 {
	var sum float64
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
			sum += q.AsApproximateFloat64()
		}
	}
	return sum
}

// Table writes the figures as a Markdown table.
func Table(w io.Writer, runs []Figures) error {
	if _, err := fmt.Fprintln(w, "| scheduler | jobs (succeeded) | makespan (s) | mean wait (s) | p95 wait (s) | mean slowdown | cpu utilisation | wall |\n|---|---|---|---|---|---|---|---|"); err != nil {
		return err
	}
	for _, f := range runs {
		wall := "—"
		if f.Wall > 0 {
			wall = f.Wall.Round(100 * time.Millisecond).String()
		}
		if _, err := fmt.Fprintf(w, "| %s | %d (%d) | %.1f | %.1f | %.1f | %.2f | %.1f %% | %s |\n",
			f.Name, f.Jobs, f.Succeeded, f.Makespan, f.MeanWait, f.P95Wait, f.MeanSlowdown, 100*f.Utilisation, wall); err != nil {
			return err
		}
	}
	return nil
}

func readCSV(path string) ([]map[string]string, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	defer file.Close()
	records, err := csv.NewReader(file).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("compare: %s: %w", path, err)
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("compare: %s: empty", path)
	}
	rows := make([]map[string]string, 0, len(records)-1)
	for _, rec := range records[1:] {
		row := make(map[string]string, len(rec))
		for i, v := range rec {
			if i < len(records[0]) {
				row[records[0][i]] = v
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func number(row map[string]string, col string) (float64, error) {
	v, err := strconv.ParseFloat(row[col], 64)
	if err != nil {
		return 0, fmt.Errorf("column %s: %q: %w", col, row[col], err)
	}
	return v, nil
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
