package engine

import (
	"fmt"
	"strings"
	"testing"
)

// hostsPlatform builds a platform in Go: one resource per speed (flops per
// core), with the given core counts (1 if missing).
func hostsPlatform(speeds []float64, cores ...int) *Platform {
	p := &Platform{Master: DefaultMasterHost}
	for i, s := range speeds {
		c := 1
		if i < len(cores) {
			c = cores[i]
		}
		p.Resources = append(p.Resources, Resource{
			ID: i, Name: fmt.Sprintf("node%d", i), Speed: s, Cores: c,
			Properties: map[string]string{"role": ""}, ZoneProperties: map[string]string{},
		})
	}
	return p
}

func mustWorkload(t testing.TB, name, js string) *Workload {
	t.Helper()
	w, err := ParseWorkload(strings.NewReader(js), name)
	if err != nil {
		t.Fatalf("ParseWorkload: %v", err)
	}
	return w
}

// homogeneous is a platform of n hosts of 1 Gflops.
func homogeneous(n int) *Platform {
	speeds := make([]float64, n)
	for i := range speeds {
		speeds[i] = 1e9
	}
	return hostsPlatform(speeds)
}

// mustReadWorkload reads the workload file path as Batsim names its first
// workload, failing the test on an error.
func mustReadWorkload(t testing.TB, path string) *Workload {
	t.Helper()
	w, err := ReadWorkloadFile(path, BatsimWorkloadName(0))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// mustNew returns New(p, ws, o), failing the test on an error.
func mustNew(t testing.TB, p *Platform, ws []*Workload, o Options) *Engine {
	t.Helper()
	e, err := New(p, ws, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

// policy answers a message: the reply's now and the decisions.
type policy func(msg Message) (float64, []Decision)

// drive runs the request/reply cycle to the end (or the first error) and
// returns every message the engine sent.
func drive(e *Engine, decide policy) ([]Message, error) {
	var msgs []Message
	for !e.Over() {
		msg, err := e.Next()
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, msg)
		now, ds := msg.Now, []Decision(nil)
		if decide != nil {
			now, ds = decide(msg)
		}
		if err := e.Apply(now, ds); err != nil {
			return msgs, err
		}
	}
	return msgs, nil
}

// loop runs the request/reply cycle to the end without keeping the
// messages.
func loop(e *Engine, decide policy) error {
	for !e.Over() {
		msg, err := e.Next()
		if err != nil {
			return err
		}
		if err := e.Apply(decide(msg)); err != nil {
			return err
		}
	}
	return nil
}

// placer executes every submitted job at once on the resources given for
// it (all of them by default), and asks nothing else.
func placer(allocs map[string][]int, all []int) policy {
	return func(msg Message) (float64, []Decision) {
		var ds []Decision
		for _, ev := range msg.Events {
			if s, ok := ev.(JobSubmitted); ok {
				alloc, ok := allocs[s.Job.ID]
				if !ok {
					alloc = all
				}
				ds = append(ds, ExecuteJob{Timestamp: msg.Now, JobID: s.Job.ID, Alloc: alloc})
			}
		}
		return msg.Now, ds
	}
}

// completions returns the JOB_COMPLETED events of the messages, by job id.
func completions(msgs []Message) map[string]JobCompleted {
	out := map[string]JobCompleted{}
	for _, m := range msgs {
		for _, ev := range m.Events {
			if c, ok := ev.(JobCompleted); ok {
				out[c.JobID] = c
			}
		}
	}
	return out
}

// trace renders the messages as lines "now: TYPE detail, TYPE detail".
func trace(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%g:", m.Now)
		for i, ev := range m.Events {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %s", ev.Type())
			switch ev := ev.(type) {
			case JobSubmitted:
				fmt.Fprintf(&b, " %s", ev.Job.ID)
			case JobCompleted:
				fmt.Fprintf(&b, " %s %s %d [%s]", ev.JobID, ev.State, ev.ReturnCode, formatIDs(ev.Alloc))
			case JobKilled:
				fmt.Fprintf(&b, " %s", strings.Join(ev.JobIDs, " "))
			case Notification:
				fmt.Fprintf(&b, " %s", ev.Kind)
			}
			if ev.Time() != m.Now {
				fmt.Fprintf(&b, " @%g", ev.Time())
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}
