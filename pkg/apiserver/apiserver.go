// Package apiserver implements the Kubernetes REST semantics behind the
// generated go-swagger server: every operation of the spec lands in Serve,
// which acts on the store and answers as a real kube-apiserver would.
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/batkube/batkube/pkg/admission"
	"github.com/batkube/batkube/pkg/apply"
	"github.com/batkube/batkube/pkg/endpoint"
	"github.com/batkube/batkube/pkg/metrics"
	"github.com/batkube/batkube/pkg/openapi"
	"github.com/batkube/batkube/pkg/store"
)

// Options configure a Server.
type Options struct {
	// Store holds the objects; required.
	Store *store.Store
	// Scheme knows every served Go type; required.
	Scheme *k8sruntime.Scheme
	// Operations is the catalogue of the spec's operations; required.
	Operations []endpoint.Operation
	// NonResource serves the paths outside the resource operations
	// (discovery, /version, /openapi): it answers false when it does not
	// handle a path.
	NonResource NonResourceHandler
	// Clock gives object timestamps (simulated time in a simulation).
	Clock clock.PassiveClock
	// Terminator decides when a terminating pod bound to a node is removed
	// (the kubelet's part); nil removes it at once.
	Terminator Terminator
	// Admitter, when set, may refuse the creations clients send.
	Admitter Admitter
	// BearerToken, when set, is required in every request's Authorization
	// header. It stands for an administrator (group system:masters) unless
	// the Authenticator knows it.
	BearerToken string
	// Authenticator answers TokenReviews and identifies the senders of
	// self-reviews by their bearer tokens. nil: every token but BearerToken
	// is unknown.
	Authenticator Authenticator
	// Authorizer answers access reviews. nil: everything is allowed
	// (Batkube has no RBAC).
	Authorizer Authorizer
	// Logger receives request logs at Verbosity >= 2 and errors always.
	Logger    *slog.Logger
	Verbosity int
	// MinWatchTimeout is the lower bound of the random timeout of a watch
	// that asks for none (the real default is 30 minutes).
	MinWatchTimeout time.Duration
	// MaxWatchTimeout, if positive, ends every watch after at most this
	// long, whatever timeout it asked for: clients then re-watch often
	// (for tests of what happens while their informers reconnect).
	MaxWatchTimeout time.Duration
	// BookmarkInterval is how often an idle watch that allows bookmarks gets one.
	BookmarkInterval time.Duration
	// Metrics, when set, counts and times the requests and the open
	// watches (kube-apiserver's apiserver_* metrics).
	Metrics *metrics.APIServer
	// EventTTL is how long an event is kept after its last write, by
	// Clock (0: DefaultEventTTL; negative: for ever).
	EventTTL time.Duration
	// OpenAPISpec is the Swagger 2.0 spec of the served kinds: the types
	// (for server-side apply and managed fields) of the group versions
	// served to old clients only (events.k8s.io/v1beta1, policy/v1beta1),
	// which have no OpenAPI v3 document; required.
	OpenAPISpec []byte
	// OnCustomResources, if set, is told the operations and facts of the
	// custom resources served whenever they change (discovery serves
	// them).
	OnCustomResources func([]endpoint.Operation, []CustomResourceFacts)
}

// NonResourceHandler serves discovery and the other paths outside the spec's
// resource operations.
type NonResourceHandler interface {
	// Handles reports whether the handler serves path.
	Handles(path string) bool
	http.Handler
}

// Terminator plays the kubelet's part in the deletion of a pod that is bound
// to a node: it is told the pod is terminating and removes it when it is done.
type Terminator interface {
	PodTerminating(pod *corev1.Pod)
}

// Admitter decides whether a client may create an object (admission
// control). A simulation uses it to refuse pods it cannot turn into jobs.
type Admitter interface {
	AdmitCreate(gvr schema.GroupVersionResource, obj k8sruntime.Object) error
}

// Server implements endpoint.Handler.
type Server struct {
	opts Options
	// requestsInFlight and requestsFinished count the requests other
	// than watches (RequestCounts).
	requestsInFlight atomic.Int64
	requestsFinished atomic.Uint64
	store            *store.Store
	catalog          *catalog
	scheme           *k8sruntime.Scheme
	protobuf         *protobuf.Serializer
	params           k8sruntime.ParameterCodec
	clock            clock.PassiveClock
	log              *slog.Logger

	// Liveness of the clients, for a simulation that must know whether its
	// scheduler still runs: open watches per storage and per client
	// (User-Agent), and the clients that acted as schedulers.
	watchMu    sync.Mutex
	watchers   map[schema.GroupResource]int
	byClient   map[clientWatch]int
	schedulers map[string]bool
	// everWatched holds the resources each client has watched at least
	// once (WatchesDelivered); firstWatch the resourceVersion its first
	// watch of each started from (WatchStart).
	everWatched map[clientWatch]bool
	firstWatch  map[clientWatch]uint64
	// live holds the open HTTP watches (WatchesDelivered).
	live map[*liveWatch]struct{}

	randMu sync.Mutex
	rand   *rand.Rand

	// fast serves the hot operations without the generated router;
	// fastServed counts the requests it served.
	fast       *fastPaths
	fastServed atomic.Uint64
	// events expires events (nil: kept for ever).
	events *eventExpiry
	// custom are the custom resources served; customMu orders their
	// changes.
	custom   atomic.Pointer[customSet]
	customMu sync.Mutex
	// compiled are the definitions' compiled versions, kept while what
	// they are compiled from is unchanged (compiledKey), under customMu.
	compiled map[types.UID]compiledDefinition
	// webhooks are the admission webhooks of the stored configurations;
	// webhooksMu orders their recompilations (a list of the configurations
	// and its compilation stored together).
	webhooks   atomic.Pointer[admission.Webhooks]
	webhooksMu sync.Mutex
	// webhookClients are their HTTP clients, whose connections outlive a
	// recompilation.
	webhookClients admission.Clients
	// apply keeps managed fields and merges applied configurations.
	apply *apply.Manager
}

