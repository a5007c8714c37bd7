package screenshot

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCapturesWhatThePageDraws opens a page with a red block in a real
// headless Chromium (skipped without one, unless BATKUBE_REQUIRE_CHROMIUM
// is set, as in CI): the picture is a PNG of the window's size, red where
// the block is and white elsewhere.
func TestCapturesWhatThePageDraws(t *testing.T) {
	browser, err := FindBrowser()
	if err != nil {
		if os.Getenv("BATKUBE_REQUIRE_CHROMIUM") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	page := filepath.Join(t.TempDir(), "page.html")
	html := `<!doctype html><html><body style="margin:0;background:#fff">` +
		`<div style="width:200px;height:100px;background:#f00"></div></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := Capture(ctx, page, Options{Browser: browser, Width: 400, Height: 300})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if got := img.Bounds().Size(); got.X != 400 || got.Y != 300 {
		t.Errorf("picture of %v, want the 400×300 viewport", got)
	}
	at := func(x, y int) (r, g, b uint32) {
		r, g, b, _ = img.At(x, y).RGBA()
		return r >> 8, g >> 8, b >> 8
	}
	if r, g, b := at(50, 50); r < 200 || g > 60 || b > 60 {
		t.Errorf("inside the block: rgb(%d,%d,%d), want red", r, g, b)
	}
	if r, g, b := at(300, 200); r < 240 || g < 240 || b < 240 {
		t.Errorf("outside the block: rgb(%d,%d,%d), want white", r, g, b)
	}
}

// TestLayoutDefects: LayoutScript, run in a real headless Chromium on
// pages made to have each defect, names each; on a page without any, it
// finds none.
func TestLayoutDefects(t *testing.T) {
	browser, err := FindBrowser()
	if err != nil {
		if os.Getenv("BATKUBE_REQUIRE_CHROMIUM") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	// A chart of 400 × 200 px, its data area from (40, 20) to (380, 160).
	chart := func(id, area, texts string) string {
		return `<svg id="` + id + `" class="chart" ` + area + ` viewBox="0 0 200 100" style="width:400px;height:200px;display:block">` +
			`<text x="100" y="8" text-anchor="middle" font-size="8">title</text>` +
			`<text x="100" y="96" text-anchor="middle" font-size="8">x axis</text>` + texts + `</svg>`
	}
	const area = `data-plot-area="20 10 170 70"`
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"clean", `<table id="t"><tr><td>a</td><td>b</td></tr></table>` + chart("c", area, ""), nil},
		{"wide table", `<table id="wide"><tr><td style="min-width:900px">a</td></tr></table>`,
			[]string{"the page is", "table #wide is", "table #wide ends at"}},
		{"wide table that scrolls", `<div class="scroll" style="overflow-x:auto"><table><tr><td style="min-width:900px">a</td></tr></table></div>`,
			[]string{"table is"}},
		{"clipped title", chart("c", area, `<text x="-20" y="8" font-size="8">a long title clipped</text>`),
			[]string{`chart c: text "a long title clipped" is clipped`}},
		{"legend over the data", chart("c", area, `<text x="100" y="40" font-size="8">legend</text>`),
			[]string{`chart c: text "legend" lies over the data area`}},
		{"no data area", chart("c", "", ""), []string{"chart c gives no data-plot-area"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := filepath.Join(t.TempDir(), "page.html")
			html := `<!doctype html><html><body style="margin:8px">` + tc.body + `</body></html>`
			if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			defects, err := LayoutDefects(ctx, page, Options{Browser: browser, Width: 600, Height: 400})
			if err != nil {
				t.Fatal(err)
			}
			if len(defects) != len(tc.want) {
				t.Errorf("defects %q, want %d: %q", defects, len(tc.want), tc.want)
			}
			for _, w := range tc.want {
				if !slices.ContainsFunc(defects, func(d string) bool { return strings.Contains(d, w) }) {
					t.Errorf("no defect saying %q in %q", w, defects)
				}
			}
		})
	}
}
