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

// TestCIRunsTheReadmesTestCommand: the README's command for every test,
// the line of its first-run block saying "as CI runs it", is the one
// .ci/run runs.
func TestCIRunsTheReadmesTestCommand(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var command string
	for line := range strings.Lines(string(readme)) {
		if cmd, comment, ok := strings.Cut(line, "#"); ok && strings.Contains(comment, "as CI runs it") {
			command = strings.TrimSpace(cmd)
			break
		}
	}
	if !strings.HasPrefix(command, "make ") {
		t.Fatalf("the README has no `make ...  # ... as CI runs it` line (found %q)", command)
	}
	for line := range strings.Lines(string(ci)) {
		if strings.TrimSpace(line) == command {
			return
		}
	}
	t.Errorf(".ci/run does not run the README's test command %q", command)
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
