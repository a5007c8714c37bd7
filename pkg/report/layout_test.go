package report

import (
	"context"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/batkube/batkube/pkg/screenshot"
)

// campaignSchedulers are the schedulers of a campaign like
// examples/campaign/campaign.yaml, with its repetitions.
var campaignSchedulers = []struct {
	name        string
	repetitions int
}{
	{"kube-scheduler 1.37", 3},
	{"kube-scheduler 1.37 (bin-packing)", 3},
	{"random (client-go)", 3},
	{"fifo first-fit (client-go)", 1},
}

// campaignFolder copies the tiny run into parent/<name> and writes the
// run.json a campaign would: scheduler, platform and workload entries (in
// their three forms) and repetition.
func campaignFolder(t *testing.T, parent, name, scheduler, platform, workload string, repetition int) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"_jobs.csv", "_pods.csv", "_schedule.csv", "summary.json"} {
		data, err := os.ReadFile(filepath.Join("testdata/tiny", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runJSON := fmt.Sprintf(`{"name": %q, "setting": "s", "scheduler": {"name": %q, "schedulerConfig": "x.yaml"},
  "platform": %s, "workload": %s, "repetition": %d}`, name, scheduler, platform, workload, repetition)
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(runJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// campaignRuns loads the runs of a campaign like examples/campaign's, in
// its order (repetition, then scheduler), named as it names their folders.
func campaignRuns(t *testing.T) []*Run {
	t.Helper()
	parent := t.TempDir()
	var runs []*Run
	for rep := 1; rep <= 3; rep++ {
		for _, s := range campaignSchedulers {
			if rep > s.repetitions {
				continue
			}
			name := fmt.Sprintf("%s--platform_16--contended_1500--%d", fileName(strings.ToLower(s.name)), rep)
			dir := campaignFolder(t, parent, name, s.name, `"examples/platforms/platform_16.xml"`, `"examples/workloads/contended_1500.json"`, rep)
			r, err := Load(dir, Inputs{})
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, r)
		}
	}
	return runs
}

// TestCampaignRunsAreLabelledByTheCampaignsNames: a run folder of a
// campaign is labelled by its scheduler's name in the campaign, with its
// repetition when other runs of the same setting are in the report; the
// platform and the workload only when the runs differ in them.
func TestCampaignRunsAreLabelledByTheCampaignsNames(t *testing.T) {
	runs := campaignRuns(t)
	if _, err := New("campaign", runs); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.Label)
	}
	want := []string{
		"kube-scheduler 1.37 #1", "kube-scheduler 1.37 (bin-packing) #1", "random (client-go) #1", "fifo first-fit (client-go)",
		"kube-scheduler 1.37 #2", "kube-scheduler 1.37 (bin-packing) #2", "random (client-go) #2",
		"kube-scheduler 1.37 #3", "kube-scheduler 1.37 (bin-packing) #3", "random (client-go) #3",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("labels\n%q, want\n%q", got, want)
	}

	// One repetition of each: the schedulers' names alone.
	three := []*Run{runs[0], runs[1], runs[3]}
	for _, r := range three {
		r.Label = ""
	}
	if _, err := New("three", three); err != nil {
		t.Fatal(err)
	}
	if got := []string{three[0].Label, three[1].Label, three[2].Label}; strings.Join(got, "|") != "kube-scheduler 1.37|kube-scheduler 1.37 (bin-packing)|fifo first-fit (client-go)" {
		t.Errorf("one run per setting: labels %q, want the schedulers' names", got)
	}
}

// TestCampaignLabelsNameThePlatformAndWorkloadWhenTheyDiffer: runs on two
// platforms are told apart by the platform's name (an entry's name, or its
// files' base names); the workload, the same for all, is left out.
func TestCampaignLabelsNameThePlatformAndWorkloadWhenTheyDiffer(t *testing.T) {
	parent := t.TempDir()
	var runs []*Run
	for i, platform := range []string{`{"name": "small", "files": ["a/p4.xml"]}`, `["a/p16.xml", "b/extra.xml"]`} {
		dir := campaignFolder(t, parent, fmt.Sprint("run", i), "fifo", platform, `"w/delay.json"`, 1)
		r, err := Load(dir, Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	if _, err := New("platforms", runs); err != nil {
		t.Fatal(err)
	}
	if runs[0].Label != "fifo · small" || runs[1].Label != "fifo · p16+extra" {
		t.Errorf("labels %q, %q; want fifo · small, fifo · p16+extra", runs[0].Label, runs[1].Label)
	}
}

// TestFolderLabelsAndGivenLabels: runs that are not a campaign's are
// labelled by their folders' names without the "--" parts all share; a
// given label is kept; labels are unique.
func TestFolderLabelsAndGivenLabels(t *testing.T) {
	names := []string{"default--p16--w--1", "binpack--p16--w--1", "fifo--p16--w--1", "mine", "mine-too"}
	runs := make([]*Run, len(names))
	for i, n := range names {
		runs[i] = loadTiny(t)
		runs[i].Name = n
	}
	runs[3].Label, runs[4].Label = "ours", "ours"
	if _, err := New("folders", runs[:3]); err != nil {
		t.Fatal(err)
	}
	if got := runs[0].Label + "|" + runs[1].Label + "|" + runs[2].Label; got != "default|binpack|fifo" {
		t.Errorf("labels %s, want default|binpack|fifo", got)
	}
	if _, err := New("given", runs[3:]); err != nil {
		t.Fatal(err)
	}
	if runs[3].Label != "ours" || runs[4].Label != "ours (2)" {
		t.Errorf("given labels %q, %q; want ours, ours (2)", runs[3].Label, runs[4].Label)
	}
	single := loadTiny(t)
	single.Name = "kube-scheduler--p16--w--1"
	if _, err := New("one", []*Run{single}); err != nil {
		t.Fatal(err)
	}
	if single.Label != single.Name {
		t.Errorf("a single run: label %q, want its folder's name", single.Label)
	}
}

// TestLegendsLieBelowTheDataArea: every legend entry of the charts that
// overlay ten runs lies in the band below the plot, within the chart's
// width, and none touches the data area.
func TestLegendsLieBelowTheDataArea(t *testing.T) {
	rep, err := New("campaign", campaignRuns(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Charts() {
		l := c.layout()
		if c.ID == "compare-queue" && len(l.Entries) != 10 {
			t.Errorf("chart %s: %d legend entries, want one per run (10)", c.ID, len(l.Entries))
		}
		if len(l.Entries) > 0 && l.Legend.Max.Y > l.Data.Min.Y {
			t.Errorf("chart %s: legend band up to %v, the data area from %v", c.ID, l.Legend.Max.Y, l.Data.Min.Y)
		}
		for i, e := range l.Entries {
			if overlaps(e, l.Data) {
				t.Errorf("chart %s: legend entry %d %v over the data area %v", c.ID, i, e, l.Data)
			}
			if e.Min.X < 0 || e.Max.X > c.w || e.Min.Y < l.Legend.Min.Y || e.Max.Y > l.Legend.Max.Y {
				t.Errorf("chart %s: legend entry %d %v outside the band %v of a chart %v wide", c.ID, i, e, l.Legend, c.w)
			}
		}
	}
}

func overlaps(a, b vg.Rectangle) bool {
	return min(a.Max.X, b.Max.X) > max(a.Min.X, b.Min.X) && min(a.Max.Y, b.Max.Y) > max(a.Min.Y, b.Min.Y)
}

// TestLegendColumns: short labels share a row; labels too long for the
// width get a column of their own each, cut with an ellipsis if they
// still do not fit.
func TestLegendColumns(t *testing.T) {
	style := legendStyle(newPlot("", "", ""))
	entries := func(labels ...string) []legendEntry {
		var e []legendEntry
		for _, l := range labels {
			e = append(e, legendEntry{l, color.Black})
		}
		return e
	}
	if l := newLegend(entries("cpu", "memory"), chartWidth, style); len(l.columns) != 2 || l.rows() != 1 {
		t.Errorf("cpu and memory: %d columns, %d rows; want one row", len(l.columns), l.rows())
	}
	long := strings.Repeat("a very long label ", 10)
	l := newLegend(entries(long, "b"), chartWidth, style)
	if len(l.columns) != 1 || l.rows() != 2 || !strings.HasSuffix(l.entries[0].Label, "…") || l.blockWidth() > chartWidth {
		t.Errorf("a long label: %d columns, %d rows, first label %q, %v wide; want one column, the label cut within %v",
			len(l.columns), l.rows(), l.entries[0].Label, l.blockWidth(), chartWidth)
	}
}

// TestTitlesFitTheChart: a title too wide for the chart wraps at spaces or
// after '-', '_', '/', on two lines at most, each within the width; what
// is left is cut with an ellipsis; a title that fits is left alone.
func TestTitlesFitTheChart(t *testing.T) {
	style := newPlot("", "", "").Title.TextStyle
	width := chartWidth - 2*titleMargin
	for _, tc := range []struct {
		title string
		lines int
		cut   bool
	}{
		{"kube-scheduler 1.37: pods on nodes", 1, false},
		{"kube-scheduler-1.37-bin-packing--platform_16--contended_1500--1: pods on nodes", 2, false},
		{strings.Repeat("kube-scheduler-1.37-bin-packing--platform_16--", 4) + ": pods on nodes", 2, true},
		{strings.Repeat("x", 200), 2, true},
	} {
		lines := fitText(style, tc.title, width, maxTitleLines)
		if len(lines) != tc.lines {
			t.Errorf("%q: %d lines %q, want %d", tc.title, len(lines), lines, tc.lines)
		}
		for _, l := range lines {
			if w := style.Width(l); w > width {
				t.Errorf("%q: line %q is %v wide, more than %v", tc.title, l, w, width)
			}
		}
		joined := strings.Join(lines, "")
		if cut := strings.HasSuffix(joined, "…"); cut != tc.cut {
			t.Errorf("%q: lines %q, cut %v; want cut %v", tc.title, lines, cut, tc.cut)
		}
		if !tc.cut && strings.ReplaceAll(joined, " ", "") != strings.ReplaceAll(tc.title, " ", "") {
			t.Errorf("%q: lines %q lose some of it", tc.title, lines)
		}
	}
}

// TestGanttTitlesAreTheRunsLabels: each run's Gantt chart is titled with
// the run's short label, whole, in its SVG.
func TestGanttTitlesAreTheRunsLabels(t *testing.T) {
	rep, err := New("campaign", campaignRuns(t))
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`<text[^>]*>([^<]*)</text>`)
	for _, r := range rep.Runs {
		svg, err := r.Charts[0].SVG()
		if err != nil {
			t.Fatal(err)
		}
		m := text.FindSubmatch(svg) // the title is drawn first
		if want := r.Run.Label + ": pods on nodes"; m == nil || string(m[1]) != want {
			t.Errorf("run %s: Gantt chart's first text %q, want %q", r.Run.Name, m, want)
		}
	}
}

// TestReportLayoutInChromium opens the report of a campaign's ten runs,
// with its settings' table, in a real headless Chromium at the
// documentation's width (1400 px) and at a narrow one: the page does not
// scroll sideways, no table runs off it, no chart's text is clipped or
// over the curves (screenshot.LayoutScript). Skipped without Chromium
// unless BATKUBE_REQUIRE_CHROMIUM is set.
func TestReportLayoutInChromium(t *testing.T) {
	browser, err := screenshot.FindBrowser()
	if err != nil {
		if os.Getenv("BATKUBE_REQUIRE_CHROMIUM") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	runs := campaignRuns(t)
	rep, err := New("Batkube campaign campaign.yaml", runs)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range campaignSchedulers {
		var names []string
		for _, r := range runs {
			if r.Origin.Scheduler == s.name {
				names = append(names, r.Name)
			}
		}
		if _, err := rep.AddGroup(campaignSchedulers[i].name, names...); err != nil {
			t.Fatal(err)
		}
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := rep.Write(page, filepath.Join(t.TempDir(), "charts"), 0); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1400, 1000} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defects, err := screenshot.LayoutDefects(ctx, page, screenshot.Options{Browser: browser, Width: width, Height: 1500})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range defects {
			t.Errorf("%d px wide: %s", width, d)
		}
	}
}
