package engine

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// Batsim's server gets one message at a time: two jobs ending together on
// hosts 1 ms from the master host are heard of at +1 ms and +2 ms, in one
// message sent at +2 ms, and a job submitted meanwhile waits its turn; the
// jobs' rows keep their own end. With NoNetwork, all is heard of at once.
func TestJobEndsReachTheServerOneAtATime(t *testing.T) {
	p := mustPlatform(t, `<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/><host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/>
  <link id="l0" bandwidth="1e15Bps" latency="1ms"/><link id="l1" bandwidth="1e15Bps" latency="1ms"/>
  <route src="h0" dst="master_host"><link_ctn id="l0"/></route>
  <route src="h1" dst="master_host"><link_ctn id="l1"/></route>
</zone></platform>`)
	const workload = `{"nb_res": 2, "jobs": [
	  {"id": "a", "subtime": 0, "res": 1, "profile": "d10"},
	  {"id": "b", "subtime": 0, "res": 1, "profile": "d10"},
	  {"id": "c", "subtime": 10.0005, "res": 1, "profile": "d10"}],
	  "profiles": {"d10": {"type": "delay", "delay": 10}}}`
	run := func(opts Options) ([]Message, string) {
		var jobs bytes.Buffer
		opts.JobsOutput = &jobs
		e := mustNew(t, p, []*Workload{mustWorkload(t, "w", workload)}, opts)
		msgs, err := drive(e, placer(map[string][]int{"w!a": {0}, "w!b": {1}, "w!c": {0}}, nil))
		if err != nil {
			t.Fatal(err)
		}
		return msgs, jobs.String()
	}
	// check finds the message telling of job a's end and compares its
	// date and its events' with want ("TYPE job@date", dates to the ns).
	check := func(msgs []Message, want ...string) {
		t.Helper()
		for _, m := range msgs {
			if c, ok := m.Events[0].(JobCompleted); !ok || c.JobID != "w!a" {
				continue
			}
			var got []string
			for _, ev := range m.Events {
				id := ""
				switch ev := ev.(type) {
				case JobCompleted:
					id = ev.JobID
				case JobSubmitted:
					id = ev.Job.ID
				}
				got = append(got, fmt.Sprintf("%s %s@%.9f", ev.Type(), id, ev.Time()))
			}
			got = append(got, fmt.Sprintf("now %.9f", m.Now))
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Errorf("the message telling of a's end:\n%s\nwant\n%s\n(all: %s)", strings.Join(got, ", "), strings.Join(want, ", "), trace(msgs))
			}
			return
		}
		t.Errorf("no message starts with a's end:\n%s", trace(msgs))
	}
	msgs, rows := run(Options{})
	// c's submission and the NOTIFY after it each cross the master's
	// loopback (1e-10 s, and the NOTIFY then comes alone)
	check(msgs, "JOB_COMPLETED w!a@10.001000000", "JOB_COMPLETED w!b@10.002000000", "JOB_SUBMITTED w!c@10.002000001", "now 10.002000001")
	for _, row := range []string{"\na,w,d10,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,10.000000,10.000000,", "\nc,w,d10,10.000500,1,-1.000000,1,COMPLETED_SUCCESSFULLY,10.002000,"} {
		if !strings.Contains(rows, row) {
			t.Errorf("_jobs.csv:\n%s\nwants a row starting %s", rows, row[1:])
		}
	}
	msgs, _ = run(Options{NoNetwork: true})
	check(msgs, "JOB_COMPLETED w!a@10.000000000", "JOB_COMPLETED w!b@10.000000000", "now 10.000000000")
}
