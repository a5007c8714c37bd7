package report

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"image/color"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/batkube/batkube/pkg/outputs"
)

// Chart is one chart of the report, drawn with gonum.org/v1/plot.
type Chart struct {
	// ID names the chart's files ("<run>-gantt") and its element in the page.
	ID    string
	Kind  string // gantt, utilisation, queue, waiting-cdf
	Title string
	plot  *plot.Plot
	// legend names the curves, in a band below the plot.
	legend legend
	// w and h are the whole chart's size, legend included.
	w, h vg.Length
}

// SVG renders the chart as a standalone SVG document.
func (c *Chart) SVG() ([]byte, error) {
	canvas := vgsvg.New(c.w, c.h)
	c.draw(draw.New(canvas))
	var b bytes.Buffer
	if _, err := canvas.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: chart %s: %w", c.ID, err)
	}
	return b.Bytes(), nil
}

// PNG renders the chart as a PNG image of the given resolution.
func (c *Chart) PNG(dpi int) ([]byte, error) {
	canvas := vgimg.NewWith(vgimg.UseWH(c.w, c.h), vgimg.UseDPI(dpi))
	c.draw(draw.New(canvas))
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: canvas}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: chart %s: %w", c.ID, err)
	}
	return b.Bytes(), nil
}

// axes are limits shared by the charts of several runs, so that side by
// side they read on the same scale.
type axes struct {
	end      float64 // the latest makespan
	queue    float64 // the longest queue
	maxNodes int
}

func sharedAxes(runs []*Run) axes {
	var a axes
	for _, r := range runs {
		a.end = max(a.end, r.Figures().Makespan)
		for _, s := range r.Queue() {
			a.queue = max(a.queue, s.V)
		}
		nodes, _ := r.Gantt()
		a.maxNodes = max(a.maxNodes, len(nodes))
	}
	a.end = max(a.end, 1)
	a.queue = max(a.queue, 1)
	return a
}

