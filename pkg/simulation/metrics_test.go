package simulation

import (
	"bytes"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/metrics"
	"github.com/batkube/batkube/pkg/settle"
)

// TestBrokerMetrics registers the broker's metrics with a progress and
// exchanged messages, and reads them back from the registry's text: steps
// by how they ended (the remainder is the answer to SIMULATION_ENDS),
// simulated time, jobs by state, Batsim's messages and events by type.
func TestBrokerMetrics(t *testing.T) {
	m := newBrokerMetrics()
	m.progress = func() broker.Progress {
		return broker.Progress{Now: 1234.5, Submitted: 10, Pending: 2, Running: 3, Done: 5, Total: -1, Steps: 17, Ended: true,
			Settle:            settle.Stats{Policy: "kube-scheduler", NothingPending: 4, Idle: 9, Quiet: 2, MaxWait: 1, Checks: 40, Probes: 30},
			AdmissionRejected: 1, Preempted: 2, Resubmitted: 1}
	}
	m.exchanged(batsim.Message{Events: []batsim.Event{{Data: batsim.JobSubmitted{}}, {Data: batsim.JobSubmitted{}}, {Data: batsim.JobCompleted{}}}},
		batsim.Message{Events: []batsim.Event{{Data: batsim.ExecuteJob{}}, {Data: batsim.CallMeLater{}}}})
	m.exchanged(batsim.Message{Events: []batsim.Event{{Data: batsim.SimulationEnds{}}}}, batsim.Message{})
	reg := metrics.NewRegistry()
	if err := reg.Register(m.collectors()...); err != nil {
		t.Fatal(err)
	}
	text, err := reg.Text()
	if err != nil {
		t.Fatal(err)
	}
	f, err := metrics.Parse(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"batkube_broker_steps_total", map[string]string{"ended": "nothing_pending"}, 4},
		{"batkube_broker_steps_total", map[string]string{"ended": "exact"}, 9},
		{"batkube_broker_steps_total", map[string]string{"ended": "quiet"}, 2},
		{"batkube_broker_steps_total", map[string]string{"ended": "settle_max"}, 1},
		{"batkube_broker_steps_total", map[string]string{"ended": "simulation_end"}, 1},
		{"batkube_broker_steps_total", nil, 17},
		{"batkube_simulated_time_seconds", nil, 1234.5},
		{"batkube_jobs", map[string]string{"state": "pending"}, 2},
		{"batkube_jobs", map[string]string{"state": "running"}, 3},
		{"batkube_jobs", map[string]string{"state": "finished"}, 5},
		{"batkube_jobs_submitted_total", nil, 10},
		{"batkube_jobs_preempted_total", nil, 2},
		{"batkube_jobs_resubmitted_total", nil, 1},
		{"batkube_pods_admission_rejected_total", nil, 1},
		{"batkube_settle_checks_total", nil, 40},
		{"batkube_settle_probes_total", nil, 30},
		{"batkube_batsim_messages_total", map[string]string{"direction": "received"}, 2},
		{"batkube_batsim_messages_total", map[string]string{"direction": "sent"}, 2},
		{"batkube_batsim_events_received_total", map[string]string{"type": "JOB_SUBMITTED"}, 2},
		{"batkube_batsim_events_received_total", map[string]string{"type": "JOB_COMPLETED"}, 1},
		{"batkube_batsim_events_received_total", map[string]string{"type": "SIMULATION_ENDS"}, 1},
		{"batkube_batsim_events_sent_total", map[string]string{"type": "EXECUTE_JOB"}, 1},
		{"batkube_batsim_events_sent_total", map[string]string{"type": "CALL_ME_LATER"}, 1},
	} {
		if !f.Has(c.name) {
			t.Errorf("no %s", c.name)
			continue
		}
		if got := f.Sum(c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %g, want %g", c.name, c.labels, got, c.want)
		}
	}
}

// countByType counts runs of one type once each, and types that come back
// after another run again.
func TestCountByTypeCountsInterleavedRuns(t *testing.T) {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "events_total"}, []string{"type"})
	sub, done := batsim.Event{Data: batsim.JobSubmitted{}}, batsim.Event{Data: batsim.JobCompleted{}}
	countByType(vec, []batsim.Event{sub, sub, done, sub, done, done, done})
	countByType(vec, nil)
	for typ, want := range map[string]float64{string(sub.Type()): 3, string(done.Type()): 4} {
		var m dto.Metric
		if err := vec.WithLabelValues(typ).Write(&m); err != nil {
			t.Fatal(err)
		}
		if got := m.GetCounter().GetValue(); got != want {
			t.Errorf("%s: %v, want %v", typ, got, want)
		}
	}
}
