package report

import (
	"image/color"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A chart's layout, from top to bottom: its title, wrapped to the chart's
// width; its plot (axes and data area); its legend, in a band of its own
// below the plot, so that it never hides a curve.

const (
	// chartMargin is kept free around the plot: room for the browser's
	// boxes of the title and the axis labels, a little taller than
	// gonum/plot's.
	chartMargin = 1.5 * vg.Millimeter
	// titleMargin is kept free on each side of a title.
	titleMargin = 4 * vg.Millimeter
	// maxTitleLines is how many lines a title may take; what is left is
	// cut with an ellipsis.
	maxTitleLines = 2
	// legendFontSize is the size of the legend's labels.
	legendFontSize = 9
	// legendSwatch is the length of the line drawn before a label,
	// legendSwatchGap the space between it and the label, legendColumnGap
	// the space between columns, legendTopGap the space above the
	// legend's first row.
	legendSwatch    = 5 * vg.Millimeter
	legendSwatchGap = 1.5 * vg.Millimeter
	legendColumnGap = 4 * vg.Millimeter
	legendTopGap    = 1.5 * vg.Millimeter
	// legendSideMargin is kept free on each side of the legend.
	legendSideMargin = 2 * vg.Millimeter
)

// legendEntry is a curve of a chart as its legend names it.
type legendEntry struct {
	Label  string
	Colour color.Color
}

// chartLayout is where a chart's parts lie on its canvas (origin at the
// bottom left, in points).
type chartLayout struct {
	// Plot is the plot's area (title, axes and data); Data the area the
	// data are drawn in; Legend the band below the plot (empty without a
	// legend) and Entries each legend entry's box in it.
	Plot, Data, Legend vg.Rectangle
	Entries            []vg.Rectangle
}

// newChart makes a chart of width w whose plot, with a one-line title,
// takes height h: a title too wide for w is wrapped (the chart grows by
// its extra lines) and the legend's band is added below.
func newChart(id, kind, title string, p *plot.Plot, entries []legendEntry, w, h vg.Length) *Chart {
	lines := fitText(p.Title.TextStyle, p.Title.Text, w-2*titleMargin, maxTitleLines)
	p.Title.Text = strings.Join(lines, "\n")
	if n := len(lines); n > 1 {
		h += vg.Length(n-1) * p.Title.TextStyle.FontExtents().Height
	}
	l := newLegend(entries, w-2*legendSideMargin, legendStyle(p))
	return &Chart{ID: id, Kind: kind, Title: title, plot: p, legend: l, w: w, h: h + l.height()}
}

// layout computes where the chart's parts lie.
func (c *Chart) layout() chartLayout {
	band := c.legend.height()
	l := chartLayout{
		Plot: vg.Rectangle{
			Min: vg.Point{X: chartMargin, Y: band + chartMargin},
			Max: vg.Point{X: c.w - chartMargin, Y: c.h - chartMargin},
		},
		Legend: vg.Rectangle{Max: vg.Point{X: c.w, Y: band}},
	}
	l.Data = c.plot.DataCanvas(draw.Canvas{Rectangle: l.Plot}).Rectangle
	for i := range c.legend.entries {
		l.Entries = append(l.Entries, c.legend.entryBox(i, l.Legend))
	}
	return l
}

// draw draws the chart on a canvas of its size.
func (c *Chart) draw(dc draw.Canvas) {
	l := c.layout()
	c.plot.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: l.Plot})
	c.legend.draw(dc, l.Entries)
}

// legend is a chart's legend laid out in a grid: entries row by row, in
// columns as many as the width allows.
type legend struct {
	style   text.Style
	entries []legendEntry
	columns []vg.Length // each column's width
}

// legendStyle is the style of the legend's labels: the plot's axis
// labels', smaller, each label left-aligned on its swatch's line.
func legendStyle(p *plot.Plot) text.Style {
	s := p.X.Label.TextStyle
	s.Font.Size = legendFontSize
	s.Rotation = 0
	s.XAlign, s.YAlign = draw.XLeft, draw.YCenter
	return s
}

// newLegend lays out entries within width: in as many columns as fit;
// in one column, labels too wide are cut with an ellipsis.
func newLegend(entries []legendEntry, width vg.Length, style text.Style) legend {
	l := legend{style: style, entries: entries}
	if len(entries) == 0 {
		return l
	}
	for n := len(entries); n >= 1; n-- {
		l.columns = l.columnWidths(n)
		if l.blockWidth() <= width {
			return l
		}
	}
	labelWidth := width - legendSwatch - legendSwatchGap
	l.entries = make([]legendEntry, len(entries))
	for i, e := range entries {
		l.entries[i] = legendEntry{Label: ellipsize(style, e.Label, labelWidth), Colour: e.Colour}
	}
	l.columns = l.columnWidths(1)
	return l
}

