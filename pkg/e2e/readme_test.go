package e2e

import (
	"bufio"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadmeCommands runs the commands of the README's first-run block as
// they are written, in a folder holding files of the names they use (the
// repository's platforms and workloads, a small SWF trace), with bin/ the
// binaries under test: a command of the front door that stops working
// fails here.
func TestReadmeCommands(t *testing.T) {
	readme := readFile(t, filepath.Join(repoRoot(), "README.md"))
	var commands []string
	inShell := false
	sc := bufio.NewScanner(strings.NewReader(string(readme)))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```sh"):
			inShell = true
		case strings.HasPrefix(line, "```"):
			inShell = false
		case inShell && strings.HasPrefix(line, "bin/"):
			cmd, _, _ := strings.Cut(line, "#")
			commands = append(commands, strings.TrimSpace(cmd))
		}
	}
	if len(commands) < 3 {
		t.Fatalf("found %d bin/ commands in the README, want its first-run block", len(commands))
	}
	dir := t.TempDir()
	// bin/: the binaries of the simulations, and the runners the README
	// calls, built from this tree.
	bin := filepath.Join(dir, "bin")
	built := batkubeBinariesWithoutRace(t)
	entries, err := os.ReadDir(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(built, e.Name()), filepath.Join(bin, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-o", bin+"/", "./cmd/batkube-run", "./cmd/batkube-swf")
	build.Dir = repoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the runners: %v\n%s", err, out)
	}
	for name, src := range map[string]string{
		"my_platform.xml":  "examples/platforms/platform_4.xml",
		"my_workload.json": "examples/workloads/delay_10.json",
		"platform_128.xml": "examples/platforms/platform_16.xml",
	} {
		data := readFile(t, filepath.Join(repoRoot(), src))
		writeFile(t, filepath.Join(dir, name), data)
	}
	writeSWF(t, filepath.Join(dir, "SDSC-SP2-1998-4.2-cln.swf.gz"))
	for _, c := range commands {
		t.Run(c, func(t *testing.T) {
			args := strings.Fields(c)
			for _, a := range args {
				if _, err := os.Stat(filepath.Join(dir, a)); err != nil && (strings.HasSuffix(a, ".xml") || strings.Contains(a, ".json") || strings.Contains(a, ".swf")) &&
					!strings.HasPrefix(a, "-") && a != "trace.json" {
					t.Fatalf("the command names %s, which this test does not provide", a)
				}
			}
			ctx := testContext(t, 5*time.Minute)
			cmd := exec.CommandContext(ctx, filepath.Join(dir, args[0]), args[1:]...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", c, err, out)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "trace.json")); err != nil {
		t.Errorf("batkube-swf wrote no trace.json: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "run", "_jobs.csv")); err != nil {
		t.Errorf("batkube-run wrote no out/run/_jobs.csv: %v", err)
	}
}

// writeSWF writes a small gzipped trace in the Standard Workload Format.
func writeSWF(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := gzip.NewWriter(f)
	_, err = z.Write([]byte(`; Version: 2.2
; MaxProcs: 16
1 0 5 100 4 -1 -1 4 300 -1 1 1 1 -1 1 -1 -1 -1
2 10 0 50 8 -1 -1 8 60 -1 1 1 1 -1 1 -1 -1 -1
3 20 0 30 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1
`))
	if err == nil {
		err = z.Close()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}
