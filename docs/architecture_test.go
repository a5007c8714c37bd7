package docs

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/batkube/batkube/"

// layerRow is a row of architecture.md's table: "| N | `pkg/a`, `pkg/b/...` |".
var layerRow = regexp.MustCompile("^\\| (\\d+) \\| (.*) \\|$")
var layerPkg = regexp.MustCompile("`([^`]+)`")

// layers reads the table of architecture.md: package (or subtree, "x/...")
// -> layer.
func layers(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := layerRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, p := range layerPkg.FindAllStringSubmatch(m[2], -1) {
			out[p[1]] = n
		}
	}
	if len(out) == 0 {
		t.Fatal("architecture.md has no table of layers")
	}
	return out
}

// layerOf is the layer of a package of the module (its path from the
// module's root), by its own row or its nearest subtree's ("x/...", then
// returned as unit: the packages of one subtree may import each other).
func layerOf(table map[string]int, pkg string) (layer int, unit string, ok bool) {
	if n, ok := table[pkg]; ok {
		return n, pkg, true
	}
	for p := pkg; p != "." && p != "/"; p = filepath.Dir(p) {
		if n, ok := table[p+"/..."]; ok {
			return n, p + "/...", true
		}
	}
	return 0, "", false
}

// TestPackagesImportOnlyLowerLayers: every package of the module (but the
// examples' own modules) is in a layer of architecture.md, and imports
// only packages of lower layers.
func TestPackagesImportOnlyLowerLayers(t *testing.T) {
	table := layers(t)
	imports := map[string]map[string]bool{} // package -> module packages it imports
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "out" || name == "node_modules") {
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		if pkg == "." {
			return nil // the root's swagger.go: the module's own files
		}
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module) {
				imports[pkg][strings.TrimPrefix(p, module)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 20 {
		t.Fatalf("found %d packages: the walk went wrong", len(imports))
	}
	for pkg, deps := range imports {
		n, unit, ok := layerOf(table, pkg)
		if !ok {
			t.Errorf("%s is in no layer of architecture.md: add it to the table", pkg)
			continue
		}
		for dep := range deps {
			m, depUnit, ok := layerOf(table, dep)
			if ok && m >= n && depUnit != unit {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only lower layers (architecture.md)", pkg, n, dep, m)
			}
		}
	}
}

// TestBrokerWritesOnlyThroughTheAPI: no code of pkg/broker calls a method
// of the store that writes (its one door for writes is pkg/apiserver).
func TestBrokerWritesOnlyThroughTheAPI(t *testing.T) {
	writes := map[string]bool{"Create": true, "Update": true, "Change": true, "ChangeSharing": true, "Delete": true, "DeleteSharing": true}
	files, err := filepath.Glob("../pkg/broker/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no broker files (%v)", err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !writes[sel.Sel.Name] {
				return true
			}
			if recv, ok := sel.X.(*ast.SelectorExpr); ok && recv.Sel.Name == "store" {
				t.Errorf("%s: the broker calls store.%s: write through pkg/apiserver instead", filepath.Base(path), sel.Sel.Name)
			}
			return true
		})
	}
}
