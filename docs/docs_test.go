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

// TestCIRunsTheReadmesTestCommand: the README's test command, the line of
// its first-run block saying "as CI runs them", is a line of .ci/run, and
// .ci/run makes every target `make check` is made of (what the README
// says CI runs).
func TestCIRunsTheReadmesTestCommand(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var command string
	for line := range strings.Lines(string(readme)) {
		if cmd, comment, ok := strings.Cut(line, "#"); ok && strings.Contains(comment, "as CI runs them") {
			command = strings.TrimSpace(cmd)
			break
		}
	}
	if !strings.HasPrefix(command, "make ") {
		t.Fatalf("the README has no `make ...  # ... as CI runs them` line (found %q)", command)
	}
	made := map[string]bool{} // the targets .ci/run makes
	runsCommand := false
	for line := range strings.Lines(string(ci)) {
		line = strings.TrimSpace(line)
		runsCommand = runsCommand || line == command
		if targets, ok := strings.CutPrefix(line, "make "); ok {
			for _, target := range strings.Fields(targets) {
				made[target] = true
			}
		}
	}
	if !runsCommand {
		t.Errorf(".ci/run does not run the README's test command %q", command)
	}
	var check []string
	for line := range strings.Lines(string(makefile)) {
		if deps, ok := strings.CutPrefix(line, "check:"); ok {
			deps, _, _ = strings.Cut(deps, "##")
			check = strings.Fields(deps)
		}
	}
	if len(check) == 0 {
		t.Fatal("the Makefile has no check target with prerequisites")
	}
	for _, target := range check {
		if !made[target] {
			t.Errorf("make check is made of %q, which .ci/run does not make", target)
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
