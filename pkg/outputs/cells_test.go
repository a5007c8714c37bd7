package outputs

import (
	"math"
	"strings"
	"testing"
)

// A reader's row: empty instants are NaN, empty counts 0, and every cell
// that does not parse is named in one error, in the order read.
func TestCellsNameEveryBadCell(t *testing.T) {
	c := cells{row: map[string]string{"created": "", "pods": "", "time": "2.5", "usage": "cpu=4;memory=1Ki"}}
	if v := c.instant("created"); !math.IsNaN(v) {
		t.Errorf("empty instant = %g, want NaN", v)
	}
	if v := c.count("pods"); v != 0 {
		t.Errorf("empty count = %d, want 0", v)
	}
	if v := c.number("time"); v != 2.5 {
		t.Errorf("number = %g, want 2.5", v)
	}
	if u := c.usage("usage"); u["cpu"] != 4 || u["memory"] != 1024 {
		t.Errorf("usage = %v", u)
	}
	if err := c.err("f.csv", 0); err != nil {
		t.Fatalf("good row: %v", err)
	}

	c = cells{row: map[string]string{"created": "soon", "jobs": "", "usage": "cpu"}}
	c.instant("created")
	c.whole("jobs")
	c.usage("usage")
	err := c.err("f.csv", 3)
	if err == nil {
		t.Fatal("bad row: no error")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "outputs: f.csv: row 5: ") {
		t.Errorf("error %q: want the file and the row's line (5)", msg)
	}
	created, jobs, usage := strings.Index(msg, "created:"), strings.Index(msg, "jobs:"), strings.Index(msg, "usage:")
	if created < 0 || jobs < created || usage < jobs {
		t.Errorf("error %q: want created, jobs and usage, in that order", msg)
	}
}

func TestReadWorkloadsRefusesBadCells(t *testing.T) {
	head := strings.Join(WorkloadsColumns, ",") + "\n"
	row := func(cells map[string]string) string {
		out := make([]string, len(WorkloadsColumns))
		for i, col := range WorkloadsColumns {
			out[i] = cells[col]
		}
		return strings.Join(out, ",") + "\n"
	}
	ws, err := ReadWorkloads(writeTemp(t, "_workloads.csv", head+row(map[string]string{"name": "w", "created": "1", "priority": "7"})))
	if err != nil || len(ws) != 1 || ws[0].Created != 1 || ws[0].Priority != 7 || !math.IsNaN(ws[0].Admitted) || ws[0].Evictions != 0 {
		t.Fatalf("a good row: %+v, %v", ws, err)
	}
	for col, bad := range map[string]string{"created": "soon", "usage": "cpu", "priority": "high", "evictions": "1.5"} {
		if _, err := ReadWorkloads(writeTemp(t, "_workloads.csv", head+row(map[string]string{"name": "w", col: bad}))); err == nil || !strings.Contains(err.Error(), col+":") {
			t.Errorf("%s=%s: error %v, want one naming %s", col, bad, err, col)
		}
	}
}
