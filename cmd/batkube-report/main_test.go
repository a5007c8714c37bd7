package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tiny run of pkg/report's tests, with its platform and workload.
const (
	tinyRun      = "../../pkg/report/testdata/tiny"
	tinyPlatform = "../../pkg/report/testdata/platform.xml"
	tinyWorkload = "../../pkg/report/testdata/workload.json"
)

// TestLabelledDirs: LABEL=RUN_DIR gives the run's label; a folder whose
// name holds '=' is a folder; an empty label is refused.
func TestLabelledDirs(t *testing.T) {
	odd := filepath.Join(t.TempDir(), "a=b")
	if err := os.Mkdir(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	dirs, labels, err := labelledDirs([]string{"out/x", "fifo first-fit=out/y=z", odd})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(dirs, "|") + " / " + strings.Join(labels, "|"); got != "out/x|out/y=z|"+odd+" / |fifo first-fit|" {
		t.Errorf("dirs / labels: %s", got)
	}
	if _, _, err := labelledDirs([]string{" =out/x"}); err == nil {
		t.Error("an empty label: no error")
	}
}

// TestReportWithALabel: the report calls a run LABEL=RUN_DIR names
// by that label, in its table and its charts' titles.
func TestReportWithALabel(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.html")
	var stdout, stderr bytes.Buffer
	args := []string{"-o", out, "--png-dpi", "0", "-p", tinyPlatform, "-w", tinyWorkload, "the tiny one=" + tinyRun, tinyRun}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout.String(), stderr.String())
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-run="tiny" data-label="the tiny one"`, `data-run="tiny-2" data-label="tiny-2"`, ">the tiny one: pods on nodes</text>"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the report lacks %s", want)
		}
	}
	if code := run([]string{"=" + tinyRun}, &stdout, &stderr); code != 2 {
		t.Errorf("an empty label: exit %d, want 2 (usage)", code)
	}
}
