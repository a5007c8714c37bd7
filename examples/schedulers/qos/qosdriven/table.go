package qosdriven

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"
	"time"

	"github.com/batkube/batkube/examples/schedulers/qos/internal/ledger"
)

// Table is the debug table: every controller's account at one instant.
type Table struct {
	// Simulated says whether times are simulated (a Batkube run) or wall.
	Simulated bool `json:"simulated"`
	// Time is the instant of the accounts; Seconds, in a simulation, the
	// simulated seconds since its start.
	Time    time.Time `json:"time"`
	Seconds float64   `json:"seconds"`
	// PodsResourceVersion and NodesResourceVersion are those stored by the
	// scheduler's informers when the table was made: the accounts include
	// every change up to them.
	PodsResourceVersion  string `json:"podsResourceVersion"`
	NodesResourceVersion string `json:"nodesResourceVersion"`
	Rows                 []Row  `json:"controllers"`
}

// Row is one controller's account. Times are in seconds; QoS is null when
// no time has elapsed yet.
type Row struct {
	Controller string   `json:"controller"`
	SLO        float64  `json:"slo"`
	QoS        *float64 `json:"qos"`
	TTV        float64  `json:"ttv"`
	Running    float64  `json:"running"`
	Waiting    float64  `json:"waiting"`
	Binding    float64  `json:"binding"`
	// Pods pending, binding and running at Time.
	Pending     int `json:"pending"`
	BindingPods int `json:"bindingPods"`
	RunningPods int `json:"runningPods"`
}

// table returns the accounts at instant now.
func (pl *QoSDriven) table(now time.Time) Table {
	t := Table{Simulated: pl.clock.Simulated(), Time: now, Seconds: pl.clock.SinceStart(now).Seconds(),
		PodsResourceVersion: pl.pods.LastStoreSyncResourceVersion(), NodesResourceVersion: pl.nodes.LastStoreSyncResourceVersion()}
	for _, a := range pl.ledger.Accounts(now) {
		r := Row{Controller: a.Controller, SLO: a.SLO, TTV: a.TTV(), Running: a.Running.Seconds(), Waiting: a.Waiting.Seconds(),
			Binding: a.Times.Binding.Seconds(), Pending: a.Pods[ledger.Pending], BindingPods: a.Pods[ledger.Binding], RunningPods: a.Pods[ledger.Running]}
		if q, ok := a.QoS(); ok {
			r.QoS = &q
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// debugHandler serves the table at the time read when asked, the ledger
// brought up to the scheduler's informer first: as text, or as JSON with
// ?output=json.
func (pl *QoSDriven) debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		// The stores' resourceVersions are taken before the ledger catches
		// up with them, so the table holds at least those changes.
		pods, nodes := pl.pods.LastStoreSyncResourceVersion(), pl.nodes.LastStoreSyncResourceVersion()
		pl.catchUp(r.Context())
		t := pl.table(pl.clock.Read(r.Context()))
		t.PodsResourceVersion, t.NodesResourceVersion = pods, nodes
		w.Header().Set("Cache-Control", "no-store")
		switch out := r.URL.Query().Get("output"); out {
		case "json":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(t)
		case "", "text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_ = t.write(w)
		default:
			http.Error(w, fmt.Sprintf("output %q: want text or json", out), http.StatusBadRequest)
		}
	})
	return mux
}

// write prints the table as text: a line saying the instant, then one row
// per controller. TTV and the times are in seconds.
func (t Table) write(w io.Writer) error {
	if t.Simulated {
		fmt.Fprintf(w, "# simulated time %.3f s (%s); TTV, RUNNING, WAITING, BINDING in simulated seconds", t.Seconds, t.Time.UTC().Format(time.RFC3339Nano))
	} else {
		fmt.Fprintf(w, "# wall time %s; TTV, RUNNING, WAITING, BINDING in seconds", t.Time.UTC().Format(time.RFC3339Nano))
	}
	fmt.Fprintf(w, "; pods and nodes seen up to resourceVersion %s and %s\n", orNone(t.PodsResourceVersion), orNone(t.NodesResourceVersion))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "CONTROLLER\tQOS/SLO\tTTV\tRUNNING\tWAITING\tBINDING\tPODS(P/B/R)\t")
	for _, r := range t.Rows {
		qos := "-"
		if r.QoS != nil {
			qos = fmt.Sprintf("%.3f", *r.QoS)
		}
		fmt.Fprintf(tw, "%s\t%s/%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d/%d/%d\t\n", r.Controller, qos, r.SLO, r.TTV,
			r.Running, r.Waiting, r.Binding, r.Pending, r.BindingPods, r.RunningPods)
	}
	return tw.Flush()
}

func orNone(rv string) string {
	if rv == "" {
		return "(none)"
	}
	return rv
}
