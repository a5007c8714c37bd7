package openb

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

// Node is one line of a node list (openb_node_list_*.csv).
type Node struct {
	Name     string // sn
	CPUMilli int64  // cpu_milli: thousandths of a core
	MemMiB   int64  // memory_mib
	GPUs     int    // gpu
	Model    string // model: the GPU model, "" on a node without GPUs
}

// Pod is one line of a pod list (openb_pod_list_*.csv). Times are seconds
// from the start of the trace; a time the trace leaves empty is nil.
type Pod struct {
	Name      string   // name
	CPUMilli  int64    // cpu_milli
	MemMiB    int64    // memory_mib
	GPUs      int      // num_gpu
	GPUMilli  int64    // gpu_milli: of each GPU, 1000 for whole GPUs
	GPUModels []string // gpu_spec split at '|'; nil: any model
	QoS       string   // qos
	Phase     string   // pod_phase
	Created   float64  // creation_time
	Deleted   *float64 // deletion_time
	Scheduled *float64 // scheduled_time
}

// The columns each list must have (others are ignored, order is free).
var (
	nodeColumns = []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}
	podColumns  = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"}
)

// ReadNodesFile reads a node list.
func ReadNodesFile(path string) ([]Node, error) {
	var nodes []Node
	err := readFile(path, func(r io.Reader) (err error) { nodes, err = ReadNodes(r); return err })
	return nodes, err
}

// ReadPodsFile reads a pod list.
func ReadPodsFile(path string) ([]Pod, error) {
	var pods []Pod
	err := readFile(path, func(r io.Reader) (err error) { pods, err = ReadPods(r); return err })
	return pods, err
}

func readFile(path string, read func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := read(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadNodes reads a node list: a CSV header naming at least the columns
// sn, cpu_milli, memory_mib, gpu and model, then one node a line. Node
// names must be unique; numbers are non-negative integers.
func ReadNodes(r io.Reader) ([]Node, error) {
	var nodes []Node
	seen := map[string]int{}
	err := readCSV(r, nodeColumns, func(line int, f fields) error {
		n := Node{Name: f.text("sn"), Model: f.text("model")}
		if n.Name == "" {
			return errors.New("column sn: empty node name")
		}
		if first, dup := seen[n.Name]; dup {
			return fmt.Errorf("node %s already on line %d", n.Name, first)
		}
		seen[n.Name] = line
		var gpus int64
		if err := f.ints(intColumn{"cpu_milli", &n.CPUMilli}, intColumn{"memory_mib", &n.MemMiB}, intColumn{"gpu", &gpus}); err != nil {
			return err
		}
		if gpus > math.MaxInt32 {
			return fmt.Errorf("column gpu: %d GPUs", gpus)
		}
		n.GPUs = int(gpus)
		nodes = append(nodes, n)
		return nil
	})
	return nodes, err
}

// ReadPods reads a pod list: a CSV header naming at least the columns of
// the openb pod lists, then one pod a line. creation_time is required;
// deletion_time and scheduled_time may be empty. Pod names must be unique.
func ReadPods(r io.Reader) ([]Pod, error) {
	var pods []Pod
	seen := map[string]int{}
	err := readCSV(r, podColumns, func(line int, f fields) error {
		p := Pod{Name: f.text("name"), QoS: f.text("qos"), Phase: f.text("pod_phase")}
		if p.Name == "" {
			return errors.New("column name: empty pod name")
		}
		if first, dup := seen[p.Name]; dup {
			return fmt.Errorf("pod %s already on line %d", p.Name, first)
		}
		seen[p.Name] = line
		var gpus int64
		if err := f.ints(intColumn{"cpu_milli", &p.CPUMilli}, intColumn{"memory_mib", &p.MemMiB}, intColumn{"num_gpu", &gpus}, intColumn{"gpu_milli", &p.GPUMilli}); err != nil {
			return err
		}
		if gpus > math.MaxInt32 {
			return fmt.Errorf("column num_gpu: %d GPUs", gpus)
		}
		p.GPUs = int(gpus)
		if spec := f.text("gpu_spec"); spec != "" {
			for _, m := range strings.Split(spec, "|") {
				if m = strings.TrimSpace(m); m == "" {
					return fmt.Errorf("column gpu_spec: %q names an empty model", spec)
				}
				p.GPUModels = append(p.GPUModels, strings.TrimSpace(m))
			}
		}
		created, err := f.time("creation_time")
		if err != nil {
			return err
		}
		if created == nil {
			return errors.New("column creation_time: empty")
		}
		p.Created = *created
		if p.Deleted, err = f.time("deletion_time"); err != nil {
			return err
		}
		if p.Scheduled, err = f.time("scheduled_time"); err != nil {
			return err
		}
		pods = append(pods, p)
		return nil
	})
	return pods, err
}

// fields are the cells of one CSV line by column name.
type fields struct {
	cells []string
	index map[string]int
}

func (f fields) text(column string) string { return strings.TrimSpace(f.cells[f.index[column]]) }

// intColumn is a column to read as a non-negative integer, and where.
type intColumn struct {
	name string
	into *int64
}

// ints reads non-negative integer columns, in order: an error names the
// first bad one.
func (f fields) ints(columns ...intColumn) error {
	for _, c := range columns {
		v, err := strconv.ParseInt(f.text(c.name), 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("column %s: %q is not a non-negative integer", c.name, f.text(c.name))
		}
		*c.into = v
	}
	return nil
}

// time reads a time in seconds: nil when the cell is empty.
func (f fields) time(column string) (*float64, error) {
	s := f.text(column)
	if s == "" {
		return nil, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil, fmt.Errorf("column %s: %q is not a time in seconds", column, s)
	}
	return &v, nil
}

// readCSV checks the header has the columns, then hands each line to row
// (line numbers from 1, the header's); an error names its line.
func readCSV(r io.Reader, columns []string, row func(line int, f fields) error) error {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err == io.EOF {
		return errors.New("empty file: want a CSV header")
	}
	if err != nil {
		return err
	}
	index := map[string]int{}
	for i, name := range header {
		index[strings.TrimSpace(strings.TrimPrefix(name, "\uFEFF"))] = i
	}
	var missing []string
	for _, c := range columns {
		if _, ok := index[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("header: missing column(s) %s (want %s)", strings.Join(missing, ", "), strings.Join(columns, ","))
	}
	for {
		cells, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err // csv errors name their line
		}
		line, _ := cr.FieldPos(0)
		if err := row(line, fields{cells: cells, index: index}); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
}
