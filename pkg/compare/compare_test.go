package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadComputesTheFigures: a hand-made run of three jobs on
// platform_4.xml (4 nodes × 8 cores): makespan and mean waiting come from
// _schedule.csv, p95 waiting is the nearest rank of _jobs.csv's, and the
// utilisation is the requested core-seconds over the platform's.
func TestReadComputesTheFigures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	workload := write("w.json", `{"nb_res": 4, "jobs": [
		{"id": "a", "subtime": 0, "res": 1, "profile": "c2"},
		{"id": "b", "subtime": 0, "res": 2, "profile": "c2"},
		{"id": "c", "subtime": 0, "res": 1, "profile": "c4"}],
	 "profiles": {"c2": {"type": "delay", "delay": 10, "cpu": 2}, "c4": {"type": "delay", "delay": 10, "cpu": 4}}}`)
	write("_jobs.csv", "job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n"+
		"a,w0,c2,0,1,-1,1,COMPLETED_SUCCESSFULLY,0,10,10,0,10,1,0,0,\n"+
		"b,w0,c2,0,2,-1,1,COMPLETED_SUCCESSFULLY,5,10,15,5,15,1.5,1-2,0,\n"+
		"c,w0,c4,0,1,-1,1,COMPLETED_SUCCESSFULLY,10,10,20,10,20,2,3,0,\n")
	write("_schedule.csv", "makespan,mean_waiting_time\n20,5\n")
	f, err := Read("test", dir, Setting{Platform: filepath.Join("..", "..", "examples", "platforms", "platform_4.xml"), Workloads: []string{workload}})
	if err != nil {
		t.Fatal(err)
	}
	// a: 2 cores × 10 s; b: 2 pods × 2 cores × 10 s; c: 4 × 10: 100
	// core-seconds over 32 cores × 20 s.
	want := Figures{Name: "test", Jobs: 3, Succeeded: 3, Makespan: 20, MeanWait: 5, P95Wait: 10, MeanSlowdown: 1.5, Utilisation: 100.0 / 640}
	if f != want {
		t.Fatalf("got %+v\nwant %+v", f, want)
	}
	var b strings.Builder
	if err := Table(&b, []Figures{f}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| test | 3 (3) | 20.0 | 5.0 | 10.0 | 1.50 | 15.6 % | — |") {
		t.Errorf("table:\n%s", b.String())
	}
}
