package screenshot

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
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
