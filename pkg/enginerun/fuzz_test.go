package enginerun

import (
	"testing"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/engine"
)

// FuzzReply feeds arbitrary replies of a decision process to a simulation
// that has just begun: whatever the bytes, the run must end with an error or
// go on, never panic.
func FuzzReply(f *testing.F) {
	platform, err := engine.ReadPlatformFile("../../examples/platforms/platform_4.xml")
	if err != nil {
		f.Fatal(err)
	}
	w, err := engine.ReadWorkloadFile("../../examples/workloads/parallel.json", "w0")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"now": 0, "events": []}`,
		`{"now": 1, "events": [{"timestamp": 0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!p1", "alloc": "0-1"}}]}`,
		`{"now": 1, "events": [{"timestamp": 0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!p2", "alloc": "0-3", "mapping": {"0": 3, "1": 2, "2": 1, "3": 0}}}]}`,
		`{"now": 1, "events": [{"timestamp": 1, "type": "KILL_JOB", "data": {"job_ids": ["w0!p1"]}}]}`,
		`{"now": 2, "events": [{"timestamp": 2, "type": "CALL_ME_LATER", "data": {"timestamp": 3}}]}`,
		`{"now": 0, "events": [{"timestamp": 0, "type": "REGISTER_PROFILE", "data": {"workload_name": "d", "profile_name": "p", "profile": {"type": "composed", "seq": ["p"]}}}]}`,
		`{"now": 0, "events": [{"timestamp": 0, "type": "REGISTER_JOB", "data": {"job_id": "d!1", "job": {"id": "d!1", "subtime": 0, "res": 1, "profile": "p"}}}]}`,
		`{"now": 0, "events": [{"timestamp": 0, "type": "SET_JOB_METADATA", "data": {"job_id": "w0!p1", "metadata": "x"}}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reply, err := batsim.Decode(data, batsim.FromScheduler)
		if err != nil {
			return
		}
		e, err := engine.New(platform, []*engine.Workload{w}, engine.Options{DynamicJobs: true})
		if err != nil {
			t.Fatal(err)
		}
		conv := newConverter(true, "", false)
		// SIMULATION_BEGINS, answered without decisions, then the first
		// submissions, answered by the fuzzed reply.
		for range 2 {
			msg, err := e.Next()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conv.request(msg); err != nil {
				t.Fatalf("request: %v", err)
			}
			if msg.Events[0].Type() == "SIMULATION_BEGINS" {
				if err := e.Apply(0, nil); err != nil {
					t.Fatal(err)
				}
				continue
			}
			ds, err := decisions(reply, len(platform.Resources)+len(platform.Storage))
			if err != nil {
				return
			}
			if err := e.Apply(max(reply.Now, msg.Now), ds); err != nil {
				return
			}
		}
		if msg, err := e.Next(); err == nil {
			if _, err := conv.request(msg); err != nil {
				t.Fatalf("request after the fuzzed reply: %v", err)
			}
		}
	})
}
