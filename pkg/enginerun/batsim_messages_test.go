package enginerun_test

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/enginerun"
)

// killer is the decision process of the recording under
// testdata/batsim-4.2.1/kill_*: it starts each job as soon as enough of
// the lowest-numbered hosts are free, asks to be called 10 s after the
// first submission, and then kills every running job.
type killer struct {
	free    []bool
	running map[batsim.JobID][]int
	queue   []batsim.JobSubmitted
	called  bool
}

func (k *killer) Decide(m batsim.Message) (batsim.Message, error) {
	var out []batsim.Event
	for _, ev := range m.Events {
		switch d := ev.Data.(type) {
		case batsim.SimulationBegins:
			k.free = make([]bool, d.NbComputeResources)
			for i := range k.free {
				k.free[i] = true
			}
			k.running = map[batsim.JobID][]int{}
		case batsim.JobSubmitted:
			k.queue = append(k.queue, d)
			if !k.called {
				k.called = true
				out = append(out, batsim.Event{Timestamp: m.Now, Data: batsim.CallMeLater{At: m.Now + 10}})
			}
		case batsim.JobCompleted:
			for _, h := range k.running[d.JobID] {
				k.free[h] = true
			}
			delete(k.running, d.JobID)
		case batsim.RequestedCall:
			var ids []batsim.JobID
			for id := range k.running {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			out = append(out, batsim.Event{Timestamp: m.Now, Data: batsim.KillJob{JobIDs: ids}})
		}
	}
	var rest []batsim.JobSubmitted
	for _, s := range k.queue {
		var hosts []int
		var ivs []batsim.Interval
		for h := 0; h < len(k.free) && len(hosts) < s.Job.Res; h++ {
			if k.free[h] {
				hosts = append(hosts, h)
				ivs = append(ivs, batsim.Interval{First: h, Last: h})
			}
		}
		if len(hosts) < s.Job.Res {
			rest = append(rest, s)
			continue
		}
		for _, h := range hosts {
			k.free[h] = false
		}
		set, err := batsim.NewIntervalSet(ivs...)
		if err != nil {
			return batsim.Message{}, err
		}
		k.running[s.JobID] = hosts
		out = append(out, batsim.Event{Timestamp: m.Now, Data: batsim.ExecuteJob{JobID: s.JobID, Alloc: set}})
	}
	k.queue = rest
	return batsim.Message{Now: m.Now, Events: out}, nil
}

// TestMessagesAsRealBatsimSendsThem runs a platform whose master host is
// 600 µs from itself (every message between Batsim's actors there takes
// that long, and each job's end 1.6 ms to reach it) with jobs that delay,
// compute and communicate, a call and a kill: every message the decision
// process receives after SIMULATION_BEGINS, dates and progress included,
// and _jobs.csv, equal real Batsim 4.2.1's (recorded with the same
// decision process: testdata/batsim-4.2.1/kill_*).
func TestMessagesAsRealBatsimSendsThem(t *testing.T) {
	rec := &recorder{next: &killer{}}
	dp := startDecisionProcess(t, rec)
	prefix := prefixIn(t)
	mustRun(t, dp, enginerun.Config{
		Platform:       "../engine/testdata/platforms/master_cluster.xml",
		Workloads:      []string{"testdata/kill.json"},
		ComputeSharing: true,
		Endpoint:       dp.endpoint,
		ExportPrefix:   prefix,
		Timeout:        time.Minute,
	})
	recorded, err := os.ReadFile("testdata/batsim-4.2.1/kill_messages.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(recorded), "\n"), "\n")
	msgs := rec.messages()[1:] // after SIMULATION_BEGINS
	for i := range max(len(msgs), len(want)) {
		var got, exp string
		if i < len(msgs) {
			b, err := batsim.Encode(msgs[i], batsim.FromBatsim)
			if err != nil {
				t.Fatal(err)
			}
			got = string(b)
		}
		if i < len(want) {
			exp = want[i]
		}
		if got != exp {
			t.Errorf("message %d:\n engine %s\n Batsim %s", i+2, got, exp)
		}
	}
	jobs, err := os.ReadFile(prefix + "_jobs.csv")
	if err != nil {
		t.Fatal(err)
	}
	wantJobs, err := os.ReadFile("testdata/batsim-4.2.1/kill_jobs.csv")
	if err != nil {
		t.Fatal(err)
	}
	if string(jobs) != string(wantJobs) {
		t.Errorf("_jobs.csv:\n%s\nBatsim's:\n%s", jobs, wantJobs)
	}
	if !strings.Contains(string(jobs), "COMPLETED_KILLED") {
		t.Error("no job was killed: the test lost its point")
	}
}
