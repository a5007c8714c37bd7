package e2e

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/outputs"
)

// TestPodsCSVAgreesWithJobsAndClients: on a contended run with
// kube-scheduler 1.37, _pods.csv has one row per pod whose start and finish
// are _jobs.csv's, whose node and start time are what a client-go watch saw,
// and whose instants are in order (created ≤ first attempt ≤ bound ≤
// started ≤ finished).
func TestPodsCSVAgreesWithJobsAndClients(t *testing.T) {
	path := filepath.Join(t.TempDir(), "contended.json")
	writeContendedWorkload(t, path, 60, 0.8, 3)
	s := newSimulation(t, platform4, path)
	s.mustRun(5 * time.Minute)
	jobs := s.jobs()
	rows, err := outputs.ReadCSV(filepath.Join(s.cfg.OutDir, "_pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(jobs) {
		t.Fatalf("_pods.csv has %d rows, _jobs.csv %d jobs (single-pod jobs): want one row per pod", len(rows), len(jobs))
	}
	waited, reported := 0, 0
	for _, row := range rows {
		j, ok := jobs[row["job_id"]]
		if !ok {
			t.Errorf("_pods.csv names job %q, not in _jobs.csv", row["job_id"])
			continue
		}
		at := func(col string) float64 {
			v, err := strconv.ParseFloat(row[col], 64)
			if err != nil {
				t.Fatalf("pod %s: %s = %q: %v", row["pod"], col, row[col], err)
			}
			return v
		}
		created, first, bound, started, finished := at("created"), at("first_attempt"), at("bound"), at("started"), at("finished")
		if created != j.submit || started != j.start || finished != j.finish {
			t.Errorf("pod %s: created/started/finished %g/%g/%g, _jobs.csv says %g/%g/%g", row["pod"], created, started, finished, j.submit, j.start, j.finish)
		}
		if !(created <= first && first <= bound && bound <= started && started <= finished) {
			t.Errorf("pod %s: instants out of order: created %g, first attempt %g, bound %g, started %g, finished %g", row["pod"], created, first, bound, started, finished)
		}
		if row["phase"] != "Succeeded" || row["preempted"] != "false" {
			t.Errorf("pod %s: phase %q preempted %q, want Succeeded, false", row["pod"], row["phase"], row["preempted"])
		}
		if started > created {
			waited++
			if row["failed_scheduling"] != "0" {
				reported++
			}
		}
		seen := s.obs.pods[row["pod"]]
		if seen == nil {
			t.Errorf("pod %s: never seen by the client-go watch", row["pod"])
			continue
		}
		if seen.node != row["node"] || !seen.startTime.Equal(wireTime(started)) {
			t.Errorf("pod %s: node %q start %v in _pods.csv, client-go saw node %q start %v", row["pod"], row["node"], wireTime(started), seen.node, seen.startTime)
		}
	}
	// kube-scheduler reports every pod it could not place with a
	// FailedScheduling event, but sends events asynchronously: one may
	// reach the server after its pod's row was written.
	if waited == 0 || reported < waited/2 {
		t.Errorf("%d pods waited, %d with FailedScheduling events: want some waiting, most of them reported", waited, reported)
	}
}
