package enginerun_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/enginerun"
	"github.com/batkube/batkube/pkg/enginerun/enginetest"
)

// TestRunEventsAndMasterHost runs the engine's cabinets platform (its
// master, ctl0, named by MasterHost, Batsim's -m) with events files
// (Batsim's --events, twice) and ForwardUnknownEvents: the decision process
// gets NOTIFYs event_machine_unavailable and event_machine_available with
// their resources, a generic event with its members, then
// no_more_external_event_to_occur; SIMULATION_BEGINS says
// forward-unknown-events; the outputs count the unavailable time. Dates
// come with six decimals, as Batsim writes them.
func TestRunEventsAndMasterHost(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	wl := write("w.json", `{"nb_res": 7, "profiles": {"d": {"type": "delay", "delay": 10}},
		"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}, {"id": 2, "subtime": 0.1234567891, "res": 1, "profile": "d"}]}`)
	ev0 := write("ev0.txt", `{"timestamp": 1, "type": "machine_unavailable", "resources": "0 6"}
{"timestamp": 20, "type": "machine_available", "resources": "0 6"}
`)
	ev1 := write("ev1.txt", `{"timestamp": 5.5, "type": "power_cut", "room": "B", "racks": [1, 2]}`)
	rec := &recorder{next: &enginetest.FirstFit{}}
	dp := startDecisionProcess(t, rec)
	prefix := prefixIn(t)
	cfg := enginerun.Config{
		Platform:             "../engine/testdata/platforms/cabinets.xml",
		MasterHost:           "ctl0",
		Workloads:            []string{wl},
		Events:               []string{ev0, ev1},
		ForwardUnknownEvents: true,
		// ctl0 is 502 µs from itself (its route crosses its cluster's
		// backbone): with Batsim's messages taking that long, every date
		// below would be later by multiples of it. This test is about
		// the dates' six decimals and the events.
		NoNetwork:    true,
		Endpoint:     dp.endpoint,
		ExportPrefix: prefix,
		Timeout:      time.Minute,
	}
	sum := mustRun(t, dp, cfg)
	if sum.Succeeded != 2 || sum.SimulatedTime != 20 {
		t.Errorf("summary: %+v, want 2 jobs succeeded and 20 s simulated (the last event)", sum)
	}
	var notes []string
	for i, m := range rec.messages() {
		for _, ev := range m.Events {
			switch d := ev.Data.(type) {
			case batsim.SimulationBegins:
				if !d.Config.ForwardUnknownEvents || d.NbComputeResources != 7 {
					t.Errorf("SIMULATION_BEGINS: forward-unknown-events %v, %d compute resources; want true and 7 (ctl0 is the master)",
						d.Config.ForwardUnknownEvents, d.NbComputeResources)
				}
			case batsim.Notify:
				note := strconv6(ev.Timestamp) + " " + string(d.Type)
				if !d.Resources.IsEmpty() {
					note += " " + d.Resources.String()
				}
				if len(d.Extra) > 0 {
					b, _ := json.Marshal(d.Extra)
					note += " " + string(b)
				}
				notes = append(notes, note)
			case batsim.JobSubmitted:
				if d.JobID == "w0!2" && (m.Now != 0.123457 || ev.Timestamp != 0.123457) {
					t.Errorf("message %d: w0!2 submitted at %v (now %v), want the date with six decimals, 0.123457", i, ev.Timestamp, m.Now)
				}
			}
		}
	}
	want := []string{"0.123457 no_more_static_job_to_submit", "1 event_machine_unavailable 0 6", `5.5 power_cut {"racks":[1,2],"room":"B","timestamp":5.5}`,
		"20 event_machine_available 0 6", "20 no_more_external_event_to_occur"}
	if strings.Join(notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notifications:\n%s\nwant:\n%s", strings.Join(notes, "\n"), strings.Join(want, "\n"))
	}
	_, rows := readCSV(t, prefix+"_schedule.csv")
	// 0 (d1) and 6 (rack-b9.g5k) unavailable from 1 to 20.
	if got := rows[0]["time_unavailable"]; got != "38.000000" {
		t.Errorf("time_unavailable %s, want 38.000000", got)
	}
	_, jobs := readCSV(t, prefix+"_jobs.csv")
	for _, j := range jobs {
		// w0!2, submitted at 0.1234567891, is started at 0.123457, the
		// date its JOB_SUBMITTED reads.
		if j["job_id"] == "2" && (j["starting_time"] != "0.123457" || j["waiting_time"] != "0.000000") {
			t.Errorf("job 2: started at %s, waited %s; want 0.123457 and 0.000000", j["starting_time"], j["waiting_time"])
		}
	}
}

func strconv6(x float64) string {
	b, _ := json.Marshal(x)
	return string(b)
}
