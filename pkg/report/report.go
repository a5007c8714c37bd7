package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/batkube/batkube/pkg/launch"
)

// Report is the report of one or more runs: their figures and charts.
type Report struct {
	Title string
	Runs  []RunReport
	// Comparison overlays the runs (nil for a single run).
	Comparison []*Chart
	// Groups summarise groups of runs (repetitions), see AddGroup.
	Groups []Group
}

// RunReport is one run's part of the report.
type RunReport struct {
	Run     *Run
	Figures Figures
	Charts  []*Chart
}

// New computes the figures and charts of runs. Runs of the same name (the
// same folder name) are told apart by a suffix: "run", "run-2"... Runs
// without a label get a short one (labelRuns).
func New(title string, runs []*Run) (*Report, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: no run")
	}
	seen := map[string]int{}
	for _, r := range runs {
		seen[r.Name]++
		if n := seen[r.Name]; n > 1 {
			r.Name = fmt.Sprintf("%s-%d", r.Name, n)
		}
	}
	labelRuns(runs)
	rep := &Report{Title: title}
	a := sharedAxes(runs)
	for _, r := range runs {
		// Each run's charts on its own axes: a short run beside a long
		// one is not squashed into the start of the long one's; the
		// comparison charts share the axes.
		charts, err := runCharts(r, fileName(r.Name)+"-", sharedAxes([]*Run{r}))
		if err != nil {
			return nil, err
		}
		rep.Runs = append(rep.Runs, RunReport{Run: r, Figures: r.Figures(), Charts: charts})
	}
	if len(runs) > 1 {
		var err error
		if rep.Comparison, err = comparisonCharts(runs, a); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// HasJobs says whether a run has batch/v1 Jobs: the comparison then leads
// with their waits from their creation.
func (rep *Report) HasJobs() bool {
	for _, r := range rep.Runs {
		if r.Figures.KubeJobs > 0 {
			return true
		}
	}
	return false
}

// ManyRows is how many rows of a per-object table the page shows (a run
// with more has them in its CSV file only).
func (rep *Report) ManyRows() int { return ManyRows }

// Charts lists every chart of the report.
func (rep *Report) Charts() []*Chart {
	all := append([]*Chart(nil), rep.Comparison...)
	for _, r := range rep.Runs {
		all = append(all, r.Charts...)
	}
	return all
}

// chartKinds are the kinds of a run's charts, in the page's order.
var chartKinds = []string{"gantt", "utilisation", "queue", "waiting-cdf", "kueue-usage", "kueue-admissions", "nodes"}

// shownKinds are the kinds of chart some run has, in the page's order.
func (rep *Report) shownKinds() []string {
	var kinds []string
	for _, kind := range chartKinds {
		for _, r := range rep.Runs {
			if slices.ContainsFunc(r.Charts, func(c *Chart) bool { return c.Kind == kind }) {
				kinds = append(kinds, kind)
				break
			}
		}
	}
	return kinds
}

// RunRows is how many rows of the runs' grid each run takes: its summary,
// then a row per kind of chart some run has.
func (rep *Report) RunRows() int { return 1 + len(rep.shownKinds()) }

// ChartCells are run i's charts, one per kind some run has (nil where run
// i has none of that kind): the page shows the same chart of the runs of
// a row of its grid side by side.
func (rep *Report) ChartCells(i int) []*Chart {
	kinds := rep.shownKinds()
	cells := make([]*Chart, len(kinds))
	for k, kind := range kinds {
		for _, c := range rep.Runs[i].Charts {
			if c.Kind == kind {
				cells[k] = c
			}
		}
	}
	return cells
}

// WriteCharts writes every chart as DIR/<id>.svg and, with dpi > 0,
// DIR/<id>.png, for papers.
func (rep *Report) WriteCharts(dir string, dpi int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, c := range rep.Charts() {
		svg, err := c.SVG()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, c.ID+".svg"), svg, 0o644); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if dpi <= 0 {
			continue
		}
		png, err := c.PNG(dpi)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, c.ID+".png"), png, 0o644); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	return nil
}

// fileName makes a run's name safe in a file name.
func fileName(s string) string {
	return regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(s, "_")
}

// WriteHTML writes the report as one self-contained HTML page: its charts
// are inline SVG, it loads nothing.
func (rep *Report) WriteHTML(w io.Writer) error {
	tmpl, err := template.New("report").Funcs(template.FuncMap{
		"svg":      inlineSVG,
		"seconds":  func(f float64) string { return fmt.Sprintf("%.3f", f) },
		"percent":  func(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) },
		"fixed":    func(f float64) string { return fmt.Sprintf("%.3f", f) },
		"duration": func(d time.Duration) string { return d.Round(time.Millisecond).String() },
		"mib":      func(b int64) int64 { return b >> 20 },
		"spread":   spread,
		"colour":   func(i int) template.CSS { return template.CSS(hexColour(runColour(i))) },
		"spreadPercent": func(s launch.Spread, n int) template.HTML {
			return spreadWithUnit(launch.Spread{Mean: 100 * s.Mean, StdDev: 100 * s.StdDev}, n, "%.1f", "\u00a0%")
		},
	}).Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("report: the page template: %w", err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, rep); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = b.WriteTo(w)
	return err
}

// inlineSVG renders a chart as an <svg> element to put in the page.
func inlineSVG(c *Chart) (template.HTML, error) {
	svg, err := c.SVG()
	if err != nil {
		return "", err
	}
	s := string(svg)
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("report: chart %s: no <svg> element", c.ID)
	}
	// The chart's own SVG, from gonum/plot, with its id and its data
	// area (for the page's checks); the page's CSS sizes it.
	s = `<svg id="chart-` + template.HTMLEscapeString(c.ID) + `" class="chart" data-kind="` + c.Kind + `"` +
		` data-plot-area="` + c.plotArea() + `"` + s[i+len("<svg"):]
	return template.HTML(s), nil
}

// plotArea is the chart's data area in its SVG's coordinates (origin at
// the top left, in points): "x y width height".
func (c *Chart) plotArea() string {
	d := c.layout().Data
	top := c.h - d.Max.Y
	return fmt.Sprintf("%.2f %.2f %.2f %.2f", d.Min.X.Points(), top.Points(), d.Size().X.Points(), d.Size().Y.Points())
}

// hexColour writes a colour as CSS's #rrggbb.
func hexColour(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}
