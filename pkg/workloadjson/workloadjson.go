// Package workloadjson writes Batsim workload JSON as Batkube's trace
// converters write it: one job and one profile a line, profiles sorted by
// name, so that the same workload always gives the same bytes and a diff
// of two workloads reads line by line.
package workloadjson

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
)

// Write writes a workload of nb_res resources, its description (omitted
// when empty), its jobs in order and its profiles by name. Jobs and
// profiles are marshalled with encoding/json.
func Write[J, P any](out io.Writer, nbRes int, description string, jobs []J, profiles map[string]P) error {
	bw := bufio.NewWriter(out)
	fmt.Fprintf(bw, "{\n  \"nb_res\": %d,\n", nbRes)
	if description != "" {
		desc, err := json.Marshal(description)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "  \"description\": %s,\n", desc)
	}
	bw.WriteString("  \"jobs\": [")
	for i, j := range jobs {
		line, err := json.Marshal(j)
		if err != nil {
			return fmt.Errorf("job %d of the list: %w", i+1, err)
		}
		writeItem(bw, i, line)
	}
	closeList(bw, len(jobs), "],\n  \"profiles\": {")
	names := slices.Sorted(maps.Keys(profiles))
	for i, name := range names {
		line, err := json.Marshal(profiles[name])
		if err != nil {
			return fmt.Errorf("profile %s: %w", name, err)
		}
		writeItem(bw, i, append([]byte(strconv.Quote(name)+": "), line...))
	}
	closeList(bw, len(names), "}\n}\n")
	return bw.Flush()
}

func writeItem(bw *bufio.Writer, i int, item []byte) {
	if i > 0 {
		bw.WriteByte(',')
	}
	bw.WriteString("\n    ")
	bw.Write(item)
}

func closeList(bw *bufio.Writer, n int, closing string) {
	if n > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString(closing)
}
