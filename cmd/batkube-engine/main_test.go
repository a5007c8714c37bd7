package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/enginerun/enginetest"
)

const examples = "../../examples/"

func TestUsage(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "help", args: []string{"--help"}, wantCode: 0, wantStdout: "--socket-endpoint"},
		{name: "short help", args: []string{"-h"}, wantCode: 0, wantStdout: "--forward-profiles-on-submission"},
		{name: "no platform", args: nil, wantCode: 2, wantStderr: "platform"},
		{name: "unknown flag", args: []string{"-p", "x.xml", "--nope"}, wantCode: 2, wantStderr: "nope"},
		{name: "argument", args: []string{"-p", "x.xml", "extra"}, wantCode: 2, wantStderr: `"extra"`},
		{name: "bad naming", args: []string{"-p", "x.xml", "--workload-names", "w"}, wantCode: 2, wantStderr: "workload-names"},
		{name: "bad timeout", args: []string{"-p", "x.xml", "--timeout", "soon"}, wantCode: 2, wantStderr: "soon"},
		{name: "missing platform file", args: []string{"-q", "-p", "nope.xml", "-e", "PREFIX"}, wantCode: 1, wantStderr: "nope.xml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := tt.args
			for i, a := range args {
				if a == "PREFIX" {
					args[i] = filepath.Join(t.TempDir(), "out/")
				}
			}
			code := run(context.Background(), args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Fatalf("exit code: got %d, want %d (stderr %q)", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout: got %q, want it to contain %q", stdout.String(), tt.wantStdout)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr: got %q, want it to contain %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

func TestRunAgainstFirstFit(t *testing.T) {
	conn, err := batsim.Listen("tcp://127.0.0.1:*")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	served := make(chan error, 1)
	go func() { served <- enginetest.Serve(context.Background(), conn, &enginetest.FirstFit{}) }()

	prefix := filepath.Join(t.TempDir(), "results") + "/"
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{
		"-p", examples + "platforms/platform_4.xml",
		"-w", examples + "workloads/delay_10.json", "-w", examples + "workloads/delay_30.json",
		"-e", prefix, "-s", conn.Endpoint(), "--timeout", "1m", "--sched-cfg", "{}",
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit code: got %d, want 0 (stderr %q)", code, stderr.String())
	}
	if err := <-served; err != nil {
		t.Fatalf("decision process: %v", err)
	}
	if want := "jobs: 40 (40 succeeded, 0 failed"; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout: got %q, want it to contain %q", stdout.String(), want)
	}
	if want := "waiting for the decision process at " + conn.Endpoint(); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr: got %q, want it to contain %q", stderr.String(), want)
	}
	for _, f := range []string{"_jobs.csv", "_schedule.csv"} {
		if _, err := os.Stat(prefix + f); err != nil {
			t.Errorf("output: %v", err)
		}
	}
}
