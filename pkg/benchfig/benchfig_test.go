package benchfig

import (
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/batkube/batkube/pkg/e2e
cpu: AMD EPYC 7B13
BenchmarkSimulationKueue-2   	       1	17538118498 ns/op	         9.885 control-cpu-s	         1.772 wall/control-cpu
--- BENCH: BenchmarkSimulationKueue-2
    controllers_bench_test.go:150: makespan 1211 s
BenchmarkBroken-2
--- FAIL: BenchmarkBroken-2
PASS
ok  	github.com/batkube/batkube/pkg/e2e	39.289s
goos: linux
goarch: amd64
pkg: github.com/batkube/batkube/pkg/store
cpu: AMD EPYC 7B13
BenchmarkListPods/n=100-2         	   50000	     23456 ns/op	    1024 B/op	      12 allocs/op
PASS
`

func TestParse(t *testing.T) {
	o, err := Parse(strings.NewReader(sample), "github.com/batkube/batkube")
	if err != nil {
		t.Fatal(err)
	}
	if o.Machine != "linux/amd64, AMD EPYC 7B13" {
		t.Errorf("machine %q", o.Machine)
	}
	if len(o.Results) != 2 {
		t.Fatalf("%d results, want 2 (the failed benchmark has none): %+v", len(o.Results), o.Results)
	}
	k, l := o.Results[0], o.Results[1]
	if k.Package != "pkg/e2e" || k.Name != "SimulationKueue" || k.Runs != 1 || len(k.Metrics) != 3 ||
		k.Metrics[2] != (Metric{1.772, "wall/control-cpu"}) {
		t.Errorf("first result %+v", k)
	}
	if l.Package != "pkg/store" || l.Name != "ListPods/n=100" || l.Runs != 50000 || l.Metrics[1] != (Metric{1024, "B/op"}) {
		t.Errorf("second result %+v", l)
	}
	if _, err := Parse(strings.NewReader("BenchmarkX-2  1  12x ns/op\n"), ""); err == nil {
		t.Error("a metric that is no number: no error")
	}
}

func TestTable(t *testing.T) {
	o, err := Parse(strings.NewReader(sample), "github.com/batkube/batkube")
	if err != nil {
		t.Fatal(err)
	}
	table := Table(o, "2026-11-27")
	for _, want := range []string{
		"on 2026-11-27 (linux/amd64, AMD EPYC 7B13)",
		"| pkg/e2e | SimulationKueue | 1 | 17.54 s/op, 9.885 control-cpu-s, 1.772 wall/control-cpu |",
		"| pkg/store | ListPods/n=100 | 50000 | 23.46 µs/op, 1024 B/op, 12 allocs/op |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestSplice(t *testing.T) {
	doc := "# Figures\nprose\n" + Begin + "\nold table\n" + End + "\nmore prose\n"
	got, err := Splice(doc, "new table\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Figures\nprose\n" + Begin + "\nnew table\n" + End + "\nmore prose\n"; got != want {
		t.Errorf("spliced:\n%s\nwant:\n%s", got, want)
	}
	again, err := Splice(got, "new table\n")
	if err != nil || again != got {
		t.Errorf("splicing the same table again changed the document (%v)", err)
	}
	for _, bad := range []string{"no markers", Begin + End + Begin, End + "\n" + Begin} {
		if _, err := Splice(bad, "x"); err == nil {
			t.Errorf("Splice(%q): no error", bad)
		}
	}
}