var _ endpoint.Handler = (*Server)(nil)

// SystemNamespaces exist from the start, like on a new cluster.
var SystemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

// New builds a Server and creates the system namespaces.
func New(opts Options) (*Server, error) {
	if opts.Store == nil || opts.Scheme == nil || len(opts.Operations) == 0 || len(opts.OpenAPISpec) == 0 {
		return nil, errors.New("apiserver: Store, Scheme, Operations and OpenAPISpec are required")
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MinWatchTimeout <= 0 {
		opts.MinWatchTimeout = 30 * time.Minute
	}
	if opts.BookmarkInterval <= 0 {
		opts.BookmarkInterval = time.Minute
	}
	cat, err := newCatalog(opts.Operations, opts.Scheme)
	if err != nil {
		return nil, fmt.Errorf("apiserver: %w", err)
	}
	s := &Server{
		opts:        opts,
		store:       opts.Store,
		catalog:     cat,
		scheme:      opts.Scheme,
		protobuf:    protobuf.NewSerializer(opts.Scheme, opts.Scheme),
		params:      k8sruntime.NewParameterCodec(opts.Scheme),
		clock:       opts.Clock,
		log:         opts.Logger,
		rand:        rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		watchers:    map[schema.GroupResource]int{},
		byClient:    map[clientWatch]int{},
		everWatched: map[clientWatch]bool{},
		firstWatch:  map[clientWatch]uint64{},
		schedulers:  map[string]bool{},
		live:        map[*liveWatch]struct{}{},
		apply:       apply.New(openapi.V3Document, opts.OpenAPISpec, opts.Scheme),
	}
	if opts.EventTTL == 0 {
		opts.EventTTL = DefaultEventTTL
	}
	if opts.EventTTL > 0 {
		s.events = newEventExpiry(opts.Store, opts.EventTTL)
	}
	if s.fast, err = newFastPaths(opts.Operations, opts.Scheme); err != nil {
		return nil, fmt.Errorf("apiserver: %w", err)
	}
	if err := s.createSystemNamespaces(context.Background()); err != nil {
		return nil, fmt.Errorf("apiserver: %w", err)
	}
	if err := s.createAuthenticationConfigMap(context.Background()); err != nil {
		return nil, fmt.Errorf("apiserver: %w", err)
	}
	return s, nil
}

func (s *Server) createSystemNamespaces(ctx context.Context) error {
	r, ok := s.catalog.byGVR[corev1.SchemeGroupVersion.WithResource("namespaces")]
	if !ok {
		return errors.New("the spec serves no namespaces")
	}
	for _, name := range SystemNamespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := s.create(ctx, r, ns, false); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	return nil
}

// Serve answers one operation routed by the generated server.
func (s *Server) Serve(op *endpoint.Operation, args endpoint.Args) middleware.Responder {
	if op.Verb == endpoint.NonResource {
		return middleware.ResponderFunc(func(w http.ResponseWriter, _ runtime.Producer) {
			if s.opts.NonResource != nil && s.opts.NonResource.Handles(args.Request.URL.Path) {
				s.opts.NonResource.ServeHTTP(w, args.Request)
				return
			}
			s.writeError(w, args.Request, apierrors.NewNotFound(schema.GroupResource{}, ""))
		})
	}
	r, ok := s.resource(schema.GroupVersionResource{Group: op.Group, Version: op.Version, Resource: op.Resource})
	if !ok {
		return s.errorResponder(args.Request, apierrors.NewNotFound(schema.GroupResource{Group: op.Group, Resource: op.Resource}, args.Name))
	}
	req := &request{server: s, op: op, res: r, args: args, http: args.Request}
	return middleware.ResponderFunc(func(w http.ResponseWriter, _ runtime.Producer) {
		if s.opts.Metrics != nil {
			req.metrics = metrics.RequestOf(w)
			req.metrics.Route(op)
		}
		req.serve(w)
	})
}

func (s *Server) errorResponder(r *http.Request, err error) middleware.Responder {
	return middleware.ResponderFunc(func(w http.ResponseWriter, _ runtime.Producer) {
		s.writeError(w, r, err)
	})
}

// randomSuffix returns the 5 characters appended to a generateName.
func (s *Server) randomSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	s.randMu.Lock()
	defer s.randMu.Unlock()
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[s.rand.IntN(len(alphabet))]
	}
	return string(b)
}

