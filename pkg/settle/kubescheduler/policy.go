package kubescheduler

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/store"
)

// Options configure a Policy.
type Options struct {
	// MetricsURL is the scheduler's metrics endpoint, e.g.
	// https://127.0.0.1:10259/metrics.
	MetricsURL string
	// Token is the bearer token of the scrapes (one the API server's
	// TokenReview accepts).
	Token string
	// SchedulerNames are the schedulerNames of the scheduler's profiles
	// (default: default-scheduler).
	SchedulerNames []string
	// Delivered, if set, reports whether every event written so far has
	// been handed to the clients' connections (the API server's watches
	// are caught up). With the scheduler's process quiescent after it,
	// that proves the scheduler handled them: the barrier of versions that
	// do not count the events they handle (1.18). Without it (or when the
	// scheduler's process cannot be watched) such versions are read
	// without that proof, and the policy warns that settling is not exact.
	Delivered func() bool
	// WatchStart, if set, gives the resourceVersion from which the
	// scheduler's first watch of a resource ("pods", "nodes",
	// "podgroups") started (ok false while it has none): the changes up to
	// it came to the scheduler folded into the state it listed, not as
	// events it handles (apiserver.Server.WatchStart).
	WatchStart func(resource string) (rv uint64, ok bool)
	// PIDFile, if set, holds the PID of the scheduler's process (written
	// by whoever started it, as batkube-run does): read instead of looking
	// for the process listening on the metrics address, which scans /proc.
	PIDFile string
	// Version returns the scheduler's version ("v1.37.1"; "" while not
	// known), which tells whether it counts the events it handles: from
	// the run's configuration, or the User-Agent of its requests.
	Version func() string
	// ReleaseAll renews every waiting pod group once room was freed since
	// its last release (deletes it, creates it held, releases it again);
	// by default only those whose pods may fit by their requests on the
	// nodes' free room (what NodeResourcesFit, on in every kube-scheduler
	// profile that has not disabled it, checks) are.
	ReleaseAll bool
	// MinGap and MaxGap pace the scrapes (defaults 500µs and 20ms): a
	// scrape waits until the API has been quiet for the gap, which doubles
	// while scrapes find the scheduler at work without writing.
	MinGap, MaxGap time.Duration
	// Client does the scrapes (default: keep-alive HTTPS without
	// certificate verification: the scheduler's serving certificate is
	// self-signed).
	Client *http.Client
	Logger *slog.Logger
}

// Policy is the kube-scheduler settle policy.
type Policy struct {
	opts   Options
	url    string
	want   *expected
	log    *slog.Logger
	gap    time.Duration
	now    func() time.Time
	scrape func(ctx context.Context) ([]byte, error)

	// lastScrape is when the latest scrape found the scheduler at work,
	// and lastScrapeActivity the activity it saw then.
	lastScrapeActivity time.Time
	// started is the scheduler's process start time at the latest scrape;
	// offsets rebase the handled-event counts after a restart.
	started float64
	offsets map[string]float64
	warned  map[string]bool
	scrapes int
	// proc watches the scheduler's process, when it runs on this machine.
	proc *process
	// answered: the scheduler has answered a scrape.
	answered bool
	// handledVersion is the version of the expected handled events that a
	// completed scrape showed handled.
	handledVersion uint64
	// preemptBase is the count of preemptions that started no goroutine
	// (see preempting), preemptQuiet when the scheduler was first seen
	// quiescent with more preemptions started than ended.
	preemptBase  float64
	preemptQuiet time.Time
	// unproven says why the step in progress cannot be proven exact ("":
	// it can); reported with the step's Done verdict.
	unproven string
}

var (
	_ settle.Policy = (*Policy)(nil)
)