// columnWidths are the widths of n columns of the entries, row by row.
func (l legend) columnWidths(n int) []vg.Length {
	widths := make([]vg.Length, n)
	for i := range l.entries {
		widths[i%n] = max(widths[i%n], l.entryWidth(i))
	}
	return widths
}

// entryWidth is entry i's width: swatch, gap and label.
func (l legend) entryWidth(i int) vg.Length {
	return legendSwatch + legendSwatchGap + l.style.Width(l.entries[i].Label)
}

// blockWidth is the width of the legend's columns and the gaps between.
func (l legend) blockWidth() vg.Length {
	var w vg.Length
	for _, c := range l.columns {
		w += c
	}
	return w + vg.Length(len(l.columns)-1)*legendColumnGap
}

// rowHeight is the height of a row of the legend.
func (l legend) rowHeight() vg.Length { return 1.25 * l.style.FontExtents().Height }

// rows is the number of rows of the legend.
func (l legend) rows() int {
	if len(l.columns) == 0 {
		return 0
	}
	return (len(l.entries) + len(l.columns) - 1) / len(l.columns)
}

// height is the height of the legend's band: nothing without entries.
func (l legend) height() vg.Length {
	if len(l.entries) == 0 {
		return 0
	}
	return legendTopGap + vg.Length(l.rows())*l.rowHeight()
}

// entryBox is entry i's box in the band, the legend centred in it.
func (l legend) entryBox(i int, band vg.Rectangle) vg.Rectangle {
	row, col := i/len(l.columns), i%len(l.columns)
	x := band.Min.X + (band.Size().X-l.blockWidth())/2
	for _, w := range l.columns[:col] {
		x += w + legendColumnGap
	}
	top := band.Max.Y - legendTopGap - vg.Length(row)*l.rowHeight()
	return vg.Rectangle{
		Min: vg.Point{X: x, Y: top - l.rowHeight()},
		Max: vg.Point{X: x + l.entryWidth(i), Y: top},
	}
}

// draw draws each entry in its box: a line of its colour, then its label.
func (l legend) draw(c draw.Canvas, boxes []vg.Rectangle) {
	for i, e := range l.entries {
		b := boxes[i]
		y := (b.Min.Y + b.Max.Y) / 2
		line := draw.LineStyle{Color: e.Colour, Width: vg.Points(2)}
		c.StrokeLine2(line, b.Min.X, y, b.Min.X+legendSwatch, y)
		c.FillText(l.style, vg.Point{X: b.Min.X + legendSwatch + legendSwatchGap, Y: y}, e.Label)
	}
}

// fitText breaks s into at most maxLines lines no wider than width, as
// style measures them: at spaces, else after a '-', '_' or '/'; a word
// wider than the width is cut where it must, and what the last line
// cannot hold is cut with an ellipsis.
func fitText(style text.Style, s string, width vg.Length, maxLines int) []string {
	fits := func(line string) bool { return style.Width(strings.TrimSpace(line)) <= width }
	var lines []string // untrimmed: their pieces end with their separators
	line := ""
	for _, piece := range breakablePieces(s) {
		if fits(line + piece) {
			line += piece
			continue
		}
		if line != "" {
			lines = append(lines, line)
		}
		for line = piece; !fits(line); {
			cut := longestFitting(line, fits)
			lines = append(lines, line[:cut])
			line = line[cut:]
		}
	}
	if strings.TrimSpace(line) != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	if len(lines) > maxLines {
		rest := strings.Join(lines[maxLines-1:], "")
		lines = append(lines[:maxLines-1], ellipsize(style, strings.TrimSpace(rest), width))
	}
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return lines
}

// breakablePieces splits s after each space, '-', '_' and '/': the places
// where a line may break.
func breakablePieces(s string) []string {
	var pieces []string
	start := 0
	for i, r := range s {
		if strings.ContainsRune(" -_/", r) {
			pieces = append(pieces, s[start:i+utf8.RuneLen(r)])
			start = i + utf8.RuneLen(r)
		}
	}
	if start < len(s) {
		pieces = append(pieces, s[start:])
	}
	return pieces
}

// longestFitting is the length in bytes of the longest prefix of s that
// fits, at least one rune; s itself does not fit.
func longestFitting(s string, fits func(string) bool) int {
	_, best := utf8.DecodeRuneInString(s)
	for i := range s { // at each rune's start
		if i <= best {
			continue
		}
		if !fits(s[:i]) {
			break
		}
		best = i
	}
	return best
}

// ellipsize cuts s with "…" so that it fits width (s itself if it does).
func ellipsize(style text.Style, s string, width vg.Length) string {
	if style.Width(s) <= width {
		return s
	}
	runes := []rune(s)
	for n := len(runes) - 1; n > 0; n-- {
		if cut := strings.TrimSpace(string(runes[:n])) + "…"; style.Width(cut) <= width {
			return cut
		}
	}
	return "…"
}
