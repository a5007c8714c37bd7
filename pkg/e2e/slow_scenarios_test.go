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
// make test leaves out and make check runs, in the groups that make
// test-slow runs side by side (SLOW_E2E_1, SLOW_E2E_2...): every name is one
// of this package's tests, so that a renamed test cannot silently leave both
// targets (make test would skip a name that no longer exists and make
// test-slow run nothing for it); no name is in two groups, and SLOW_E2E
// joins every group, so that make test skips what each group runs.
func TestSlowScenariosAreTests(t *testing.T) {
	makefile := string(readFile(t, filepath.Join(repoRoot(), "Makefile")))
	groups := regexp.MustCompile(`(?m)^SLOW_E2E_(\d+) := (.+)$`).FindAllStringSubmatch(makefile, -1)
	if len(groups) < 2 {
		t.Fatalf("the Makefile has %d SLOW_E2E_<n> := lines, want the groups of make test-slow", len(groups))
	}
	all := regexp.MustCompile(`(?m)^SLOW_E2E := (.+)$`).FindStringSubmatch(makefile)
	if all == nil {
		t.Fatal("the Makefile has no SLOW_E2E := line")
	}
	var joined []string
	for _, g := range groups {
		joined = append(joined, "$(SLOW_E2E_"+g[1]+")")
	}
	if want := strings.Join(joined, "|"); all[1] != want {
		t.Errorf("SLOW_E2E := %s, want %s (every group, once)", all[1], want)
	}
	tests := packageTests(t)
	group := map[string]string{}
	for _, g := range groups {
		for _, name := range strings.Split(g[2], "|") {
			if !tests[name] {
				t.Errorf("SLOW_E2E_%s names %q, which is not a test of pkg/e2e", g[1], name)
			}
			if other, twice := group[name]; twice {
				t.Errorf("%s is in SLOW_E2E_%s and SLOW_E2E_%s: make test-slow would run it twice", name, other, g[1])
			}
			group[name] = g[1]
		}
	}
}

// packageTests returns the names of this package's top-level tests.
func packageTests(t *testing.T) map[string]bool {
	t.Helper()
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
	return tests
}
