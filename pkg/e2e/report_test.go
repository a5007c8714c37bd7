package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/batkube/batkube/pkg/screenshot"
)

// TestReportInChromium runs a contended workload with three schedulers
// (kube-scheduler 1.37 with its defaults and with bin-packing scoring, and
// the FIFO example), writes batkube-report's report of one run and of the
// three, and opens each in a real headless Chromium: the page loads nothing
// from elsewhere, writes nothing to its console, draws every chart, and its
// comparison table gives the makespan and mean waiting time computed here
// from _jobs.csv; each run's Gantt chart is titled with the run's label
// (one given on the command line as LABEL=DIR, the others the folders'
// names); and its layout has none of screenshot.LayoutScript's defects
// (the page no wider than the window, no table running off it, no chart
// text clipped or over a chart's curves). With BATKUBE_REPORT_SCREENSHOT=FILE it keeps the
// screenshot of the three-run report there (docs/report.png).
//
// It needs Chromium (Debian's package chromium); without one it is skipped,
// unless BATKUBE_REQUIRE_CHROMIUM is set (as CI does).
func TestReportInChromium(t *testing.T) {
	browser := chromiumPath(t)
	reporter := buildReportCommand(t)
	workload := filepath.Join(t.TempDir(), "contended_60.json")
	writeContendedWorkload(t, workload, 60, 0.42, 5)
	base := t.TempDir()

	binpack := filepath.Join(base, "binpack.yaml")
	writeFile(t, binpack, []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {qps: 5000, burst: 5000}
leaderElection: {leaderElect: true}
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
`))
	var dirs []string
	want := map[string]jobFigures{}
	for _, name := range []string{"default", "binpack", "fifo"} {
		s := newSimulation(t, platform4, workload)
		s.cfg.OutDir = filepath.Join(base, name)
		switch name {
		case "binpack":
			s.cfg.SchedulerConfig = binpack
		case "fifo":
			s.cfg.SchedulerCommand = filepath.Join(s.cfg.BinDir, "fifo") + " --kubeconfig {kubeconfig}"
			s.cfg.ServerArgs = []string{"--settle=signal"}
		}
		sum := s.mustRun(10 * time.Minute)
		f := figuresOf(s.jobs())
		if f.jobs != 60 || math.Abs(f.makespan-sum.Makespan) > 1e-3 {
			t.Fatalf("%s: %d jobs, makespan %.3f from _jobs.csv; want 60 jobs, _schedule.csv's makespan %.3f", name, f.jobs, f.makespan, sum.Makespan)
		}
		want[name] = f
		dirs = append(dirs, s.cfg.OutDir)
	}

	for _, tc := range []struct {
		name string
		dirs []string
	}{{"one-run", dirs[:1]}, {"three-runs", dirs}} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "report.html")
			// The last run labelled on the command line.
			labelled := append(slices.Clone(tc.dirs[:len(tc.dirs)-1]), givenLabel+"="+tc.dirs[len(tc.dirs)-1])
			args := append([]string{"-o", out, "-p", abs(repoRoot(), platform4), "-w", workload}, labelled...)
			if b, err := exec.Command(reporter, args...).CombinedOutput(); err != nil {
				t.Fatalf("batkube-report %s: %v\n%s", strings.Join(args, " "), err, b)
			}
			page := openInChromium(t, browser, out)
			wantCharts := 4 * len(tc.dirs) // gantt, utilisation, queue, waiting CDF
			if len(tc.dirs) > 1 {
				wantCharts += 3 // waiting CDFs, queues, utilisation of all runs
			}
			if len(page.Charts) != wantCharts {
				t.Errorf("%d charts drawn, want %d", len(page.Charts), wantCharts)
			}
			for _, c := range page.Charts {
				if c.Width < 300 || c.Height < 100 || c.Paths < 10 || c.Texts < 5 {
					t.Errorf("chart %s drawn %.0f×%.0f px with %d paths and %d texts: want a visible chart", c.ID, c.Width, c.Height, c.Paths, c.Texts)
				}
				if c.Kind == "gantt" && c.Paths < 60 {
					t.Errorf("Gantt chart %s has %d paths, want one at least per pod (60)", c.ID, c.Paths)
				}
			}
			if len(page.Rows) != len(tc.dirs) {
				t.Fatalf("comparison table: %d rows, want %d", len(page.Rows), len(tc.dirs))
			}
			for i, row := range page.Rows {
				f, ok := want[row["run"]]
				if !ok {
					t.Errorf("comparison table: a row for run %q, not one of ours", row["run"])
					continue
				}
				label := row["run"]
				if i == len(page.Rows)-1 {
					label = givenLabel
				}
				if row["label"] != label {
					t.Errorf("comparison table: run %s labelled %q, want %q", row["run"], row["label"], label)
				}
				if title := label + ": pods on nodes"; !strings.Contains(page.chartText("chart-"+row["run"]+"-gantt"), title) {
					t.Errorf("run %s: its Gantt chart's texts %q lack its title %q", row["run"], page.chartText("chart-"+row["run"]+"-gantt"), title)
				}
				for metric, v := range map[string]float64{"makespan": f.makespan, "mean-waiting": f.meanWaiting} {
					if got, want := row[metric], fmt.Sprintf("%.3f", v); got != want {
						t.Errorf("run %s: %s %q in the page, %s from _jobs.csv", row["run"], metric, got, want)
					}
				}
			}
			checkScreenshot(t, page.Screenshot)
			if keep := os.Getenv("BATKUBE_REPORT_SCREENSHOT"); keep != "" && len(tc.dirs) > 1 {
				writeFile(t, keep, page.Screenshot)
				t.Logf("screenshot of the report in %s", keep)
			}
		})
	}
}

// givenLabel is the label TestReportInChromium gives its last run.
const givenLabel = "FIFO first-fit"

// jobFigures are a run's figures recomputed from _jobs.csv.
type jobFigures struct {
	jobs                  int
	makespan, meanWaiting float64
}

func figuresOf(jobs map[string]jobRow) jobFigures {
	f := jobFigures{jobs: len(jobs)}
	started := 0
	for _, j := range jobs {
		if j.state == "REJECTED" {
			continue
		}
		started++
		f.makespan = max(f.makespan, j.finish)
		f.meanWaiting += j.start - j.submit
	}
	if started > 0 {
		f.meanWaiting /= float64(started)
	}
	return f
}

// chromiumPath finds a Chromium; without one it skips the test, or fails
// it when BATKUBE_REQUIRE_CHROMIUM is set.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("BATKUBE_REQUIRE_CHROMIUM") != "" {
		t.Fatal("no chromium on PATH and BATKUBE_REQUIRE_CHROMIUM is set: apt-get install -y chromium")
	}
	t.Skip("no chromium on PATH (apt-get install -y chromium): the report is not checked in a browser; set BATKUBE_REQUIRE_CHROMIUM to make this a failure")
	return ""
}

// buildReportCommand builds cmd/batkube-report (with the race detector
// when the tests have it), once, and returns its path.
func buildReportCommand(t *testing.T) string {
	t.Helper()
	return filepath.Join(buildCommands(t, raceEnabled, "./cmd/batkube-report"), "batkube-report")
}

// pageCheck is what the browser saw of a report.
type pageCheck struct {
	Charts []struct {
		ID     string  `json:"id"`
		Kind   string  `json:"kind"`
		Width  float64 `json:"width"`
		Height float64 `json:"height"`
		Paths  int     `json:"paths"`
		Texts  int     `json:"texts"`
		// Text is the chart's texts, joined by spaces.
		Text string `json:"text"`
	} `json:"charts"`
	// Rows are the comparison table's rows: "run", "label" and each
	// metric's text.
	Rows []map[string]string `json:"rows"`
	// LayoutDefects are what screenshot.LayoutScript finds.
	LayoutDefects []string `json:"-"`
	Screenshot    []byte   `json:"-"`
}

// chartText is the texts of the chart of that element id ("" if none).
func (p pageCheck) chartText(id string) string {
	for _, c := range p.Charts {
		if c.ID == id {
			return c.Text
		}
	}
	return ""
}

// inspectPage reads the page's charts and comparison table.
const inspectPage = `(() => ({
  charts: [...document.querySelectorAll('svg.chart')].map(s => {
    const r = s.getBoundingClientRect();
    return {id: s.id, kind: s.dataset.kind, width: r.width, height: r.height,
            paths: s.querySelectorAll('path').length, texts: s.querySelectorAll('text').length,
            text: [...s.querySelectorAll('text')].map(t => t.textContent).join(' ')};
  }),
  rows: [...document.querySelectorAll('#comparison tbody tr')].map(tr => {
    const m = {run: tr.dataset.run, label: tr.dataset.label};
    tr.querySelectorAll('td[data-metric]').forEach(td => { m[td.dataset.metric] = td.textContent.trim(); });
    return m;
  }),
}))()`

// consoleSentinel is written to the console once the page is inspected:
// every message before it is the page's.
const consoleSentinel = "batkube-report-test: end of the page's messages"

// requestSentinel is requested once the page is inspected: every request
// before it is the page's.
const requestSentinel = "file:///batkube-report-test-sentinel.png"

// openInChromium loads the report in a headless Chromium, inspects it,
// takes a screenshot, and fails the test if the page wrote to its console
// (errors, warnings, exceptions), requested anything but itself, or has
// a layout defect (screenshot.LayoutScript: the window is 1400 px wide, as
// the documentation's pictures).
func openInChromium(t *testing.T, browser, file string) pageCheck {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.WindowSize(1400, 1500), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil { // start the browser and its tab
		t.Fatalf("starting %s: %v", browser, err)
	}

	var mu sync.Mutex
	var messages []string
	sawSentinel := make(chan struct{})
	consoleCtx, stopConsole := context.WithCancel(bctx)
	defer stopConsole()
	console := chromedp.Console(consoleCtx) // subscribed from here on
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if strings.Contains(m.Text, consoleSentinel) {
				close(sawSentinel)
				return
			}
			mu.Lock()
			messages = append(messages, fmt.Sprintf("%s: %s", m.Type, m.Text))
			mu.Unlock()
		}
	}()

	// Every request the page makes, up to a sentinel request made once
	// the page is inspected.
	var requests []string
	sawRequestSentinel := make(chan struct{})
	sent := chromedp.Events(consoleCtx, network.RequestWillBeSent)
	go func() {
		for ev, err := range sent {
			if err != nil {
				return
			}
			if ev.Request.URL == requestSentinel {
				close(sawRequestSentinel)
				return
			}
			mu.Lock()
			requests = append(requests, ev.Request.URL)
			mu.Unlock()
		}
	}()

	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+file)); err != nil {
		t.Fatalf("loading %s: %v", file, err)
	}
	page, err := chromedp.Run(bctx, chromedp.Evaluate[pageCheck](inspectPage))
	if err != nil {
		t.Fatalf("inspecting the page: %v", err)
	}
	if page.LayoutDefects, err = chromedp.Run(bctx, chromedp.Evaluate[[]string](screenshot.LayoutScript)); err != nil {
		t.Fatalf("checking the page's layout: %v", err)
	}
	for _, d := range page.LayoutDefects {
		t.Errorf("the page's layout: %s", d)
	}
	if page.Screenshot, err = chromedp.Run(bctx, chromedp.CaptureScreenshot()); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// A sentinel sent last proves that everything the page sent before it
	// has arrived.
	awaitSentinel := func(script, what string, saw <-chan struct{}) {
		if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](script)); err != nil {
			t.Fatalf("sending the %s sentinel: %v", what, err)
		}
		select {
		case <-saw:
		case <-ctx.Done():
			t.Fatalf("the %s never arrived (no sentinel)", what)
		}
	}
	awaitSentinel(fmt.Sprintf("console.info(%q), true", consoleSentinel), "console messages", sawSentinel)
	awaitSentinel(fmt.Sprintf("new Image().src = %q, true", requestSentinel), "requests", sawRequestSentinel)
	mu.Lock()
	defer mu.Unlock()
	for _, m := range messages {
		t.Errorf("the page wrote to its console: %s", m)
	}
	for _, u := range requests {
		if u != "file://"+file {
			t.Errorf("the page requested %s: want it self-contained", u)
		}
	}
	return page
}

// checkScreenshot checks that a screenshot is an image with something
// drawn: many colours, a fair share of pixels not white.
func checkScreenshot(t *testing.T, data []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	colours := map[[3]uint32]bool{}
	inked := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				inked++
			}
		}
	}
	share := float64(inked) / float64(b.Dx()*b.Dy())
	if b.Dx() < 1000 || b.Dy() < 700 || len(colours) < 20 || share < 0.03 {
		t.Errorf("screenshot %v: %d colours, %.1f %% of pixels not white: want a drawn page", b.Size(), len(colours), 100*share)
	}
}
