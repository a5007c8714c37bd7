package launch

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/batkube/batkube/pkg/swf"
)

// isSWF reports whether a workload file is a trace in the Standard
// Workload Format (by its name: .swf, or .swf.gz as the Parallel
// Workloads Archive distributes them).
func isSWF(path string) bool {
	name := strings.ToLower(path)
	return strings.HasSuffix(name, ".swf") || strings.HasSuffix(name, ".swf.gz")
}

// convertTraces replaces the SWF traces among the run's workloads with
// Batsim workloads converted into the output folder (package swf, with
// cfg.SWF), and writes what the conversion kept and dropped beside them.
func (r *run) convertTraces() error {
	r.cfg.Workloads = slices.Clone(r.cfg.Workloads)
	for i, w := range r.cfg.Workloads {
		if !isSWF(w) {
			continue
		}
		trace, err := swf.ReadFile(w)
		if err != nil {
			return fmt.Errorf("launch: %w", err)
		}
		workload, report, err := swf.Convert(trace, r.cfg.SWF)
		if err != nil {
			return fmt.Errorf("launch: converting %s: %w", w, err)
		}
		base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(w), ".gz"), ".swf")
		out := filepath.Join(r.cfg.OutDir, base+".json")
		if err := writeWith(out, workload.WriteJSON); err != nil {
			return fmt.Errorf("launch: converting %s: %w", w, err)
		}
		if err := writeWith(filepath.Join(r.cfg.OutDir, base+".swf-report.txt"), report.Write); err != nil {
			return fmt.Errorf("launch: converting %s: %w", w, err)
		}
		r.cfg.Workloads[i] = out
	}
	return nil
}

// writeWith writes a file whole through write, or not at all.
func writeWith(path string, write func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