// New returns the policy.
func New(opts Options) (*Policy, error) {
	u, err := url.Parse(opts.MetricsURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("kubescheduler: metrics URL %q: want https://host:port/metrics", opts.MetricsURL)
	}
	q := u.Query()
	for _, f := range families {
		q.Add("name[]", f)
	}
	u.RawQuery = q.Encode()
	if len(opts.SchedulerNames) == 0 {
		opts.SchedulerNames = []string{"default-scheduler"}
	}
	if opts.MinGap <= 0 {
		opts.MinGap = 500 * time.Microsecond
	}
	if opts.MaxGap <= 0 {
		opts.MaxGap = 20 * time.Millisecond
	}
	if opts.Client == nil {
		opts.Client = &http.Client{
			Timeout: 10 * time.Second,
			Transport: &http.Transport{
				TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, // #nosec G402 -- the scheduler's self-signed serving certificate, on loopback
				MaxIdleConnsPerHost: 2,
				IdleConnTimeout:     5 * time.Minute,
			},
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Version == nil {
		opts.Version = func() string { return "" }
	}
	p := &Policy{opts: opts, url: u.String(), want: newExpected(opts.SchedulerNames), log: opts.Logger,
		gap: opts.MinGap, now: time.Now, offsets: map[string]float64{}, warned: map[string]bool{},
		proc: newProcess(u.Host, opts.Logger)}
	if opts.PIDFile != "" {
		p.proc.lookup = readPIDFile(opts.PIDFile)
	}
	p.scrape = p.get
	return p, nil
}

// Name implements settle.Policy.
func (p *Policy) Name() string { return "kube-scheduler" }

// Abilities implements settle.Policy: the policy holds the gangs' pod
// groups and releases them (kube-scheduler 1.37 attempts a pod group at
// once when it appears, and retries one it could not place only on a
// back-off of real time, whatever the cluster does meanwhile: see the
// package documentation); its probes are its metrics scrapes.
func (p *Policy) Abilities() settle.Abilities {
	return settle.Abilities{Hold: p.Hold, Probes: p.Probes}
}

// Probes counts the scrapes made so far.
func (p *Policy) Probes() int { return p.scrapes }

// Observe implements settle.Policy.
func (p *Policy) Observe(c store.Change) { p.want.observe(c) }

// Hold takes a gang's pod group, created held, into the policy's care:
// its verdicts release it (settle.Abilities.Hold).
func (p *Policy) Hold(g settle.GroupRef) { p.want.own(g) }

// ErrRefused is returned when the scheduler refuses the scrapes.
var ErrRefused = errors.New("kube-scheduler refused Batkube's metrics requests")

// watchedResources are the resources whose changes the scheduler handles
// as events the policy counts.
var watchedResources = []string{"pods", "nodes", "podgroups"}

// Check implements settle.Policy.
func (p *Policy) Check(ctx context.Context, st settle.State) (settle.Verdict, error) {
	if p.opts.WatchStart != nil {
		for _, r := range watchedResources {
			if rv, ok := p.opts.WatchStart(r); ok {
				p.want.learnWatchStart(r, rv)
			}
		}
	}
	// Pace: scrape once the scheduler has been quiet for the gap.
	if since := p.now().Sub(st.LastActivity); since < p.gap {
		return settle.Verdict{RetryAfter: p.gap - since, Waiting: "the scheduler is writing"}, nil
	}
	// The barrier: every event written to the scheduler's connections,
	// then its process quiescent, proves the events handled before the
	// scrape. Versions that do not count handled events need it; for the
	// others it spares the second scrape that would otherwise prove the
	// counts (see verdict), and the scrapes of a scheduler still at work.
	quietBefore := false
	switch {
	case p.opts.Delivered == nil || !p.proc.watched(p.answered):
		if p.countsHandledEvents() || !p.answered {
			// Not needed, or the scheduler is not up (listening) yet: look
			// for its process again once it answers.
			break
		}
		if !p.warned["barrier"] {
			p.warned["barrier"] = true
			p.log.Warn("cannot prove that this kube-scheduler has handled the events sent to it (it does not count them, and its process cannot be watched): its steps are reported as unproven",
				"version", p.opts.Version())
		}
		p.unproven = fmt.Sprintf("kube-scheduler %q does not count the events it handles and its process cannot be watched", p.opts.Version())
	case !p.opts.Delivered():
		return p.busy(st, "events not yet written to the scheduler's connections"), nil
	default:
		quiet, err := p.proc.quiescent()
		if err != nil {
			return settle.Verdict{}, err
		}
		if !quiet {
			return p.busyProcess(st), nil
		}
		quietBefore = true
	}
	p.scrapes++
	data, err := p.scrape(ctx)
	if err != nil {
		if errors.Is(err, ErrRefused) {
			return settle.Verdict{}, err
		}
		// Not up yet, or restarting: its liveness is the broker's concern.
		return settle.Verdict{RetryAfter: 50 * time.Millisecond, Waiting: "the scheduler's metrics are unreachable: " + err.Error()}, nil
	}
	s, err := parse(data)
	if err != nil {
		return settle.Verdict{}, fmt.Errorf("kubescheduler: %s: %w", p.opts.MetricsURL, err)
	}
	if !p.answered {
		p.answered = true
		if !p.countsHandledEvents() {
			return p.busy(st, "locating the scheduler's process"), nil
		}
	}
	if waiting, queued := p.verdict(s, quietBefore); waiting != "" {
		v := p.busy(st, waiting)
		if p.handledVersion == p.want.version && queued == 0 && s.queues["active"]+s.plainBackoff() == 0 {
			v.RetryAfter = p.opts.MinGap // the next scrape is the proof
		}
		// Pods still queued or in a cycle take about an average attempt
		// each: no use asking before (a scrape costs the scheduler).
		if queued > 0 && s.attempts > 0 {
			v.RetryAfter = min(max(v.RetryAfter, time.Duration(queued*s.attemptSeconds/s.attempts*float64(time.Second))), p.opts.MaxGap)
		}
		// Before SchedulerPopFromBackoffQ (1.33), pods in backoff wait out
		// a real-time back-off of a second or more; so do pods that failed
		// with an error (an extender's, the API's) on any version.
		if s.queues["active"] == 0 && s.plainBackoff() > 0 {
			v.RetryAfter = max(v.RetryAfter, backoffPoll)
		}
		return v, nil
	}
	p.gap = p.opts.MinGap
	// Idle but for pod groups held, or on the scheduler's back-off: those
	// that could fit now are released (or held again, to be released).
	if actions := p.want.actions(!p.opts.ReleaseAll); len(actions) > 0 && p.groupsHandled(s) {
		return settle.Verdict{Groups: actions, RetryAfter: p.opts.MinGap,
			Waiting: fmt.Sprintf("%d pod groups to attempt (again) at this instant", len(actions))}, nil
	}
	p.log.Debug("kube-scheduler idle", "queues", s.queues, "unbound", p.want.unbound, "handled", s.handled, "expected", p.want.handled, "rv", st.RV, "version", p.want.version, "handledVersion", p.handledVersion)
	if g := p.want.failing(); g != "" && p.unproven == "" {
		p.unproven = fmt.Sprintf("pod group %s keeps failing with errors: kube-scheduler retries it on a real-time back-off", g)
	}
	if g := p.want.stale(); g != "" && p.unproven == "" && p.groupsHandled(s) {
		p.unproven = fmt.Sprintf("pod group %s is not Batkube's and waits since room was freed: kube-scheduler retries it on a real-time back-off", g)
	}
	if why := p.unproven; why != "" {
		p.unproven = ""
		return settle.Verdict{Done: true, Unproven: why}, nil
	}
	return settle.Verdict{Done: true, Exact: true}, nil
}

// groupsHandled reports whether the scheduler handles pod groups
// (kube-scheduler 1.37 with GenericWorkload): it then expects the pod
// group events handled, and the policy creates again the groups that could
// fit now.
func (p *Policy) groupsHandled(s sample) bool { return s.gates[gateGenericWorkload] }

// plainBackoff counts the pods in the back-off queue that belong to no pod
// group: work the scheduler is about to do, or a pod that failed with an
// error and waits out its back-off. Before 1.37 every pod is one.
func (s sample) plainBackoff() float64 {
	if s.hasEntities {
		return s.entities["backoff/pod"]
	}
	return s.queues["backoff"]
}

// busyProcess is the verdict of a scheduler whose process is at work: look
// again soon (a look costs this side a fraction of a millisecond, not the
// scheduler).
func (p *Policy) busyProcess(st settle.State) settle.Verdict {
	return settle.Verdict{RetryAfter: processPoll, Waiting: "the scheduler's process is running"}
}

// processPoll is how often a running scheduler's process is looked at.
const processPoll = time.Millisecond

// busy is the verdict of a scheduler at work: ask again after the gap,
// doubled if it has written nothing since the previous such scrape.
func (p *Policy) busy(st settle.State, waiting string) settle.Verdict {
	if st.LastActivity.Equal(p.lastScrapeActivity) {
		p.gap = min(2*p.gap, p.opts.MaxGap)
	} else {
		p.gap = p.opts.MinGap
	}
	p.lastScrapeActivity = st.LastActivity
	return settle.Verdict{RetryAfter: p.gap, Waiting: waiting}
}

// verdict returns what the scheduler is still doing, or "" when it is
// idle, and how many pods it has still to attempt.
//
// A scrape is no snapshot: the families are gathered one after the other
// (concurrently), so one scrape may read the queues before a handler moved
// pods and the counts after it recorded its event. So the counts prove the
// events handled only for the scrapes that start after the one that showed
// them (handledVersion remembers it), or for this one if the scheduler's
// process was quiescent before it (quietBefore): no handler ran during it.
func (p *Policy) verdict(s sample, quietBefore bool) (waiting string, queued float64) {
	p.rebase(s)
	counts := p.countsHandledEvents()
	proven := p.handledVersion == p.want.version
	var unhandled string
	if counts && !proven {
		unhandled = p.unhandled(s)
		if unhandled == "" {
			proven = quietBefore
			p.handledVersion = p.want.version // for the next scrapes
		}
	}
	// Pods in the back-off queue that belong to no pod group are about to
	// be popped (or wait out an error's back-off); pod groups there are
	// retried on the scheduler's own clock, which releases replace.
	active, plainBackoff := s.queues["active"], s.plainBackoff()
	if active > 0 || plainBackoff > 0 {
		return fmt.Sprintf("%g pods in its active and backoff queues", active+plainBackoff), active + plainBackoff
	}
	if s.goroutines > 0 {
		return fmt.Sprintf("%g goroutines at work (binding cycles...)", s.goroutines), 0
	}
	if s.asyncCalls > 0 {
		return fmt.Sprintf("%g async API calls pending", s.asyncCalls), 0
	}
	if waiting := p.preempting(s, quietBefore); waiting != "" {
		return waiting, 0
	}
	var held float64
	for q, n := range s.queues {
		if q != "active" {
			held += n
		}
	}
	if want := float64(p.want.unbound); held != want {
		return fmt.Sprintf("%g pods in its queues, %g unbound pods in the cluster (pods in a scheduling cycle or not seen yet)", held, want), max(0, want-held)
	}
	wantGated := p.want.gated
	if p.groupsHandled(s) {
		wantGated += p.want.heldPods()
	}
	if got, want := s.queues["gated"], float64(wantGated); got != want {
		return fmt.Sprintf("%g gated pods, %g with scheduling gates or in held pod groups (a preemption in progress, or pods not in their group yet?)", got, want), 0
	}
	if !counts {
		return "", 0 // the barrier was checked before the scrape
	}
	switch {
	case unhandled != "":
		return unhandled, 0
	case !proven:
		return "checking the queues after the events were handled", 0
	}
	return "", 0
}

// preempting returns what asynchronous preemptions are still doing ("" if
// nothing). kube-scheduler 1.33+ (SchedulerAsyncPreemption) deletes a
// preemption's victims in a goroutine that none of its gauges counts: the
// preemptor is back in a queue, unschedulable, while the victims' PATCH
// and DELETE are still to come. Each preemption observes the victims'
// histogram once as it starts, and each goroutine counts itself in
// scheduler_preemption_goroutines_execution_total as it ends, after its
// last API call: more started than ended is a goroutine at work. But a
// preemption whose victims are all terminating already starts none, and
// leaves the counts apart for good: once the scheduler has been seen
// quiescent with the counts apart for preemptionGrace, the difference is
// taken as such preemptions, and the step is reported as unproven.
func (p *Policy) preempting(s sample, quietBefore bool) string {
	if !s.gates[gateAsyncPreemption] {
		return "" // a synchronous preemption ends within the scheduling cycle
	}
	running := s.preemptions - s.preemptionsDone
	if running < p.preemptBase {
		p.preemptBase = max(running, 0) // one taken for goroutine-less has ended after all
	}
	if running <= p.preemptBase {
		p.preemptQuiet = time.Time{}
		return ""
	}
	if !quietBefore {
		p.preemptQuiet = time.Time{}
	} else if p.preemptQuiet.IsZero() {
		p.preemptQuiet = p.now()
	} else if p.now().Sub(p.preemptQuiet) >= preemptionGrace {
		p.log.Warn("kube-scheduler has started more asynchronous preemptions than it has ended, and is quiescent: taken as preemptions of victims already terminating (they start no goroutine); this step is reported as unproven",
			"started", s.preemptions, "ended", s.preemptionsDone)
		p.preemptBase, p.preemptQuiet = running, time.Time{}
		p.unproven = "asynchronous preemptions started and not seen ending"
		return ""
	}
	return fmt.Sprintf("%g asynchronous preemptions deleting their victims", running-p.preemptBase)
}

// preemptionGrace is how long a quiescent scheduler's unended preemptions
// are waited for before they are taken as goroutine-less.
const preemptionGrace = 100 * time.Millisecond

// unhandled says which expected events the scheduler has not handled yet
// ("" when all are).
func (p *Policy) unhandled(s sample) string {
	for _, event := range sortedKeys(p.want.handled) {
		if strings.HasPrefix(event, "scheduling.k8s.io/PodGroup") && !p.groupsHandled(s) {
			continue // a scheduler without pod groups has no handler for them
		}
		want := p.want.handled[event]
		if got := s.handled[event] + p.offsets[event]; got < want {
			return fmt.Sprintf("%g of %g %s events handled", got, want, event)
		}
	}
	return ""
}

// countsHandledEvents reports whether the scheduler's handled-event counts
// can be trusted as a barrier: read and checked for kube-scheduler 1.37
// (every pod and node handler records its event on the way out). Older
// versions either lack the metric (1.18) or were not checked; a scheduler
// whose version is not known is not trusted.
func (p *Policy) countsHandledEvents() bool {
	major, minor, ok := parseVersion(p.opts.Version())
	return ok && (major > 1 || (major == 1 && minor >= 37))
}

// backoffPoll is how often a scheduler whose pods wait out a real-time
// back-off is looked at.
const backoffPoll = 100 * time.Millisecond

// popsFromBackoff reports whether the scheduler pops pods from its backoff
// queue as soon as the active queue is empty (SchedulerPopFromBackoffQ,
// on by default since 1.33); unknown versions are assumed to.
func (p *Policy) popsFromBackoff() bool {
	major, minor, ok := parseVersion(p.opts.Version())
	return !ok || major > 1 || minor >= 33
}

// parseVersion reads "v1.37.1" (or "1.37").
func parseVersion(v string) (major, minor int, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	var err1, err2 error
	major, err1 = strconv.Atoi(parts[0])
	minor, err2 = strconv.Atoi(strings.TrimSuffix(parts[1], "+"))
	return major, minor, err1 == nil && err2 == nil
}

// rebase notices a restarted scheduler: its counts start again from what
// its first list showed, so the counts it has missed are forgiven.
func (p *Policy) rebase(s sample) {
	if s.started == 0 || s.started == p.started {
		return
	}
	first := p.started == 0
	p.started = s.started
	if first {
		return
	}
	p.log.Warn("kube-scheduler restarted: the step in progress is reported as unproven")
	p.unproven = "kube-scheduler restarted"
	for event, want := range p.want.handled {
		p.offsets[event] = max(0, want-s.handled[event])
	}
}

func (p *Policy) get(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return nil, err
	}
	if p.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.opts.Token)
	}
	resp, err := p.opts.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return data, nil
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, fmt.Errorf("%w (%s: %s): run it with --authentication-kubeconfig and --authorization-kubeconfig set to its kubeconfig, so that it asks Batkube, or with --authorization-always-allow-paths including /metrics",
			ErrRefused, resp.Status, strings.TrimSpace(string(data)))
	}
	return nil, fmt.Errorf("%s: %s", p.opts.MetricsURL, resp.Status)
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
