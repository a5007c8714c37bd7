package clock

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSameAPIAsUpstream: this package stands in for k8s.io/utils/clock in
// the upstream binaries, so it must declare every exported name of
// upstream's clock.go with the same shape (interfaces' methods, RealClock's
// methods and their signatures); it may add names of its own. It is
// checked against the k8s.io/utils each build compiles it in place of:
// kube-controller-manager's (examples/kube-1.37) and Kueue's
// (examples/kueue), and the main module's.
func TestSameAPIAsUpstream(t *testing.T) {
	for _, m := range []struct{ name, module string }{
		{"main-module", "../../.."}, {"kube-controller-manager", "../../../examples/kube-1.37"}, {"kueue", "../../../examples/kueue"},
	} {
		module := m.module
		t.Run(m.name, func(t *testing.T) {
			out, err := exec.Command("go", "mod", "download", "-C", module, "-json", "k8s.io/utils").Output()
			if err != nil {
				t.Fatalf("locating the k8s.io/utils of %s: %v", module, err)
			}
			var mod struct{ Dir, Version string }
			if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
				t.Fatalf("the k8s.io/utils of %s: %v (%s)", module, err, out)
			}
			t.Logf("k8s.io/utils %s", mod.Version)
			sameAPI(t, filepath.Join(mod.Dir, "clock", "clock.go"))
		})
	}
}

// sameAPI checks this package's API against the clock.go at path.
func sameAPI(t *testing.T, path string) {
	t.Helper()
	upstream := api(t, path)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, "_other.go") {
			continue
		}
		for k, v := range api(t, f) {
			ours[k] = v
		}
	}
	if len(upstream) < 10 {
		t.Fatalf("upstream's API read as %d names: %v", len(upstream), upstream)
	}
	for name, shape := range upstream {
		if got, ok := ours[name]; !ok {
			t.Errorf("%s: missing", name)
		} else if got != shape {
			t.Errorf("%s:\n  ours     %s\n  upstream %s", name, got, shape)
		}
	}
}

// api reads the exported declarations of a file: types (an interface by
// its methods), functions and methods by their signatures.
func api(t *testing.T, path string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	print := func(n any) string {
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, n); err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	decls := map[string]string{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			for _, s := range d.Specs {
				ts, ok := s.(*ast.TypeSpec)
				if !ok || !ts.Name.IsExported() {
					continue
				}
				shape := "type"
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					var methods []string
					for _, m := range it.Methods.List {
						if len(m.Names) == 0 {
							methods = append(methods, print(m.Type)) // embedded
							continue
						}
						methods = append(methods, m.Names[0].Name+print(m.Type))
					}
					slices.Sort(methods)
					shape = "interface{" + strings.Join(methods, "; ") + "}"
				}
				decls[ts.Name.Name] = shape
			}
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			name := d.Name.Name
			if d.Recv != nil {
				recv := print(d.Recv.List[0].Type)
				if !ast.IsExported(strings.TrimPrefix(recv, "*")) {
					continue
				}
				name = recv + "." + name
			}
			decls[name] = print(d.Type)
		}
	}
	return decls
}

// Without BATKUBE_CLOCK, RealClock is the time package's.
func TestRealTimeWithoutThePage(t *testing.T) {
	if process != nil {
		t.Skip("this test process runs on a simulated clock")
	}
	c := RealClock{}
	before := time.Now()
	if now := c.Now(); now.Before(before) || now.Sub(before) > time.Minute {
		t.Fatalf("Now = %v, real time %v", now, before)
	}
	<-c.NewTimer(time.Millisecond).C()
	<-c.After(time.Millisecond)
	done := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(done) })
	<-done
	k := c.NewTicker(time.Millisecond)
	<-k.C()
	k.Stop()
	if c.Tick(0) != nil {
		t.Error("Tick(0) is not nil")
	}
}
