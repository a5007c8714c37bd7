package metrics

import (
	"math"
	"strings"
	"testing"
)

const twoSeries = `# TYPE h histogram
h_bucket{r="a",le="1"} 1
h_bucket{r="a",le="2"} 3
h_bucket{r="a",le="4"} 5
h_bucket{r="a",le="+Inf"} 5
h_sum{r="a"} 10
h_count{r="a"} 5
h_bucket{r="b",le="1"} 1
h_bucket{r="b",le="2"} 3
h_bucket{r="b",le="4"} 5
h_bucket{r="b",le="+Inf"} 7
h_sum{r="b"} 20
h_count{r="b"} 7
# TYPE c counter
c{r="a",k="x"} 2
c{r="b",k="x"} 3
c{r="b",k="y"} 4
`

// TestHistogramQuantile checks the merged histogram of two series and
// quantiles computed by hand as Prometheus's histogram_quantile computes
// them (linear inside the bucket, the largest finite bound when the rank
// falls in +Inf).
func TestHistogramQuantile(t *testing.T) {
	f, err := Parse(strings.NewReader(twoSeries))
	if err != nil {
		t.Fatal(err)
	}
	all, ok := f.Histogram("h", nil)
	if !ok || all.Count != 12 || all.Sum != 30 || all.Mean() != 2.5 {
		t.Fatalf("merged: %+v (found %v), want 12 observations summing to 30", all, ok)
	}
	a, _ := f.Histogram("h", map[string]string{"r": "a"})
	for _, c := range []struct {
		name string
		h    Histogram
		q    float64
		want float64
	}{
		{"median of both", all, 0.5, 2},       // rank 6: the end of bucket (1,2]
		{"q10 of both", all, 0.1, 0.6},        // rank 1.2 in [0,1], which holds 2
		{"p95 of both in +Inf", all, 0.95, 4}, // rank 11.4 > 10 finite observations
		{"median of a", a, 0.5, 1.75},         // rank 2.5: 1.5 of the 2 in (1,2]
		{"p95 of a", a, 0.95, 3.75},           // rank 4.75: 1.75 of the 2 in (2,4]
		{"empty", Histogram{}, 0.5, math.NaN()},
	} {
		got := c.h.Quantile(c.q)
		if !(math.Abs(got-c.want) < 1e-9) && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%s: quantile %g = %g, want %g", c.name, c.q, got, c.want)
		}
	}
	if got := f.Sum("c", map[string]string{"k": "x"}); got != 5 {
		t.Errorf("sum of c{k=x} = %g, want 5", got)
	}
	if got := f.SumBy("c", "r", nil); got["a"] != 2 || got["b"] != 7 {
		t.Errorf("c by r = %v, want a:2 b:7", got)
	}
	if _, ok := f.Histogram("missing", nil); ok || f.Sum("missing", nil) != 0 {
		t.Error("a missing family has values")
	}
}

func TestParseRefusesWhatIsNotMetrics(t *testing.T) {
	if _, err := Parse(strings.NewReader("<html>not metrics</html>\n")); err == nil {
		t.Error("HTML parsed as metrics")
	}
}

// TestObservations counts the observations of a summary and of a
// histogram's series.
func TestObservations(t *testing.T) {
	f, err := Parse(strings.NewReader(twoSeries + `# TYPE gc summary
gc{quantile="0.5"} 0.001
gc_sum 0.3
gc_count 54
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Observations("gc", nil); got != 54 {
		t.Errorf("summary: %g observations, want 54", got)
	}
	if got := f.Observations("h", map[string]string{"r": "b"}); got != 7 {
		t.Errorf("histogram series b: %g observations, want 7", got)
	}
	if got := f.Observations("c", nil); got != 0 {
		t.Errorf("a counter: %g observations, want 0", got)
	}
}
