package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// repoRoot is the repository's top directory.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// binary returns the path of an upstream binary built by `make upstream`
// into bin/, or found in $BATKUBE_BIN.
func binary(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("BATKUBE_BIN")
	if dir == "" {
		dir = filepath.Join(repoRoot(), "bin")
	}
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s not found (%v): run `make upstream` (or `make test`, which builds it)", path, err)
	}
	return path
}

// build is one `go build` of commands of this checkout, done once.
type build struct {
	once sync.Once
	dir  string
	err  error
}

// builds holds the commands built for the tests, by race detector and
// package list; TestMain removes their directories.
var builds struct {
	sync.Mutex
	m map[string]*build
}

// TestMain removes the binaries the tests built (some 350 MB a run, which
// piled up in the temporary directory run after run).
func TestMain(m *testing.M) {
	code := m.Run()
	builds.Lock()
	for _, b := range builds.m {
		if b.dir != "" {
			os.RemoveAll(b.dir)
		}
	}
	builds.Unlock()
	os.Exit(code)
}

// buildCommands builds the given packages of this checkout (./cmd/...,
// with the race detector if race) into a directory, once per test process
// for each race and package list, and returns the directory. Building here,
// rather than using bin/, means a test never runs a stale binary.
func buildCommands(t testing.TB, race bool, pkgs ...string) string {
	t.Helper()
	key := fmt.Sprint(race, pkgs)
	builds.Lock()
	if builds.m == nil {
		builds.m = map[string]*build{}
	}
	b := builds.m[key]
	if b == nil {
		b = &build{}
		builds.m[key] = b
	}
	builds.Unlock()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "batkube-e2e-bin-")
		if err != nil {
			b.err = err
			return
		}
		builds.Lock()
		b.dir = dir
		builds.Unlock()
		args := []string{"build", "-o", dir + "/"}
		if race {
			args = append(args, "-race")
		}
		args = append(args, pkgs...)
		cmd := exec.Command("go", args...)
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if b.err != nil {
		t.Fatalf("building %s: %v", strings.Join(pkgs, " "), b.err)
	}
	return b.dir
}

// batkubeBinaries builds kubernetes-server, batkube-engine and the example
// schedulers from this checkout (with the race detector when the tests have
// it) into a directory that also links the upstream kube-scheduler (and
// kube-controller-manager and Kueue when bin/ has them), and returns it.
func batkubeBinaries(t testing.TB) string { return buildBinaries(t, raceEnabled) }

// batkubeBinariesWithoutRace is batkubeBinaries without the race detector,
// for the tests whose point is volume (its instrumentation makes the
// server 5 to 10 times slower).
func batkubeBinariesWithoutRace(t testing.TB) string { return buildBinaries(t, false) }

// upstreamLinks links, once per directory, the upstream binaries into the
// directories of buildBinaries.
var upstreamLinks sync.Map // dir → *build (err only)

func buildBinaries(t testing.TB, race bool) string {
	t.Helper()
	scheduler := binary(t, "kube-scheduler")
	dir := buildCommands(t, race, "./cmd/kubernetes-server", "./cmd/batkube-engine", "./examples/timed-scheduler", "./examples/schedulers/...")
	v, _ := upstreamLinks.LoadOrStore(dir, &build{})
	l := v.(*build)
	l.once.Do(func() {
		if l.err = os.Symlink(scheduler, filepath.Join(dir, "kube-scheduler")); l.err != nil {
			return
		}
		// kube-controller-manager, Kueue and Karpenter, for the tests that
		// start them.
		for _, name := range []string{"kube-controller-manager", "kueue", "kueue-manifests.yaml", "karpenter", "karpenter-manifests.yaml"} {
			path := filepath.Join(filepath.Dir(scheduler), name)
			if _, err := os.Stat(path); err == nil {
				if l.err = os.Symlink(path, filepath.Join(dir, name)); l.err != nil {
					return
				}
			}
		}
	})
	if l.err != nil {
		t.Fatalf("building the Batkube binaries: %v", l.err)
	}
	return dir
}