const (
	chartWidth  = 12 * vg.Centimeter
	chartHeight = 6.5 * vg.Centimeter
)

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// runCharts are the charts of one run; prefix names their files.
func runCharts(r *Run, prefix string, a axes) ([]*Chart, error) {
	var charts []*Chart
	gantt := ganttChart(r, prefix, a)
	charts = append(charts, gantt)
	if cpu, mem := r.Utilisation(); cpu != nil {
		p := newPlot(r.Label+": requests of running jobs / allocatable", "simulated time (s)", "utilisation (%)")
		var legend []legendEntry
		for _, s := range []struct {
			name   string
			steps  []Step
			colour color.Color
		}{{"cpu", cpu, palette[0]}, {"memory", mem, palette[1]}} {
			l, err := stepLine(s.steps, a.end, 100, s.colour)
			if err != nil {
				return nil, err
			}
			p.Add(l)
			legend = append(legend, legendEntry{s.name, s.colour})
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, a.end, 0, 105
		charts = append(charts, newChart(prefix+"utilisation", "utilisation", "cpu and memory utilisation", p, legend, chartWidth, chartHeight))
	}
	p := newPlot(r.Label+": jobs pending (submitted, not started)", "simulated time (s)", "jobs pending")
	l, err := stepLine(r.Queue(), a.end, 1, palette[0])
	if err != nil {
		return nil, err
	}
	p.Add(l)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, a.end, 0, a.queue*1.05
	charts = append(charts, newChart(prefix+"queue", "queue", "queue length", p, nil, chartWidth, chartHeight))

	p = newPlot(r.Label+": waiting time distribution", "waiting time (simulated s)", "fraction of jobs")
	l, err = cdfLine(r.WaitingCDF(), palette[0])
	if err != nil {
		return nil, err
	}
	p.Add(l)
	p.Y.Min, p.Y.Max = 0, 1.02
	charts = append(charts, newChart(prefix+"waiting-cdf", "waiting-cdf", "waiting time CDF", p, nil, chartWidth, chartHeight))
	kueue, err := kueueCharts(r, prefix, a)
	if err != nil {
		return nil, err
	}
	charts = append(charts, kueue...)
	if len(r.launched) > 0 {
		c, err := nodeCountChart(r, prefix, a)
		if err != nil {
			return nil, err
		}
		charts = append(charts, c)
	}
	return charts, nil
}

// nodeCountChart is an autoscaled run's chart: its nodes over time
// (Run.NodeCounts), drawn up to the last deletion.
func nodeCountChart(r *Run, prefix string, a axes) (*Chart, error) {
	end := a.end
	for _, n := range r.launched {
		if !math.IsNaN(n.Deleted) {
			end = max(end, n.Deleted)
		}
	}
	p := newPlot(r.Label+": nodes launched by the autoscaler", "simulated time (s)", "nodes")
	legend, err := addSeries(p, r.NodeCounts(), end)
	if err != nil {
		return nil, err
	}
	return newChart(prefix+"nodes", "nodes", "autoscaler: nodes over time", p, legend, chartWidth, chartHeight), nil
}

// maxQueueLines is the most ClusterQueues a Kueue chart draws one line
// each for; a run with more gets one line for all of them.
const maxQueueLines = 10

// kueueCharts are a Kueue run's charts: the cpu quota each ClusterQueue's
// admitted Workloads use over time (_clusterqueues.csv), and the
// admissions over time (_workloads.csv).
func kueueCharts(r *Run, prefix string, a axes) ([]*Chart, error) {
	var charts []*Chart
	end := a.end
	if n := len(r.ClusterQueues); n > 0 {
		end = max(end, r.ClusterQueues[n-1].Time)
	}
	if len(r.ClusterQueues) > 0 {
		by := outputs.ByClusterQueue(r.ClusterQueues)
		names := slices.Sorted(maps.Keys(by))
		series := map[string][]Step{}
		if len(names) > maxQueueLines {
			var changes []Step
			for _, name := range names {
				prev := 0.0
				for _, s := range by[name] {
					changes = append(changes, Step{s.Time, s.Usage["cpu"] - prev})
					prev = s.Usage["cpu"]
				}
			}
			series[fmt.Sprintf("all %d ClusterQueues", len(names))] = steps(changes)
		} else {
			for _, name := range names {
				st := []Step{{0, 0}}
				for _, s := range by[name] {
					st = append(st, Step{s.Time, s.Usage["cpu"]})
				}
				series[name] = st
			}
		}
		p := newPlot(r.Label+": cpu quota used by admitted Workloads", "simulated time (s)", "cpu")
		legend, err := addSeries(p, series, end)
		if err != nil {
			return nil, err
		}
		charts = append(charts, newChart(prefix+"kueue-usage", "kueue-usage", "Kueue: quota used by ClusterQueue", p, legend, chartWidth, chartHeight))
	}
	if len(r.workloads) > 0 {
		cq := outputs.ClusterQueueOf(r.workloads)
		byQueue := map[string][]Step{}
		for _, w := range r.workloads {
			if !math.IsNaN(w.Admitted) {
				byQueue[cq(w)] = append(byQueue[cq(w)], Step{w.Admitted, 1})
			}
		}
		names := slices.Sorted(maps.Keys(byQueue))
		series := map[string][]Step{}
		if len(names) > maxQueueLines {
			var all []Step
			for _, s := range byQueue {
				all = append(all, s...)
			}
			series[fmt.Sprintf("all %d ClusterQueues", len(names))] = steps(all)
		} else {
			for _, name := range names {
				series[name] = steps(byQueue[name])
			}
		}
		p := newPlot(r.Label+": Workloads admitted (first admissions)", "simulated time (s)", "Workloads admitted")
		legend, err := addSeries(p, series, end)
		if err != nil {
			return nil, err
		}
		charts = append(charts, newChart(prefix+"kueue-admissions", "kueue-admissions", "Kueue: admissions over time", p, legend, chartWidth, chartHeight))
	}
	return charts, nil
}

// addSeries draws step functions, one line each, in name order, up to
// end; it returns their legend.
func addSeries(p *plot.Plot, series map[string][]Step, end float64) ([]legendEntry, error) {
	var legend []legendEntry
	for i, name := range slices.Sorted(maps.Keys(series)) {
		c := palette[i%len(palette)]
		l, err := stepLine(series[name], end, 1, c)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		legend = append(legend, legendEntry{name, c})
	}
	p.X.Min, p.X.Max, p.Y.Min = 0, end, 0
	return legend, nil
}

// comparisonCharts overlay the runs: waiting-time CDFs, queues and cpu
// utilisation, a colour per run, named in a legend below each.
func comparisonCharts(runs []*Run, a axes) ([]*Chart, error) {
	cdf := newPlot("waiting time distribution", "waiting time (simulated s)", "fraction of jobs")
	queue := newPlot("jobs pending", "simulated time (s)", "jobs pending")
	cpu := newPlot("cpu requested by running jobs / allocatable", "simulated time (s)", "cpu utilisation (%)")
	var legend, cpuLegend []legendEntry
	for i, r := range runs {
		c := runColour(i)
		entry := legendEntry{r.Label, c}
		legend = append(legend, entry)
		l, err := cdfLine(r.WaitingCDF(), c)
		if err != nil {
			return nil, err
		}
		cdf.Add(l)
		if l, err = stepLine(r.Queue(), a.end, 1, c); err != nil {
			return nil, err
		}
		queue.Add(l)
		if u, _ := r.Utilisation(); u != nil {
			if l, err = stepLine(u, a.end, 100, c); err != nil {
				return nil, err
			}
			cpu.Add(l)
			cpuLegend = append(cpuLegend, entry)
		}
	}
	cdf.Y.Min, cdf.Y.Max = 0, 1.02
	queue.X.Min, queue.X.Max, queue.Y.Min, queue.Y.Max = 0, a.end, 0, a.queue*1.05
	charts := []*Chart{
		newChart("compare-waiting-cdf", "waiting-cdf", "waiting time CDF, all runs", cdf, legend, chartWidth, chartHeight),
		newChart("compare-queue", "queue", "queue length, all runs", queue, legend, chartWidth, chartHeight),
	}
	if len(cpuLegend) > 0 {
		cpu.X.Min, cpu.X.Max, cpu.Y.Min, cpu.Y.Max = 0, a.end, 0, 105
		charts = append(charts, newChart("compare-utilisation", "utilisation", "cpu utilisation, all runs", cpu, cpuLegend, chartWidth, chartHeight))
	}
	return charts, nil
}

// runColour is the colour of the i-th run's curves in the charts that
// overlay the runs.
func runColour(i int) color.Color { return palette[i%len(palette)] }

// palette is Tableau's ten colours, distinct in print and on screen.
var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff}, color.RGBA{0xbc, 0xbd, 0x22, 0xff},
	color.RGBA{0x17, 0xbe, 0xcf, 0xff},
}

