// Package screenshot takes a PNG picture of a local HTML file (a Batkube
// report) as a headless Chromium shows it: the pictures of the
// documentation are made this way from real runs (make pictures). It
// starts the browser, opens the file, waits for it to load, captures the
// window and closes the browser; it neither serves nor changes the file.
package screenshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/chromedp/chromedp"
)

// Options shape the picture.
type Options struct {
	// Browser is the Chromium (or Chrome) binary; empty: the first of
	// chromium, chromium-browser, google-chrome on PATH.
	Browser string
	// Width and Height are the page's viewport, in pixels (1400 × 1500
	// if zero): the picture's size.
	Width, Height int
}

// FindBrowser returns the first Chromium-like browser on PATH.
func FindBrowser() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("screenshot: no chromium, chromium-browser or google-chrome on PATH (apt-get install -y chromium)")
}

// Capture returns a PNG of the HTML file as the browser shows it.
func Capture(ctx context.Context, htmlPath string, opts Options) ([]byte, error) {
	var png []byte
	err := inBrowser(ctx, htmlPath, opts, func(tab context.Context) error {
		var err error
		if png, err = chromedp.Run(tab, chromedp.CaptureScreenshot()); err != nil {
			return fmt.Errorf("screenshot: capturing %s: %w", htmlPath, err)
		}
		return nil
	})
	return png, err
}

// LayoutDefects opens the HTML file (a Batkube report) in the browser at
// the viewport's size and returns what LayoutScript finds wrong with its
// layout, nothing when it reads well.
func LayoutDefects(ctx context.Context, htmlPath string, opts Options) ([]string, error) {
	var defects []string
	err := inBrowser(ctx, htmlPath, opts, func(tab context.Context) error {
		var err error
		if defects, err = chromedp.Run(tab, chromedp.Evaluate[[]string](LayoutScript)); err != nil {
			return fmt.Errorf("screenshot: inspecting %s: %w", htmlPath, err)
		}
		return nil
	})
	return defects, err
}

// inBrowser opens the HTML file in a headless browser, its viewport of the
// options' size, and runs do on its tab.
func inBrowser(ctx context.Context, htmlPath string, opts Options, do func(tab context.Context) error) error {
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	browser := opts.Browser
	if browser == "" {
		if browser, err = FindBrowser(); err != nil {
			return err
		}
	}
	w, h := opts.Width, opts.Height
	if w <= 0 || h <= 0 {
		w, h = 1400, 1500
	}
	profile, err := os.MkdirTemp("", "batkube-screenshot-")
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	defer os.RemoveAll(profile)
	allocOpts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.WindowSize(w, h), chromedp.UserDataDir(profile))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, allocOpts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(int64(w), int64(h)), chromedp.Navigate("file://"+abs)); err != nil {
		return fmt.Errorf("screenshot: opening %s in %s: %w", abs, browser, err)
	}
	return do(bctx)
}

// ToFile captures the HTML file into a PNG file.
func ToFile(ctx context.Context, htmlPath, pngPath string, opts Options) error {
	png, err := Capture(ctx, htmlPath, opts)
	if err != nil {
		return err
	}
	if err := os.WriteFile(pngPath, png, 0o644); err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	return nil
}
