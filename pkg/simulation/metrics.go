package simulation

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/broker"
)

// brokerMetrics exposes where a simulation stands: the broker's progress,
// read at each scrape (the broker's loop pays nothing for it), and the
// Batsim messages and events it exchanged, counted once per step.
type brokerMetrics struct {
	progress func() broker.Progress

	steps, now, jobs, submitted, preempted, resubmitted, refused, checks, probes *prometheus.Desc

	received, sent *prometheus.CounterVec // events by type
	messages       *prometheus.CounterVec // by direction
	in, out        prometheus.Counter     // messages' children
}

// The outcomes of batkube_broker_steps_total's ended label: how a step's
// wait for the scheduler ended (settle.Stats), and the last step, which
// answers SIMULATION_ENDS without waiting.
const (
	endedNothingPending = "nothing_pending"
	endedExact          = "exact"
	endedQuiet          = "quiet"
	endedSettleMax      = "settle_max"
	endedUnproven       = "unproven"
	endedSimulationEnd  = "simulation_end"
)

// newBrokerMetrics returns the broker's metrics; set progress before the
// first scrape.
func newBrokerMetrics() *brokerMetrics {
	m := &brokerMetrics{
		steps: prometheus.NewDesc("batkube_broker_steps_total",
			"Batsim messages the broker answered (simulation steps), by how the step's wait for the scheduler ended: nothing_pending (no pod waited), exact (the settle policy knew the scheduler was done), quiet (the quiet window passed), settle_max (--settle-max passed), unproven (the policy ended it without a proof that the scheduler was done), simulation_end (the answer to SIMULATION_ENDS).",
			[]string{"ended"}, nil),
		now: prometheus.NewDesc("batkube_simulated_time_seconds",
			"Simulated time of the latest step, in seconds since the start of the simulation.", nil, nil),
		jobs: prometheus.NewDesc("batkube_jobs",
			"Jobs by state: pending (not all their pods bound and admitted yet), running, finished (ended in any way, rejected ones included).",
			[]string{"state"}, nil),
		submitted: prometheus.NewDesc("batkube_jobs_submitted_total", "Jobs submitted by Batsim (and registered from pods created through the API).", nil, nil),
		preempted: prometheus.NewDesc("batkube_jobs_preempted_total", "Jobs killed because the scheduler preempted one of their pods.", nil, nil),
		resubmitted: prometheus.NewDesc("batkube_jobs_resubmitted_total",
			"Jobs of preempted pods submitted again (--preempted=resubmit).", nil, nil),
		refused: prometheus.NewDesc("batkube_pods_admission_rejected_total",
			"Pods the simulated kubelet refused (bound to a node without room for them).", nil, nil),
		checks: prometheus.NewDesc("batkube_settle_checks_total", "Times the broker asked the settle policy whether the scheduler was done.", nil, nil),
		probes: prometheus.NewDesc("batkube_settle_probes_total",
			"Times the settle policy looked at the scheduler (kube-scheduler: scrapes of its metrics).", nil, nil),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "batkube_batsim_events_received_total", Help: "Events received from Batsim, by type.",
		}, []string{"type"}),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "batkube_batsim_events_sent_total", Help: "Events (decisions) sent to Batsim, by type.",
		}, []string{"type"}),
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "batkube_batsim_messages_total", Help: "Messages exchanged with Batsim, by direction.",
		}, []string{"direction"}),
	}
	m.in, m.out = m.messages.WithLabelValues("received"), m.messages.WithLabelValues("sent")
	return m
}

// collectors are what to register.
func (m *brokerMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m, m.received, m.sent, m.messages}
}

// exchanged counts one step's messages (broker.Options.Exchanged).
func (m *brokerMetrics) exchanged(received, sent batsim.Message) {
	m.in.Inc()
	m.out.Inc()
	countByType(m.received, received.Events)
	countByType(m.sent, sent.Events)
}

// countByType adds events to vec by type, one child lookup per run of
// events of one type (a burst of submissions is one run).
func countByType(vec *prometheus.CounterVec, events []batsim.Event) {
	for i := 0; i < len(events); {
		typ, j := events[i].Type(), i+1
		for j < len(events) && events[j].Type() == typ {
			j++
		}
		vec.WithLabelValues(string(typ)).Add(float64(j - i))
		i = j
	}
}

// Describe implements prometheus.Collector.
func (m *brokerMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.steps, m.now, m.jobs, m.submitted, m.preempted, m.resubmitted, m.refused, m.checks, m.probes} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *brokerMetrics) Collect(ch chan<- prometheus.Metric) {
	p := m.progress()
	st := p.Settle
	counter := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter(m.steps, st.NothingPending, endedNothingPending)
	counter(m.steps, st.Idle, endedExact)
	counter(m.steps, st.Quiet, endedQuiet)
	counter(m.steps, st.MaxWait, endedSettleMax)
	counter(m.steps, st.Unproven, endedUnproven)
	counter(m.steps, max(0, p.Steps-st.NothingPending-st.Idle-st.Quiet-st.MaxWait-st.Unproven), endedSimulationEnd)
	gauge(m.now, p.Now)
	gauge(m.jobs, float64(p.Pending), "pending")
	gauge(m.jobs, float64(p.Running), "running")
	gauge(m.jobs, float64(p.Done), "finished")
	counter(m.submitted, p.Submitted)
	counter(m.preempted, p.Preempted)
	counter(m.resubmitted, p.Resubmitted)
	counter(m.refused, p.AdmissionRejected)
	counter(m.checks, st.Checks)
	counter(m.probes, st.Probes)
}
