package enginerun_test

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/enginerun"
	"github.com/batkube/batkube/pkg/enginerun/enginetest"
)

// examples is the repository's examples directory.
const examples = "../../examples/"

func platform(name string) string { return examples + "platforms/" + name }
func workload(name string) string { return examples + "workloads/" + name }

// delay10Config is a run of delay_10.json on platform_4.xml, answered by
// the decision process at endpoint, its outputs under prefix, within a
// minute.
func delay10Config(endpoint, prefix string) enginerun.Config {
	return enginerun.Config{
		Platform:     platform("platform_4.xml"),
		Workloads:    []string{workload("delay_10.json")},
		Endpoint:     endpoint,
		ExportPrefix: prefix,
		Timeout:      time.Minute,
	}
}

// decisionProcess is a decision process served in the background on a free
// TCP port of the loopback.
type decisionProcess struct {
	endpoint string
	done     chan error // Serve's result, once
}

// startDecisionProcess serves d. If Serve fails, the socket is closed at
// once (the decision process dies); otherwise when the test ends.
func startDecisionProcess(t testing.TB, d enginetest.Decider) *decisionProcess {
	t.Helper()
	conn, err := batsim.Listen("tcp://127.0.0.1:*")
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	dp := &decisionProcess{endpoint: conn.Endpoint(), done: make(chan error, 1)}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		err := enginetest.Serve(ctx, conn, d)
		if err != nil {
			conn.Close()
		}
		dp.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
		conn.Close()
	})
	return dp
}

// mustRun runs cfg, whose Endpoint is dp's, and fails the test if the run or
// the decision process fails.
func mustRun(t testing.TB, dp *decisionProcess, cfg enginerun.Config) enginerun.Summary {
	t.Helper()
	sum, err := enginerun.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := <-dp.done; err != nil {
		t.Fatalf("decision process: %v", err)
	}
	return sum
}

// recorder is a Decider that keeps the messages it answers.
type recorder struct {
	next enginetest.Decider
	mu   sync.Mutex
	msgs []batsim.Message
}

func (r *recorder) Decide(m batsim.Message) (batsim.Message, error) {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
	return r.next.Decide(m)
}

func (r *recorder) messages() []batsim.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]batsim.Message(nil), r.msgs...)
}

// readCSV reads a CSV file as records keyed by the header's columns.
func readCSV(t testing.TB, path string) (header []string, rows []map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(records) == 0 {
		t.Fatalf("%s is empty", path)
	}
	header = records[0]
	for _, rec := range records[1:] {
		row := make(map[string]string, len(header))
		for i, col := range header {
			row[col] = rec[i]
		}
		rows = append(rows, row)
	}
	return header, rows
}

func number(t testing.TB, row map[string]string, col string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(row[col], 64)
	if err != nil {
		t.Fatalf("column %s of job %s: %v", col, row["job_id"], err)
	}
	return v
}

// batsimPath is the path Batsim 4.2.1 gives a relative workload path in
// SIMULATION_BEGINS: the working directory, "/" and the path, not cleaned.
func batsimPath(t testing.TB, path string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd + "/" + path
}

func prefixIn(t testing.TB) string {
	return filepath.Join(t.TempDir(), "sub", "dir", "run")
}