// stepLine draws a step function up to end, its values times scale.
func stepLine(s []Step, end, scale float64, c color.Color) (*plotter.Line, error) {
	xys := make(plotter.XYs, 0, len(s)+1)
	for _, st := range s {
		xys = append(xys, plotter.XY{X: st.T, Y: st.V * scale})
	}
	if last := s[len(s)-1]; last.T < end {
		xys = append(xys, plotter.XY{X: end, Y: last.V * scale})
	}
	return steppedLine(xys, plotter.PostStep, c)
}

// cdfLine draws an empirical distribution as a right-continuous step.
func cdfLine(pts []Point, c color.Color) (*plotter.Line, error) {
	xys := plotter.XYs{{X: 0, Y: 0}}
	if len(pts) > 0 && pts[0].X <= 0 {
		xys = xys[:0]
	}
	for _, p := range pts {
		xys = append(xys, plotter.XY{X: p.X, Y: p.Y})
	}
	if len(xys) == 1 { // a single point draws nothing: make it a flat line
		xys = append(xys, plotter.XY{X: xys[0].X + 1, Y: xys[0].Y})
	}
	return steppedLine(xys, plotter.PreStep, c)
}

// steppedLine draws xys as a step function of the given style, in colour c.
func steppedLine(xys plotter.XYs, style plotter.StepKind, c color.Color) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	l.StepStyle = style
	l.Color = c
	l.Width = vg.Points(1.2)
	return l, nil
}

// ganttChart draws the pods on the nodes over time: a band per node, a
// lane per pod running at once, a colour per job.
func ganttChart(r *Run, prefix string, a axes) *Chart {
	nodes, bars := r.Gantt()
	p := newPlot(r.Label+": pods on nodes", "simulated time (s)", "")
	p.Add(&ganttPlotter{bars: bars, nodes: len(nodes), end: a.end})
	if len(nodes) > 0 && len(nodes) <= 64 {
		p.NominalY(nodes...)
	} else {
		p.Y.Label.Text = "nodes (names in natural order)"
	}
	p.X.Min, p.X.Max = 0, a.end
	h := max(chartHeight, min(vg.Length(len(nodes))*0.5*vg.Centimeter+2.5*vg.Centimeter, 24*vg.Centimeter))
	return newChart(prefix+"gantt", "gantt", "Gantt chart", p, nil, chartWidth, h)
}

type ganttPlotter struct {
	bars  []Bar
	nodes int
	end   float64
}

// Plot implements plot.Plotter.
func (g *ganttPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	x, y := p.Transforms(&c)
	border := draw.LineStyle{Color: color.White, Width: vg.Points(0.3)}
	for _, b := range g.bars {
		const band = 0.8 // of a node's row
		lane := band / float64(b.Lanes)
		y0 := float64(b.Node) - band/2 + lane*float64(b.Lane)
		rect := []vg.Point{
			{X: x(b.Start), Y: y(y0)}, {X: x(b.End), Y: y(y0)},
			{X: x(b.End), Y: y(y0 + lane)}, {X: x(b.Start), Y: y(y0 + lane)},
		}
		c.FillPolygon(jobColour(b.Job), c.ClipPolygonXY(rect))
		if b.Lanes <= 8 {
			c.StrokeLines(border, c.ClipLinesXY(append(rect, rect[0]))...)
		}
	}
}

// DataRange implements plot.DataRanger.
func (g *ganttPlotter) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, g.end, -0.5, math.Max(float64(g.nodes)-0.5, 0.5)
}

// jobColour gives a job a stable colour of its own.
func jobColour(job string) color.Color {
	h := fnv.New32a()
	h.Write([]byte(job))
	v := h.Sum32()
	hue := float64(v%360) / 60
	s, l := 0.45+float64(v>>9%30)/100, 0.55
	// HSL to RGB.
	ch := (1 - math.Abs(2*l-1)) * s
	xc := ch * (1 - math.Abs(math.Mod(hue, 2)-1))
	var r, g, b float64
	switch int(hue) {
	case 0:
		r, g = ch, xc
	case 1:
		r, g = xc, ch
	case 2:
		g, b = ch, xc
	case 3:
		g, b = xc, ch
	case 4:
		r, b = xc, ch
	default:
		r, b = ch, xc
	}
	m := l - ch/2
	return color.RGBA{uint8((r + m) * 255), uint8((g + m) * 255), uint8((b + m) * 255), 0xff}
}
