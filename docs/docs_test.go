// Package docs holds the documentation pages beside the README; its test
// keeps them linked and the README a front door.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/benchfig"
)

// link is a Markdown link or image: its target.
var link = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)

// TestReadmeIsAFrontDoorAndLinksResolve: the README stays short (the rest
// is in docs/), and every relative link of the README and of the pages
// names a file that exists.
func TestReadmeIsAFrontDoorAndLinksResolve(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 250 {
		t.Errorf("README.md has %d lines: keep it a front door (at most 250), move the rest to docs/", n)
	}
	pages, err := filepath.Glob("*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/ (%v)", err)
	}
	for _, page := range append(pages, "../README.md") {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), target)); err != nil {
				t.Errorf("%s links to %s: %v", page, target, err)
			}
		}
	}
}

// TestFiguresHaveTheirGeneratedTable: make bench rewrites the table of
// figures.md between its markers, which must therefore stand there once.
func TestFiguresHaveTheirGeneratedTable(t *testing.T) {
	data, err := os.ReadFile("figures.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := benchfig.Splice(string(data), "table"); err != nil {
		t.Errorf("figures.md: %v", err)
	}
}
