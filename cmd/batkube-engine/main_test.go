package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/cli/clitest"
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
		{name: "help lists the master host", args: []string{"--help"}, wantCode: 0, wantStdout: "--master-host=NAME"},
		{name: "help lists the events", args: []string{"--help"}, wantCode: 0, wantStdout: "--forward-unknown-events"},
		{name: "missing events file", args: []string{"-q", "-p", examples + "platforms/platform_4.xml", "--events", "nope.txt", "-e", "PREFIX"},
			wantCode: 1, wantStderr: "nope.txt"},
		{name: "no master host", args: []string{"-q", "-p", "../../pkg/engine/testdata/platforms/cabinets.xml", "-e", "PREFIX"},
			wantCode: 1, wantStderr: "no master host: Batsim needs a host named master_host (its --master-host, -m)"},
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
			clitest.Want{Code: tt.wantCode, Stdout: tt.wantStdout, Stderr: tt.wantStderr}.Check(t, code, stdout.String(), stderr.String())
		})
	}
}

func TestRunAgainstFirstFit(t *testing.T) {
	endpoint, served := serveFirstFit(t)

	prefix := filepath.Join(t.TempDir(), "results") + "/"
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{
		"-p", examples + "platforms/platform_4.xml",
		"-w", examples + "workloads/delay_10.json", "-w", examples + "workloads/delay_30.json",
		"-e", prefix, "-s", endpoint, "--timeout", "1m", "--sched-cfg", "{}",
	}, &stdout, &stderr)
	ranWith(t, code, &stderr, served)
	if want := "jobs: 40 (40 succeeded, 0 failed"; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout: got %q, want it to contain %q", stdout.String(), want)
	}
	if want := "waiting for the decision process at " + endpoint; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr: got %q, want it to contain %q", stderr.String(), want)
	}
	for _, f := range []string{"_jobs.csv", "_schedule.csv"} {
		if _, err := os.Stat(prefix + f); err != nil {
			t.Errorf("output: %v", err)
		}
	}
	// Batsim 4.2.1 writes _machine_states.csv unless told not to: a row
	// when each job starts and when it ends, the last with every host idle.
	states, err := os.ReadFile(prefix + "_machine_states.csv")
	if err != nil {
		t.Fatalf("output: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(states), "\n"), "\n")
	if len(lines) != 1+2*40 || lines[0] != "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing" ||
		!strings.HasSuffix(lines[len(lines)-1], ",0,0,0,4,0") {
		t.Errorf("_machine_states.csv: got %d lines, first %q, last %q; want 81, the header first, all 4 hosts idle last",
			len(lines), lines[0], lines[len(lines)-1])
	}
}

// TestMasterHostAndEvents runs a platform whose master is named by -m and
// an events file with an event of an unknown type, forwarded
// (--forward-unknown-events): the simulation goes on until the last event.
func TestMasterHostAndEvents(t *testing.T) {
	endpoint, served := serveFirstFit(t)
	dir := t.TempDir()
	events := filepath.Join(dir, "events.txt")
	if err := os.WriteFile(events, []byte(`{"timestamp": 250, "type": "machine_unavailable", "resources": "6"}
{"timestamp": 260, "type": "machine_available", "resources": "6"}
{"timestamp": 300, "type": "audit"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(dir, "out") + "/"
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-q",
		"-p", "../../pkg/engine/testdata/platforms/cabinets.xml", "-m", "ctl0",
		"-w", examples + "workloads/delay_10.json", "--events", events, "--forward-unknown-events",
		"-e", prefix, "-s", endpoint, "--timeout", "1m",
	}, &stdout, &stderr)
	ranWith(t, code, &stderr, served)
	// The jobs end before 250; the last event is at 300, and the run ends
	// six of Batsim's messages on ctl0 later (the events submitter's, the
	// request-reply actor's, as real Batsim sends them: 502 µs each, since
	// ctl0's route to itself crosses its cluster's backbone): 300.003 s.
	if want := "simulated 300.003s"; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout: got %q, want it to contain %q", stdout.String(), want)
	}
}

// TestDisableMachineStateTracing checks that
// --disable-machine-state-tracing, as Batsim's, leaves out
// _machine_states.csv and nothing else.
func TestDisableMachineStateTracing(t *testing.T) {
	endpoint, served := serveFirstFit(t)

	prefix := filepath.Join(t.TempDir(), "results") + "/"
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{
		"-p", examples + "platforms/platform_4.xml", "-w", examples + "workloads/delay_10.json",
		"-e", prefix, "-s", endpoint, "--timeout", "1m", "-q", "--disable-machine-state-tracing",
	}, &stdout, &stderr)
	ranWith(t, code, &stderr, served)
	if _, err := os.Stat(prefix + "_machine_states.csv"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("_machine_states.csv: got %v, want it not to exist", err)
	}
	for _, f := range []string{"_jobs.csv", "_schedule.csv"} {
		if _, err := os.Stat(prefix + f); err != nil {
			t.Errorf("output: %v", err)
		}
	}
	if strings.Contains(stdout.String(), "_machine_states.csv") {
		t.Errorf("stdout names _machine_states.csv: %q", stdout.String())
	}
}

// TestBadDecisionsExitNonZero checks that a reply that breaks the protocol,
// or that real Batsim would abort on, ends the command with exit code 1, an
// error naming the event and its field, and the outputs written so far.
func TestBadDecisionsExitNonZero(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.json")
	if err := os.WriteFile(wl, []byte(`{"nb_res": 1, "profiles": {"d5": {"type": "delay", "delay": 5}},
		"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d5"}, {"id": 2, "subtime": 1, "res": 1, "profile": "d5"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// SIMULATION_BEGINS; w0!1 submitted at 0, started on 0; then w0!2 at 1.
	first := []string{
		`{"now": 0, "events": []}`,
		`{"now": 0, "events": [{"timestamp": 0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0"}}]}`,
	}
	tests := []struct {
		name, reply string
		want        []string
	}{
		{"bad JSON", `{"now": 1, "events": [{]}`, []string{"invalid JSON"}},
		{"unknown event type", `{"now": 1, "events": [{"timestamp": 1, "type": "RUN_JOB", "data": {}}]}`, []string{`event 0: unknown event type "RUN_JOB"`}},
		{"missing field", `{"now": 1, "events": [{"timestamp": 1, "type": "REJECT_JOB", "data": {}}]}`, []string{`event 0 (REJECT_JOB): field "job_id": missing`}},
		{"busy host without --enable-compute-sharing", `{"now": 1, "events": [{"timestamp": 1, "type": "EXECUTE_JOB", "data": {"job_id": "w0!2", "alloc": "0"}}]}`,
			[]string{`event 0 (EXECUTE_JOB): field "alloc"`, `resource 0 (node0) is running job "w0!1" and compute sharing is off (Batsim's --enable-compute-sharing)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			endpoint := enginetest.RawPeer(t, append(append([]string(nil), first...), tt.reply), "")
			prefix := filepath.Join(t.TempDir(), "out") + "/"
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"-q", "-p", examples + "platforms/platform_4.xml", "-w", wl,
				"-e", prefix, "-s", endpoint, "--timeout", "1m"}, &stdout, &stderr)
			if code != 1 {
				t.Fatalf("exit code: got %d, want 1 (stderr %q)", code, stderr.String())
			}
			t.Logf("stderr: %s", stderr.String())
			for _, want := range append([]string{"batkube-engine: "}, tt.want...) {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr: got %q, want it to contain %q", stderr.String(), want)
				}
			}
			for _, f := range []string{"_jobs.csv", "_schedule.csv"} {
				b, err := os.ReadFile(prefix + f)
				if err != nil || !strings.HasPrefix(string(b), map[string]string{"_jobs.csv": "job_id,", "_schedule.csv": "batsim_version,"}[f]) {
					t.Errorf("%s: got %q, %v, want it written with its header", f, b, err)
				}
			}
		})
	}
}

// serveFirstFit serves the first-fit decision process on a new socket and
// returns its endpoint, and the channel of its outcome.
func serveFirstFit(t *testing.T) (endpoint string, served <-chan error) {
	t.Helper()
	conn, err := batsim.Listen("tcp://127.0.0.1:*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	done := make(chan error, 1)
	go func() { done <- enginetest.Serve(context.Background(), conn, &enginetest.FirstFit{}) }()
	return conn.Endpoint(), done
}

// ranWith checks that the command exited 0 and its decision process ended
// without an error.
func ranWith(t *testing.T, code int, stderr *bytes.Buffer, served <-chan error) {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit code: got %d, want 0 (stderr %q)", code, stderr.String())
	}
	if err := <-served; err != nil {
		t.Fatalf("decision process: %v", err)
	}
}