// watchTimeout returns the timeout of a watch that asks for none: a random
// duration between MinWatchTimeout and twice that, so that clients spread
// their re-lists, as the real server does.
func (s *Server) watchTimeout() time.Duration {
	s.randMu.Lock()
	defer s.randMu.Unlock()
	min := s.opts.MinWatchTimeout
	return min + time.Duration(s.rand.Int64N(int64(min)))
}

// Create stores an object as a client's POST would (defaults, generated
// metadata, validation) but without admission: the simulation's own objects.
func (s *Server) Create(ctx context.Context, gvr schema.GroupVersionResource, obj store.Object) (*store.Stored, error) {
	r, ok := s.resource(gvr)
	if !ok {
		return nil, fmt.Errorf("apiserver: %s is not served", gvr)
	}
	return s.create(ctx, r, obj, false)
}

// ActiveWatches returns the number of open HTTP watches on a resource.
func (s *Server) ActiveWatches(gr schema.GroupResource) int {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	return s.watchers[gr]
}

// SchedulerWatching reports whether a client that has acted as a scheduler
// (bound a pod, or written a pod's status) holds an open watch on pods:
// a scheduler that runs keeps one, and its watches close when it dies,
// whatever other clients (kubectl get -w, a monitoring tool) watch. Clients
// are told apart by User-Agent.
func (s *Server) SchedulerWatching() bool {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	for agent := range s.schedulers {
		if s.byClient[clientWatch{podsResource.GroupResource(), agent}] > 0 {
			return true
		}
	}
	return false
}

// AgentVersion returns the version a client named product states in its
// User-Agent ("kube-scheduler/v1.37.1 (linux/amd64) ..." → "v1.37.1"),
// the lowest when several clients of that product watch or have acted as
// schedulers; "" when none has been seen.
func (s *Server) AgentVersion(product string) string {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	best := ""
	consider := func(agent string) {
		v, ok := strings.CutPrefix(agent, product+"/")
		if !ok {
			return
		}
		v, _, _ = strings.Cut(v, " ")
		if best == "" || versionLess(v, best) {
			best = v
		}
	}
	for agent := range s.schedulers {
		consider(agent)
	}
	for k := range s.byClient {
		consider(k.agent)
	}
	return best
}

// versionLess orders "v1.18.19" before "v1.37.1" (numbers compared as
// numbers; what does not parse sorts first).
func versionLess(a, b string) bool {
	pa, pb := versionParts(a), versionParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func versionParts(v string) [3]int {
	var out [3]int
	v, _, _ = strings.Cut(strings.TrimPrefix(v, "v"), "-")
	for i, f := range strings.SplitN(v, ".", 3) {
		out[i], _ = strconv.Atoi(f)
	}
	return out
}

// clientWatch counts the watches of one client on one resource.
type clientWatch struct {
	gr    schema.GroupResource
	agent string
}

func (s *Server) countWatch(gr schema.GroupResource, agent string, delta int, start uint64) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	s.watchers[gr] += delta
	k := clientWatch{gr, agent}
	if !s.everWatched[k] {
		s.firstWatch[k] = start
	}
	s.everWatched[k] = true
	if s.byClient[k] += delta; s.byClient[k] <= 0 {
		delete(s.byClient, k)
	}
}

// WatchStart is the resourceVersion from which the first watch of gr by a
// client named product (User-Agent "product/version ...") started: its
// informer knows the changes up to it only folded into the state it listed
// (a node tainted before the list is a node added, tainted), the later
// ones as events. ok is false while no such client has watched gr; with
// several, the earliest start.
func (s *Server) WatchStart(gr schema.GroupResource, product string) (rv uint64, ok bool) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	for k, start := range s.firstWatch {
		if k.gr == gr && strings.HasPrefix(k.agent, product+"/") && (!ok || start < rv) {
			rv, ok = start, true
		}
	}
	return rv, ok
}

// actedAsScheduler records a client that bound a pod or wrote its status.
func (s *Server) actedAsScheduler(agent string) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	s.schedulers[agent] = true
}

// stamp is the metadata timestamp d after now, in whole seconds, as
// kube-apiserver's objects hold them: metav1.Time is stored and served
// (JSON and protobuf alike) to the second, so an object that a client read
// and sends back would otherwise differ from the stored one in its
// creationTimestamp, which validation holds immutable.
func (s *Server) stamp(d time.Duration) metav1.Time {
	return metav1.NewTime(s.clock.Now().Add(d).Truncate(time.Second))
}
