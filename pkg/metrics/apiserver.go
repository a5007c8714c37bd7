package metrics

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/batkube/batkube/pkg/endpoint"
)

// component is the component label of kube-apiserver's request metrics.
const component = "apiserver"

// requestDurationBuckets are kube-apiserver's buckets of
// apiserver_request_duration_seconds (5 ms to 60 s, so that dashboards and
// SLO queries on le="1" carry over), with five finer ones below 5 ms
// prepended: an in-memory server answers most requests in well under a
// millisecond.
var requestDurationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025,
	0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60}

// connectSubresources are reported with the verb CONNECT, as kube-apiserver
// reports them.
var connectSubresources = []string{"log", "exec", "portforward", "attach", "proxy"}

// applyPatch is the media type of server-side apply, reported as APPLY.
const applyPatch = "application/apply-patch+yaml"

// APIServer instruments the requests of an API server with kube-apiserver's
// metrics: apiserver_request_total, apiserver_request_duration_seconds,
// apiserver_longrunning_requests (open watches), apiserver_watch_events_total
// and apiserver_registered_watchers (the name 1.18 had).
//
// The label values of every operation of the spec are computed once, and
// each series is resolved on its first use, then reached through an atomic
// pointer: a request costs two clock reads, one small allocation and a few
// atomic operations, whatever its labels.
type APIServer struct {
	requests    *prometheus.CounterVec
	durations   *prometheus.HistogramVec
	longRunning *prometheus.GaugeVec
	watchers    *prometheus.GaugeVec
	watchEvents *prometheus.CounterVec
	ops         map[*endpoint.Operation]*operation
	// custom are the operations of custom resources, which are not in
	// the spec: made on their first request.
	custom sync.Map // customKey → *operation
}

// customKey identifies an operation of a custom resource by the fields
// its labels come from.
type customKey struct {
	method, group, version, resource, subresource, kind string
	verb                                                endpoint.Verb
	namespaced                                          bool
}

// NewAPIServer registers the request metrics in reg for the operations
// ops. The operations must be those the router hands to the server
// (endpoint.Handler.Serve receives pointers into ops).
func NewAPIServer(reg *Registry, ops []endpoint.Operation) (*APIServer, error) {
	requestLabels := []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}
	m := &APIServer{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
		}, append(requestLabels, "code")),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: requestDurationBuckets,
		}, requestLabels),
		longRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_longrunning_requests",
			Help: "Gauge of all active long-running apiserver requests (watches) broken out by verb, group, version, resource, scope and component.",
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"}),
		watchers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_registered_watchers",
			Help: "Number of currently registered watchers for a given resources (kube-apiserver 1.18's name).",
		}, []string{"group", "version", "kind"}),
		watchEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_watch_events_total",
			Help: "Number of events sent in watch clients",
		}, []string{"group", "version", "resource"}),
		ops: make(map[*endpoint.Operation]*operation, len(ops)),
	}
	if err := reg.Register(m.requests, m.durations, m.longRunning, m.watchers, m.watchEvents); err != nil {
		return nil, err
	}
	for i := range ops {
		op := &ops[i]
		if op.Verb == endpoint.NonResource || op.Resource == "" {
			continue
		}
		m.ops[op] = newOperation(m, op)
	}
	return m, nil
}

// Instrument returns next with every request to a resource operation
// counted and timed (next must reach the operation's handler, which calls
// Request.Route).
func (m *APIServer) Instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rq := &Request{StatusRecorder: StatusRecorder{ResponseWriter: w}, m: m, start: time.Now()}
		next.ServeHTTP(rq, r)
		if rq.op != nil {
			rq.op.observe(r, rq)
		}
	})
}

// Request is the response writer of an instrumented request: it records
// the status code, and the handler tells it the operation (Route) and
// whether the request became a watch.
type Request struct {
	StatusRecorder
	m     *APIServer
	start time.Time
	op    *operation
	watch bool
}

// RequestOf returns the instrumented request that w answers (looking
// through writers that wrap it with Unwrap), or nil: the methods of a nil
// *Request do nothing.
func RequestOf(w http.ResponseWriter) *Request {
	for {
		switch t := w.(type) {
		case *Request:
			return t
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil
		}
	}
}

