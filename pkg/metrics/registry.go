// Package metrics exposes a Batkube server's metrics in the Prometheus text
// format (and OpenMetrics when a scraper asks for it): the API server's
// requests and watches, named and labelled as kube-apiserver names them, and
// whatever other collectors a server registers (a simulation's broker). It
// also reads metrics: the summary of a kube-scheduler's scheduling attempts
// and latencies kept at the end of a run.
//
// Every server has its own Registry, passed to what instruments it; nothing
// is registered globally.
package metrics

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
)

// Path is where a server serves its metrics.
const Path = "/metrics"

// Registry holds the metrics of one server. It serves them at Path (it is an
// apiserver.NonResourceHandler) and writes them to files.
type Registry struct {
	reg     *prometheus.Registry
	handler http.Handler
}

// NewRegistry returns a registry with the Go runtime's and the process's
// collectors (go_*, process_*: CPU seconds, resident memory), as every
// Kubernetes component exposes them.
func NewRegistry() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Registry{reg: reg, handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true})}
}

// Register adds collectors.
func (r *Registry) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := r.reg.Register(c); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	return nil
}

// Gatherer returns what the registry collects, for tests and tools.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// Handles reports whether path is the metrics path.
func (r *Registry) Handles(path string) bool { return path == Path }

// ServeHTTP serves the metrics in the format the scraper negotiates
// (Prometheus text by default, OpenMetrics when asked).
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.handler.ServeHTTP(w, req)
}

// Text returns the metrics in the Prometheus text format.
func (r *Registry) Text() ([]byte, error) {
	families, err := r.reg.Gather()
	if err != nil {
		return nil, fmt.Errorf("metrics: gathering: %w", err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return nil, fmt.Errorf("metrics: encoding %s: %w", f.GetName(), err)
		}
	}
	return buf.Bytes(), nil
}

// WriteFile writes the metrics to path in the Prometheus text format, whole
// or not at all (a temporary file renamed).
func (r *Registry) WriteFile(path string) error {
	if err := prometheus.WriteToTextfile(path, r.reg); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}
