package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSlowScenariosAreTests checks the Makefile's SLOW_E2E, the scenarios
// make test leaves out and make check runs: every name is one of this
// package's tests, so that a renamed test cannot silently leave both
// targets (make test would skip a name that no longer exists and make
// test-slow run nothing for it).
func TestSlowScenariosAreTests(t *testing.T) {
	makefile := string(readFile(t, filepath.Join(repoRoot(), "Makefile")))
	m := regexp.MustCompile(`(?m)^SLOW_E2E := (.+)$`).FindStringSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile has no SLOW_E2E := line")
	}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	tests := map[string]bool{}
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				tests[fn.Name.Name] = true
			}
		}
	}
	names := strings.Split(m[1], "|")
	if len(names) < 2 {
		t.Fatalf("SLOW_E2E names %d tests", len(names))
	}
	for _, name := range names {
		if !tests[name] {
			t.Errorf("SLOW_E2E names %q, which is not a test of pkg/e2e", name)
		}
	}
}
