// Package docs holds the documentation pages beside the README; its tests
// keep the README a front door, the packages in their layers and every
// reference the docs make to the code resolved.
package docs

import (
	"os"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/benchfig"
)

// TestReadmeIsAFrontDoor: the README stays short (the rest is in docs/).
// Its links and the pages' are resolved with every other reference the
// docs make (references_test.go).
func TestReadmeIsAFrontDoor(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 250 {
		t.Errorf("README.md has %d lines: keep it a front door (at most 250), move the rest to docs/", n)
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
