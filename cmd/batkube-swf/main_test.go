package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/cli/clitest"
)

const trace = `; Version: 2.2
; Computer: a small test machine
; MaxNodes: 4
; MaxProcs: 16
1 0   0 100 8  -1 -1 8  3600 1048576 1 1 1 1 1 1 -1 -1
2 10  0 50  1  -1 -1 -1 -1   -1      0 1 1 1 1 1 -1 -1
3 20 -1 -1  -1 -1 -1 4  60   -1      5 1 1 1 1 1 -1 -1
4 30  0 20  2  -1 -1 2  100  -1      1 1 1 1 1 1 -1 -1
5 40  0 30  1  -1 -1 1  10   -1      1 1 1 1 1 1 -1 -1
6 50  0 5   1  -1 -1 1  60   -1      1 1 1 1 1 1 -1 -1
`

func writeTrace(t *testing.T, name, content string, compress bool) string {
	t.Helper()
	data := []byte(content)
	if compress {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(data)
		zw.Close()
		data = buf.Bytes()
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type workload struct {
	NbRes       int    `json:"nb_res"`
	Description string `json:"description"`
	Jobs        []struct {
		ID       int      `json:"id"`
		Subtime  float64  `json:"subtime"`
		Res      int      `json:"res"`
		Walltime *float64 `json:"walltime"`
		Profile  string   `json:"profile"`
	} `json:"jobs"`
	Profiles map[string]map[string]any `json:"profiles"`
}

func TestConvertToStdout(t *testing.T) {
	path := writeTrace(t, "small.swf.gz", trace, true)
	var stdout, stderr bytes.Buffer
	code := run([]string{"--cores-per-host", "4", path}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", code, stderr.String())
	}
	var w workload
	if err := json.Unmarshal(stdout.Bytes(), &w); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout.String())
	}
	if w.NbRes != 4 || len(w.Jobs) != 5 {
		t.Fatalf("nb_res %d, %d jobs; want 4 hosts (16 processors / 4) and 5 jobs:\n%s", w.NbRes, len(w.Jobs), stdout.String())
	}
	first := w.Jobs[0]
	if first.ID != 1 || first.Res != 2 || first.Walltime == nil || *first.Walltime != 3600 || first.Profile != "d100_c4_m4Gi" {
		t.Errorf("job 1: %+v, want 2 hosts, walltime 3600, profile d100_c4_m4Gi", first)
	}
	if p := w.Profiles["d100_c4_m4Gi"]; p["cpu"] != 4.0 || p["memory"] != "4Gi" || p["delay"] != 100.0 || p["type"] != "delay" {
		t.Errorf("profile d100_c4_m4Gi: %v", p)
	}
	if !strings.HasPrefix(w.Description, "converted from small.swf.gz by batkube-swf --cores-per-host 4") {
		t.Errorf("description %q", w.Description)
	}
	for _, want := range []string{"read 6 records, kept 5 jobs, dropped 1\n", "dropped 1 cancelled-before-start: ", "nb_res 4 (header MaxProcs)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestConvertToFile(t *testing.T) {
	path := writeTrace(t, "small.swf", trace, false)
	out := filepath.Join(t.TempDir(), "w.json")
	args := []string{"-o", out, "--walltime=requested", "--from", "5", "--max-jobs", "1", "--drop-failed", "--nb-res", "20", path}
	var stdout, stderr bytes.Buffer
	if code := run(args, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", code, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout not empty with -o: %q", stdout.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var w workload
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	// Job 1 is before --from, job 2 failed, job 3 never ran, job 5's
	// request (10 s) is shorter than its run (30 s), job 6 is past
	// --max-jobs: job 4 is left, at 0, with its requested time.
	if w.NbRes != 20 || len(w.Jobs) != 1 {
		t.Fatalf("nb_res %d and %d jobs, want 20 and 1:\n%s", w.NbRes, len(w.Jobs), data)
	}
	if j := w.Jobs[0]; j.ID != 4 || j.Subtime != 0 || j.Res != 2 || j.Walltime == nil || *j.Walltime != 100 || j.Profile != "d20" {
		t.Errorf("job %+v, want job 4 at 0 on 2 hosts, walltime 100, profile d20", j)
	}
	for _, want := range []string{"dropped 1 before-from", "dropped 1 failed", "dropped 1 cancelled-before-start",
		"dropped 1 walltime-not-above-run-time", "dropped 1 beyond-max-jobs", "workload written to " + out} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestErrors(t *testing.T) {
	good := writeTrace(t, "good.swf", trace, false)
	bad := writeTrace(t, "bad.swf", "; Version: 2.2\n1 0 0 10 x -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n", false)
	empty := writeTrace(t, "empty.swf", "; Version: 2.2\n3 20 -1 -1 -1 -1 -1 4 60 -1 5 1 1 1 1 1 -1 -1\n", false)
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "help", args: []string{"--help"}, wantCode: 0, wantStdout: "--cores-per-host"},
		{name: "no trace", args: nil, wantCode: 2, wantStderr: "no trace given\nRun 'batkube-swf --help' for usage."},
		{name: "two traces", args: []string{good, good}, wantCode: 2, wantStderr: "unexpected argument"},
		{name: "unknown flag", args: []string{"--nope", good}, wantCode: 2, wantStderr: "nope"},
		{name: "bad walltime", args: []string{"--walltime=sometimes", good}, wantCode: 2, wantStderr: "sometimes"},
		{name: "negative cores", args: []string{"--cores-per-host=-1", good}, wantCode: 2, wantStderr: "--cores-per-host -1"},
		{name: "empty window", args: []string{"--from", "10", "--to", "5", good}, wantCode: 2, wantStderr: "the window is empty"},
		{name: "memory without cores", args: []string{"--memory-from-used", good}, wantCode: 2, wantStderr: "needs --cores-per-host"},
		{name: "missing file", args: []string{"/nonexistent/t.swf"}, wantCode: 1, wantStderr: "/nonexistent/t.swf"},
		{name: "malformed", args: []string{bad}, wantCode: 1, wantStderr: bad + ": line 2, field 5 (number of allocated processors): \"x\" is not a number"},
		{name: "nothing left", args: []string{empty}, wantCode: 1, wantStderr: "no job left to convert"},
		{name: "unwritable output", args: []string{"-o", "/nonexistent/dir/w.json", good}, wantCode: 1, wantStderr: "cannot write the workload"},
		{name: "stdin", args: []string{"-q", "-"}, stdin: trace, wantCode: 0, wantStdout: `"nb_res": 16`},
		{name: "stdin malformed", args: []string{"-"}, stdin: "1 2 3\n", wantCode: 1, wantStderr: "standard input: line 1: 3 fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			clitest.Want{Code: tt.wantCode, Stdout: tt.wantStdout, Stderr: tt.wantStderr}.Check(t, code, stdout.String(), stderr.String())
		})
	}
}
