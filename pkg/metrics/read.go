package metrics

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are metrics read from the Prometheus text format, by name.
type Families map[string]*dto.MetricFamily

// Parse reads metrics in the Prometheus text format.
func Parse(r io.Reader) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	f, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("metrics: parsing the text format: %w", err)
	}
	return f, nil
}

// ParseFile reads a file of metrics in the Prometheus text format.
func ParseFile(path string) (Families, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	f, err := Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Has reports whether a family of that name was read.
func (f Families) Has(name string) bool { return f[name] != nil }

// Sum adds the values of the series of a counter, gauge or untyped family
// whose labels include match (every series when match is empty).
func (f Families) Sum(name string, match map[string]string) float64 {
	var total float64
	for _, m := range f.series(name, match) {
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Untyped != nil:
			total += m.Untyped.GetValue()
		}
	}
	return total
}

// SumBy adds the values of a family's series whose labels include match,
// grouped by the value of one label.
func (f Families) SumBy(name, label string, match map[string]string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range f.series(name, match) {
		v := labelValue(m, label)
		switch {
		case m.Counter != nil:
			out[v] += m.Counter.GetValue()
		case m.Gauge != nil:
			out[v] += m.Gauge.GetValue()
		case m.Untyped != nil:
			out[v] += m.Untyped.GetValue()
		}
	}
	return out
}

// Observations adds the counts of observations of the series of a summary
// or histogram family whose labels include match (go_gc_duration_seconds:
// the process's garbage collections).
func (f Families) Observations(name string, match map[string]string) float64 {
	var total float64
	for _, m := range f.series(name, match) {
		switch {
		case m.Summary != nil:
			total += float64(m.Summary.GetSampleCount())
		case m.Histogram != nil:
			total += count(m.Histogram.SampleCount, m.Histogram.SampleCountFloat)
		}
	}
	return total
}

// Histogram merges the series of a histogram family whose labels include
// match (they must share their buckets, as the series of one family do);
// false when there is no such series.
func (f Families) Histogram(name string, match map[string]string) (Histogram, bool) {
	var h Histogram
	bounds := map[float64]float64{}
	found := false
	for _, m := range f.series(name, match) {
		mh := m.GetHistogram()
		if mh == nil {
			continue
		}
		found = true
		h.Count += count(mh.SampleCount, mh.SampleCountFloat)
		h.Sum += mh.GetSampleSum()
		for _, b := range mh.GetBucket() {
			if !math.IsInf(b.GetUpperBound(), +1) {
				bounds[b.GetUpperBound()] += count(b.CumulativeCount, b.CumulativeCountFloat)
			}
		}
	}
	for le, n := range bounds {
		h.Buckets = append(h.Buckets, Bucket{UpperBound: le, Cumulative: n})
	}
	sort.Slice(h.Buckets, func(i, j int) bool { return h.Buckets[i].UpperBound < h.Buckets[j].UpperBound })
	return h, found
}

func count(i *uint64, f *float64) float64 {
	if f != nil {
		return *f
	}
	if i != nil {
		return float64(*i)
	}
	return 0
}

// series returns the series of a family whose labels include match.
func (f Families) series(name string, match map[string]string) []*dto.Metric {
	fam := f[name]
	if fam == nil {
		return nil
	}
	var out []*dto.Metric
	for _, m := range fam.GetMetric() {
		ok := true
		for k, v := range match {
			if labelValue(m, k) != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Histogram is a histogram read from metrics: its observations' count and
// sum, and its finite buckets (cumulative counts; the +Inf bucket is Count).
type Histogram struct {
	Count, Sum float64
	Buckets    []Bucket
}

// Bucket is a histogram bucket: the observations <= UpperBound.
type Bucket struct {
	UpperBound, Cumulative float64
}

// Mean is the mean observation (NaN without any).
func (h Histogram) Mean() float64 {
	if h.Count == 0 {
		return math.NaN()
	}
	return h.Sum / h.Count
}

// Quantile estimates the q-quantile (0 <= q <= 1) as Prometheus's
// histogram_quantile does: linear interpolation inside the bucket that
// holds the rank, the lower bound of the first bucket taken as 0, and the
// largest finite bound when the rank falls in the +Inf bucket. NaN without
// observations.
func (h Histogram) Quantile(q float64) float64 {
	if h.Count == 0 || q < 0 || q > 1 || len(h.Buckets) == 0 {
		return math.NaN()
	}
	rank := q * h.Count
	i := sort.Search(len(h.Buckets), func(i int) bool { return h.Buckets[i].Cumulative >= rank })
	if i == len(h.Buckets) {
		return h.Buckets[len(h.Buckets)-1].UpperBound
	}
	b := h.Buckets[i]
	if i == 0 && b.UpperBound <= 0 {
		return b.UpperBound
	}
	start, below := 0.0, 0.0
	if i > 0 {
		start, below = h.Buckets[i-1].UpperBound, h.Buckets[i-1].Cumulative
	}
	in := b.Cumulative - below
	if in == 0 {
		return b.UpperBound
	}
	return start + (b.UpperBound-start)*((rank-below)/in)
}