// Route tells which operation of the spec serves the request; requests
// never routed to a resource operation (discovery, health checks, paths
// outside the API, requests the router refuses) are not counted.
func (r *Request) Route(op *endpoint.Operation) {
	if r == nil {
		return
	}
	if o, ok := r.m.ops[op]; ok {
		r.op = o
		return
	}
	r.op = r.m.customOperation(op)
}

// customOperation returns the operation of a request to a custom resource
// (op is made per request, and is not one of the spec's), or nil if op is
// not a resource's.
func (m *APIServer) customOperation(op *endpoint.Operation) *operation {
	if op.Verb == endpoint.NonResource || op.Resource == "" {
		return nil
	}
	key := customKey{method: op.Method, group: op.Group, version: op.Version, resource: op.Resource,
		subresource: op.Subresource, kind: op.Kind, verb: op.Verb, namespaced: op.Namespaced}
	if o, ok := m.custom.Load(key); ok {
		return o.(*operation)
	}
	o, _ := m.custom.LoadOrStore(key, newOperation(m, op))
	return o.(*operation)
}

// Watching says the request is a watch (a list with ?watch=true): it is
// reported with the verb WATCH, as kube-apiserver reports it.
func (r *Request) Watching() {
	if r != nil {
		r.watch = true
	}
}

// WatchOpened counts an open watch (apiserver_longrunning_requests and
// apiserver_registered_watchers) until Watch.Close.
func (r *Request) WatchOpened() *Watch {
	if r == nil || r.op == nil {
		return nil
	}
	r.watch = true
	s := r.op.series(r.op.variant(true, false))
	w := &Watch{longRunning: s.longRunning(), watchers: s.watchers(), events: s.watchEvents()}
	w.longRunning.Inc()
	w.watchers.Inc()
	return w
}

// Watch is the instruments of one open watch.
type Watch struct {
	longRunning, watchers prometheus.Gauge
	events                prometheus.Counter
	counted               uint64
}

// Sent reports the number of events the watch has written so far
// (counted by apiserver_watch_events_total): the watch calls it when it
// flushes, rather than once per event.
func (w *Watch) Sent(total uint64) {
	if w == nil || total <= w.counted {
		return
	}
	w.events.Add(float64(total - w.counted))
	w.counted = total
}

// Close reports the watch closed after writing sent events.
func (w *Watch) Close(sent uint64) {
	if w == nil {
		return
	}
	w.Sent(sent)
	w.longRunning.Dec()
	w.watchers.Dec()
}

// operation is the label values of one operation, and its series.
type operation struct {
	m                                                  *APIServer
	group, version, resource, subresource, scope, kind string
	// verbs are the verb reported for the operation and, if it may turn
	// out otherwise, the other one: WATCH for a list, APPLY for a patch.
	verbs [2]string
	// all[i] are the series of verbs[i] (dry_run empty), made on first use.
	all [2]atomic.Pointer[series]
}

func newOperation(m *APIServer, op *endpoint.Operation) *operation {
	o := &operation{m: m, group: op.Group, version: op.Version, resource: op.Resource, subresource: op.Subresource,
		scope: scope(op), kind: op.Kind}
	o.verbs = reportedVerbs(op, o.scope)
	return o
}

// scope is the scope label kube-apiserver gives the requests of an
// operation: resource for one object (or a create; a custom resource's
// operation has no path, its verb tells), namespace for a
// collection in a namespace, cluster otherwise.
func scope(op *endpoint.Operation) string {
	named := op.Path == "" && (op.Verb == endpoint.Get || op.Verb == endpoint.Update || op.Verb == endpoint.Patch || op.Verb == endpoint.Delete)
	switch {
	case named, strings.Contains(op.Path, "{name}"), strings.HasSuffix(op.Path, "{path}"), op.Method == http.MethodPost:
		return "resource"
	case op.Namespaced:
		return "namespace"
	}
	return "cluster"
}

// reportedVerbs are the verbs kube-apiserver reports for an operation,
// from its HTTP method and scope: GET of a collection is LIST (WATCH with
// ?watch), the /watch/ paths are WATCH, a deletecollection is DELETE, a
// PATCH is APPLY with the apply media type, the streaming subresources are
// CONNECT.
func reportedVerbs(op *endpoint.Operation, scope string) [2]string {
	switch {
	case slices.Contains(connectSubresources, op.Subresource):
		return [2]string{"CONNECT"}
	case op.Verb == endpoint.Watch, op.Verb == endpoint.WatchList:
		return [2]string{"WATCH"}
	case op.Method == http.MethodGet && scope != "resource":
		return [2]string{"LIST", "WATCH"}
	case op.Method == http.MethodPatch:
		return [2]string{"PATCH", "APPLY"}
	}
	return [2]string{op.Method}
}

