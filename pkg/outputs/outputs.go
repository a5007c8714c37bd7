// Package outputs reads what a run leaves in its output folder: Batsim's
// CSV files (_jobs.csv, _schedule.csv) and Batkube's (_pods.csv,
// _controllers.csv, _workloads.csv, _clusterqueues.csv, _nodes.csv: their
// columns in schema.go), for the runner's summary, the report and the
// tests alike.
package outputs

import (
	"encoding/csv"
	"fmt"
	"os"
	"strings"
)

// ReadCSV reads a CSV file with a header into one map per row, keyed by
// the header's names.
func ReadCSV(path string) ([]map[string]string, error) {
	_, rows, err := readCSV(path)
	return rows, err
}

// readCSV reads a CSV file's header and its rows, one map per row keyed by
// the header's names.
func readCSV(path string) (head []string, rows []map[string]string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("outputs: %w", err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("outputs: %s: %w", path, err)
	}
	if len(records) == 0 {
		return nil, nil, fmt.Errorf("outputs: %s: empty, not even a header", path)
	}
	head = records[0]
	for i := range head {
		head[i] = strings.TrimSpace(head[i])
	}
	rows = make([]map[string]string, 0, len(records)-1)
	for _, rec := range records[1:] {
		row := make(map[string]string, len(head))
		for i, h := range head {
			if i < len(rec) {
				row[h] = rec[i]
			}
		}
		rows = append(rows, row)
	}
	return head, rows, nil
}
