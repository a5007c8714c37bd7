package replay

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/batkube/batkube/examples/schedulers/gpupolicies/policy"
)

// Node is a node of the openb node list.
type Node struct {
	Name        string // sn
	CPU, MemMiB int64  // cpu_milli, memory_mib
	GPUs        int    // gpu
	Model       string // model
}

// Pod is a pod of the openb pod list: its demand (cpu and GPUs), memory
// and the GPU models it accepts (none: any).
type Pod struct {
	Name   string
	Demand policy.Demand
	MemMiB int64
	Models []string
}

// Arrival is a pod of the arrival-only experiment (arrivals.csv): named
// after its trace pod (name-r1, name-r2... when drawn again), arriving at
// At.
type Arrival struct {
	Pod
	At float64
}

// table is a CSV file read by column name.
type table struct {
	name   string
	header map[string]int
	rows   [][]string
}

// readTable reads a CSV file with a header line, requiring the columns.
func readTable(name string, r io.Reader, columns ...string) (table, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	records, err := cr.ReadAll()
	if err != nil {
		return table{}, fmt.Errorf("%s: %w", name, err)
	}
	if len(records) == 0 {
		return table{}, fmt.Errorf("%s: empty: want a header line", name)
	}
	t := table{name: name, header: map[string]int{}, rows: records[1:]}
	for i, c := range records[0] {
		t.header[strings.TrimSpace(c)] = i
	}
	for _, c := range columns {
		if _, ok := t.header[c]; !ok {
			return table{}, fmt.Errorf("%s: no column %s", name, c)
		}
	}
	return t, nil
}

// cell is a row's value of a column ("" when absent).
func (t table) cell(row []string, column string) string {
	if i, ok := t.header[column]; ok && i < len(row) {
		return strings.TrimSpace(row[i])
	}
	return ""
}

// int reads an integer cell, naming the file, line and column on error.
func (t table) int(row []string, line int, column string) (int64, error) {
	v, err := strconv.ParseInt(t.cell(row, column), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: line %d: %s %q: want an integer", t.name, line, column, t.cell(row, column))
	}
	return v, nil
}

// openTable reads a CSV file by path.
func openTable(path string, columns ...string) (table, error) {
	f, err := os.Open(path)
	if err != nil {
		return table{}, err
	}
	defer f.Close()
	return readTable(path, f, columns...)
}

// ReadNodes reads an openb node list.
func ReadNodes(path string) ([]Node, error) {
	t, err := openTable(path, "sn", "cpu_milli", "memory_mib", "gpu", "model")
	if err != nil {
		return nil, err
	}
	nodes := make([]Node, 0, len(t.rows))
	for i, row := range t.rows {
		n := Node{Name: t.cell(row, "sn"), Model: t.cell(row, "model")}
		var gpus int64
		if n.CPU, err = t.int(row, i+2, "cpu_milli"); err == nil {
			if n.MemMiB, err = t.int(row, i+2, "memory_mib"); err == nil {
				gpus, err = t.int(row, i+2, "gpu")
			}
		}
		if err != nil {
			return nil, err
		}
		n.GPUs = int(gpus)
		if n.GPUs == 0 {
			n.Model = ""
		}
		nodes = append(nodes, n)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: no node", path)
	}
	return nodes, nil
}

// ReadPods reads an openb pod list, by name.
func ReadPods(path string) (map[string]Pod, error) {
	t, err := openTable(path, "name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
	if err != nil {
		return nil, err
	}
	pods := make(map[string]Pod, len(t.rows))
	for i, row := range t.rows {
		p := Pod{Name: t.cell(row, "name")}
		var gpus int64
		if p.Demand.CPU, err = t.int(row, i+2, "cpu_milli"); err == nil {
			if p.MemMiB, err = t.int(row, i+2, "memory_mib"); err == nil {
				if gpus, err = t.int(row, i+2, "num_gpu"); err == nil {
					p.Demand.Milli, err = t.int(row, i+2, "gpu_milli")
				}
			}
		}
		if err != nil {
			return nil, err
		}
		if p.Demand.GPUs = int(gpus); p.Demand.GPUs == 0 {
			p.Demand.Milli = 0
		}
		for m := range strings.SplitSeq(t.cell(row, "gpu_spec"), "|") {
			if m = strings.TrimSpace(m); m != "" {
				p.Models = append(p.Models, m)
			}
		}
		pods[p.Name] = p
	}
	return pods, nil
}

// ReadArrivals reads arrivals.csv, in arrival order, each arrival's pod
// looked up in the trace's pods (a name-rN arrival is pod name drawn
// again); capacity is the cluster's GPU thousandths it states.
func ReadArrivals(path string, pods map[string]Pod) (arrivals []Arrival, capacity int64, err error) {
	t, err := openTable(path, "pod", "arrived_at", "capacity_milli")
	if err != nil {
		return nil, 0, err
	}
	for i, row := range t.rows {
		name := t.cell(row, "pod")
		p, ok := pods[name]
		if !ok {
			if base, _, drawn := cutDraw(name); drawn {
				p, ok = pods[base]
			}
		}
		if !ok {
			return nil, 0, fmt.Errorf("%s: line %d: pod %s is not in the pod list", path, i+2, name)
		}
		p.Name = name
		a := Arrival{Pod: p}
		if a.At, err = strconv.ParseFloat(t.cell(row, "arrived_at"), 64); err != nil {
			return nil, 0, fmt.Errorf("%s: line %d: arrived_at %q: want seconds", path, i+2, t.cell(row, "arrived_at"))
		}
		if capacity, err = t.int(row, i+2, "capacity_milli"); err != nil {
			return nil, 0, err
		}
		arrivals = append(arrivals, a)
	}
	if len(arrivals) == 0 {
		return nil, 0, errors.New(path + ": no arrival")
	}
	return arrivals, capacity, nil
}

// cutDraw splits "name-r12" into "name" and 12.
func cutDraw(name string) (base string, n int, ok bool) {
	i := strings.LastIndex(name, "-r")
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i+2:])
	if err != nil || n < 1 {
		return "", 0, false
	}
	return name[:i], n, true
}

// NodeName is the Kubernetes name of a node of the list, as Batkube names
// hosts (package translate of the Batkube module): lower case, characters
// other than letters, digits, '-' and '.' replaced by '-'. (The rarer
// fixes of names that are still invalid are not needed by openb's.)
func NodeName(sn string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(sn) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}