// variant is the index of the verb a request reports.
func (o *operation) variant(watch, apply bool) int {
	want := ""
	switch {
	case watch:
		want = "WATCH"
	case apply:
		want = "APPLY"
	}
	if want != "" && o.verbs[1] == want {
		return 1
	}
	return 0
}

// series returns the series of one verb, making them on first use.
func (o *operation) series(i int) *series {
	if s := o.all[i].Load(); s != nil {
		return s
	}
	o.all[i].CompareAndSwap(nil, &series{op: o, verb: o.verbs[i]})
	return o.all[i].Load()
}

// observe counts and times a finished request.
func (o *operation) observe(r *http.Request, rq *Request) {
	code := rq.Code
	if code == 0 {
		code = http.StatusOK
	}
	elapsed := time.Since(rq.start).Seconds()
	apply := o.verbs[0] == http.MethodPatch && r.Header.Get("Content-Type") == applyPatch
	s := o.series(o.variant(rq.watch, apply))
	if dry := dryRun(r.URL); dry != "" {
		// Rare: resolved each time.
		o.m.requests.WithLabelValues(s.verb, dry, o.group, o.version, o.resource, o.subresource, o.scope, component, strconv.Itoa(code)).Inc()
		o.m.durations.WithLabelValues(s.verb, dry, o.group, o.version, o.resource, o.subresource, o.scope, component).Observe(elapsed)
		return
	}
	s.requests(code).Inc()
	s.duration().Observe(elapsed)
}

// dryRun is the dry_run label of a request: its dryRun values sorted and
// joined, "invalid" if one is not All.
func dryRun(u *url.URL) string {
	if !strings.Contains(u.RawQuery, "dryRun") {
		return ""
	}
	values := u.Query()["dryRun"]
	for _, v := range values {
		if v != "All" {
			return "invalid"
		}
	}
	slices.Sort(values)
	return strings.Join(slices.Compact(values), ",")
}

// The first and last codes with a cached counter.
const minCode, maxCode = 100, 599

// series is the metrics of one operation and verb (dry_run empty), each
// resolved from its vector on first use.
type series struct {
	op      *operation
	verb    string
	codes   [maxCode - minCode + 1]lazy[prometheus.Counter]
	latency lazy[prometheus.Observer]
	// Watches only.
	open, registered lazy[prometheus.Gauge]
	events           lazy[prometheus.Counter]
}

func (s *series) requests(code int) prometheus.Counter {
	o := s.op
	resolve := func() prometheus.Counter {
		return o.m.requests.WithLabelValues(s.verb, "", o.group, o.version, o.resource, o.subresource, o.scope, component, strconv.Itoa(code))
	}
	if code < minCode || code > maxCode {
		return resolve()
	}
	return s.codes[code-minCode].get(resolve)
}

func (s *series) duration() prometheus.Observer {
	return s.latency.get(func() prometheus.Observer {
		o := s.op
		return o.m.durations.WithLabelValues(s.verb, "", o.group, o.version, o.resource, o.subresource, o.scope, component)
	})
}

func (s *series) longRunning() prometheus.Gauge {
	return s.open.get(func() prometheus.Gauge {
		o := s.op
		return o.m.longRunning.WithLabelValues(s.verb, o.group, o.version, o.resource, o.subresource, o.scope, component)
	})
}

func (s *series) watchers() prometheus.Gauge {
	return s.registered.get(func() prometheus.Gauge {
		o := s.op
		return o.m.watchers.WithLabelValues(o.group, o.version, o.kind)
	})
}

func (s *series) watchEvents() prometheus.Counter {
	return s.events.get(func() prometheus.Counter {
		o := s.op
		return o.m.watchEvents.WithLabelValues(o.group, o.version, o.resource)
	})
}

// lazy is a child of a metric vector, resolved on first use. Resolving
// twice is harmless: a vector returns the same child for the same labels.
type lazy[T any] struct{ p atomic.Pointer[T] }

func (l *lazy[T]) get(resolve func() T) T {
	if p := l.p.Load(); p != nil {
		return *p
	}
	v := resolve()
	l.p.Store(&v)
	return v
}
