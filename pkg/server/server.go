// Package server assembles the Batkube API server: the store, the REST
// semantics of pkg/apiserver, discovery and OpenAPI, and the router generated
// by go-swagger.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/utils/clock"

	"github.com/batkube/batkube"
	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/discovery"
	"github.com/batkube/batkube/pkg/endpoint"
	"github.com/batkube/batkube/pkg/metrics"
	"github.com/batkube/batkube/pkg/openapi"
	"github.com/batkube/batkube/pkg/procquiet"
	"github.com/batkube/batkube/pkg/scheme"
	"github.com/batkube/batkube/pkg/store"
	"github.com/batkube/batkube/restapi"
)

// KubernetesVersion is the version of the API Batkube emulates.
var KubernetesVersion = version.Info{
	Major:      "1",
	Minor:      "37",
	GitVersion: "v1.37.1",
	GoVersion:  "go1.26",
	Compiler:   "gc",
	Platform:   "linux/amd64",
}

// Options configure a Server. The zero value of every field is a sensible default.
type Options struct {
	// WatchHistory is the number of past events kept for watches that resume.
	WatchHistory int
	// BearerToken, when set, is required from every client; it stands for an
	// administrator (group system:masters) unless Authenticator knows it.
	BearerToken string
	// Authenticator answers TokenReviews, for the components that delegate
	// the authentication of their own clients to the API server
	// (kube-scheduler's /metrics): apiserver.StaticTokens maps tokens to
	// users. nil: every token but BearerToken is unknown.
	Authenticator apiserver.Authenticator
	// Authorizer answers SubjectAccessReviews, for the same components:
	// apiserver.AllowGroups{apiserver.SystemMasters} allows the
	// administrators only. nil: everything is allowed (Batkube has no RBAC).
	Authorizer apiserver.Authorizer
	// Clock gives object timestamps (simulated time in a simulation).
	Clock clock.PassiveClock
	// Terminator plays the kubelet's part in pod deletion (nil: at once).
	Terminator apiserver.Terminator
	// Admitter may refuse creations (a simulation refuses pods it cannot run).
	Admitter apiserver.Admitter
	// MinWatchTimeout bounds the timeout of watches that ask for none;
	// MaxWatchTimeout, if positive, that of every watch.
	MinWatchTimeout, MaxWatchTimeout time.Duration
	// EventTTL is how long an event is kept after its last write, by the
	// server's clock (0: kube-apiserver's default, an hour; negative: for
	// ever).
	EventTTL time.Duration
	// BookmarkInterval is how often idle watches get a bookmark.
	BookmarkInterval time.Duration
	// Extensions serve paths of Batkube's own outside the Kubernetes API
	// (a simulation's progress and clock), tried after discovery and OpenAPI.
	Extensions []apiserver.NonResourceHandler
	// Metrics is the registry the server's metrics go to, served at
	// /metrics (nil: a registry of its own); NoMetrics turns the request
	// metrics and /metrics off (benchmarks measure their cost against it).
	Metrics   *metrics.Registry
	NoMetrics bool
	Logger    *slog.Logger
	Verbosity int
}

// Server is a ready-to-serve Batkube API server.
type Server struct {
	Store *store.Store
	API   *apiserver.Server
	// Metrics is served at /metrics (nil with Options.NoMetrics).
	Metrics *metrics.Registry
	handler http.Handler
	log     *slog.Logger
	// bytesRead counts the bytes read from clients' connections.
	bytesRead atomic.Uint64
	// addr is the address served, once Serve has begun; listener its
	// socket.
	addr     atomic.Pointer[netip.AddrPort]
	listener atomic.Pointer[syscall.RawConn]
	// readable holds the listener and every connection while the server
	// serves, for Unread's first question (nil: not serving, or the
	// system has no such set); readableIncomplete says that a socket
	// could not be added to it, so that Unread counts every time.
	readable           atomic.Pointer[procquiet.Readable]
	readableIncomplete atomic.Bool
	// conns are the clients' connections, open.
	connsMu sync.Mutex
	conns   map[*countingConn]struct{}
	// diag asks the kernel about the connections' peers (Unsent,
	// PeersUnread), opened at the first question; diagMu serialises them.
	diagMu sync.Mutex
	diag   *procquiet.SocketDiag
	// unproven is sumOverWritten's list of connections to ask about.
	unproven []writtenConn
}

// BytesRead returns the bytes read from clients so far.
func (s *Server) BytesRead() uint64 { return s.bytesRead.Load() }

// Addr returns the TCP address served (invalid before Serve).
func (s *Server) Addr() netip.AddrPort {
	if a := s.addr.Load(); a != nil {
		return *a
	}
	return netip.AddrPort{}
}

// Unread returns the bytes clients have sent that the server has not read
// yet: those waiting in its connections' sockets, and a count of one for
// each connection not accepted yet (package settle/controllers: no request
// is on its way unseen). It asks the kernel about the server's own sockets
// only (procquiet.Unread, procquiet.AcceptQueue). Before Serve, or on a
// listener that is not a socket, it returns an error wrapping
// errors.ErrUnsupported.
//
// It asks first whether any of those sockets has anything to read, in one
// system call (procquiet.Readable), and counts only when one has: the
// barrier asks at every check, and an ioctl a connection was a fifth of
// the server's CPU on a day of Karpenter (120 connections, 350,000
// checks). A sock_diag dump filtered on the port served walks the kernel's
// whole table of TCP connections, and took 1.4 ms on a 24 GiB machine
// where 20 ioctls took 46 µs (2026-11-29).
func (s *Server) Unread() (int, error) {
	l := s.listener.Load()
	if l == nil {
		return 0, fmt.Errorf("server: unread bytes: %w (not serving on a socket)", errors.ErrUnsupported)
	}
	if r := s.readable.Load(); r != nil && !s.readableIncomplete.Load() {
		if readable, err := r.Any(); err == nil && !readable {
			return 0, nil
		}
	}
	// The accept queue first: a connection leaving it is then in conns
	// when they are read (but for the instant between Accept's return and
	// its registration, see countingListener).
	total, err := procquiet.AcceptQueue(*l)
	if err != nil {
		return 0, fmt.Errorf("server: %w", err)
	}
	n, err := s.sumOverConns(procquiet.Unread)
	if err != nil {
		return 0, err
	}
	return total + n, nil
}

// Unsent returns the bytes the server wrote to its clients' connections
// that have not reached their sockets yet (procquiet's
// SocketDiag.Undelivered): with none, every client's kernel has received
// all the server sent it. A connection not written to since it was last
// found delivered is not asked about again.
func (s *Server) Unsent() (int, error) {
	return s.sumOverWritten(func(c *countingConn) *atomic.Uint64 { return &c.deliveredAt },
		func(d *procquiet.SocketDiag, c *countingConn) (int, error) {
			return d.Undelivered(procquiet.OwnConnection{Connection: c.addrs, Raw: c.raw})
		})
}

// PeersUnread returns the bytes the server sent that its clients on this
// machine hold unread in their sockets (procquiet's SocketDiag.PeerUnread).
// A connection not written to since its peer was last found to have read
// everything is not asked about again: only the server's writes fill its
// peer's receive queue.
func (s *Server) PeersUnread() (int, error) {
	return s.sumOverWritten(func(c *countingConn) *atomic.Uint64 { return &c.peerReadAt },
		func(d *procquiet.SocketDiag, c *countingConn) (int, error) { return d.PeerUnread(c.addrs) })
}

// sumOverWritten sums count over the open connections written to since
// their proof (the count of bytes written when count last found none),
// and records the new proofs.
func (s *Server) sumOverWritten(proof func(*countingConn) *atomic.Uint64, count func(*procquiet.SocketDiag, *countingConn) (int, error)) (int, error) {
	s.diagMu.Lock()
	defer s.diagMu.Unlock()
	s.unproven = s.writtenSince(proof, s.unproven[:0])
	defer clear(s.unproven)
	total := 0
	for _, w := range s.unproven {
		if s.diag == nil {
			d, err := procquiet.NewSocketDiag()
			if err != nil {
				return 0, fmt.Errorf("server: %w", err)
			}
			s.diag = d
		}
		n, err := count(s.diag, w.conn)
		if err != nil {
			if w.conn.closed.Load() {
				continue // its bytes are no one's to wait for
			}
			return 0, fmt.Errorf("server: %w", err)
		}
		if n == 0 {
			proof(w.conn).Store(w.written)
		}
		total += n
	}
	return total, nil
}

// writtenConn is a connection and the bytes written to it, counted before
// the kernel is asked about it.
type writtenConn struct {
	conn    *countingConn
	written uint64
}

// writtenSince appends to out the open connections with TCP addresses
// written to since their proof.
func (s *Server) writtenSince(proof func(*countingConn) *atomic.Uint64, out []writtenConn) []writtenConn {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	for c := range s.conns {
		if c.closed.Load() || !c.hasAddrs {
			continue
		}
		if written := c.written.Load(); proof(c).Load() != written {
			out = append(out, writtenConn{conn: c, written: written})
		}
	}
	return out
}

// watchReadable makes the set of sockets Unread asks first, with the
// listener in it; the connections join it as they are accepted. Without
// it (another system), Unread counts every time.
func (s *Server) watchReadable(listener syscall.RawConn) {
	r, err := procquiet.NewReadable()
	if err != nil {
		return
	}
	if err := r.Add(listener); err != nil {
		_ = r.Close()
		return
	}
	s.readableIncomplete.Store(false)
	s.readable.Store(r)
}

// closeReadable closes Unread's set of sockets, if open.
func (s *Server) closeReadable() {
	if r := s.readable.Swap(nil); r != nil {
		_ = r.Close()
	}
}

// closeDiag closes the netlink socket of Unsent and PeersUnread, if open.
func (s *Server) closeDiag() {
	s.diagMu.Lock()
	defer s.diagMu.Unlock()
	if s.diag != nil {
		_ = s.diag.Close()
		s.diag = nil
	}
}

// sumOverConns sums a count of bytes over the open connections (a
// connection closed meanwhile counts none).
func (s *Server) sumOverConns(count func(syscall.RawConn) (int, error)) (int, error) {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	total := 0
	for c := range s.conns {
		n, err := count(c.raw)
		if err != nil {
			if c.closed.Load() {
				continue
			}
			return 0, fmt.Errorf("server: %w", err)
		}
		total += n
	}
	return total, nil
}

// countingListener counts the bytes read from the connections it accepts,
// and keeps them in the server's conns while they are open.
type countingListener struct {
	net.Listener
	s *Server
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &countingConn{Conn: c, s: l.s}
	local, lok := c.LocalAddr().(*net.TCPAddr)
	remote, rok := c.RemoteAddr().(*net.TCPAddr)
	if lok && rok {
		cc.addrs, cc.hasAddrs = procquiet.Connection{Local: local.AddrPort(), Remote: remote.AddrPort()}, true
	}
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			cc.raw = raw
			if r := l.s.readable.Load(); r != nil && r.Add(raw) != nil {
				l.s.readableIncomplete.Store(true)
			}
			l.s.connsMu.Lock()
			l.s.conns[cc] = struct{}{}
			l.s.connsMu.Unlock()
		}
	}
	return cc, nil
}

type countingConn struct {
	net.Conn
	s      *Server
	raw    syscall.RawConn
	closed atomic.Bool
	// addrs are the connection's TCP addresses (hasAddrs: it has some),
	// for the questions about its peer (Unsent, PeersUnread).
	addrs    procquiet.Connection
	hasAddrs bool
	// written counts the bytes written to the connection; deliveredAt
	// and peerReadAt are its value when they were last all found
	// received by the peer's socket, and read by the peer (Unsent,
	// PeersUnread).
	written                 atomic.Uint64
	deliveredAt, peerReadAt atomic.Uint64
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.written.Add(uint64(n))
	return n, err
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.s.bytesRead.Add(uint64(n))
	return n, err
}

func (c *countingConn) Close() error {
	if c.closed.CompareAndSwap(false, true) && c.raw != nil {
		c.s.connsMu.Lock()
		delete(c.s.conns, c)
		c.s.connsMu.Unlock()
	}
	return c.Conn.Close()
}

// New builds a Server.
func New(opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	sch, err := scheme.New()
	if err != nil {
		return nil, err
	}
	// The store asks the API server for the fields of custom objects; it
	// stores built-in objects only until the server exists.
	var api *apiserver.Server
	st := store.New(store.Options{HistorySize: opts.WatchHistory, Fields: func(gr schema.GroupResource, obj runtime.Object, add func(string, string)) {
		api.StoreFields(gr, obj, add)
	}})
	disc, err := discovery.NewDynamic(restapi.Operations, KubernetesVersion)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	oapi, err := openapi.New(batkube.SwaggerJSON)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	nonResource := append(apiserver.NonResourceHandlers{disc, oapi}, opts.Extensions...)
	var requestMetrics *metrics.APIServer
	if !opts.NoMetrics {
		if opts.Metrics == nil {
			opts.Metrics = metrics.NewRegistry()
		}
		if requestMetrics, err = metrics.NewAPIServer(opts.Metrics, restapi.Operations); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		nonResource = append(nonResource, opts.Metrics)
	} else {
		opts.Metrics = nil
	}
	api, err = apiserver.New(apiserver.Options{
		Store:            st,
		Scheme:           sch,
		Operations:       restapi.Operations,
		OpenAPISpec:      batkube.SwaggerJSON,
		NonResource:      nonResource,
		Metrics:          requestMetrics,
		Clock:            opts.Clock,
		Terminator:       opts.Terminator,
		Admitter:         opts.Admitter,
		BearerToken:      opts.BearerToken,
		Authenticator:    opts.Authenticator,
		Authorizer:       opts.Authorizer,
		Logger:           opts.Logger,
		Verbosity:        opts.Verbosity,
		MinWatchTimeout:  opts.MinWatchTimeout,
		MaxWatchTimeout:  opts.MaxWatchTimeout,
		EventTTL:         opts.EventTTL,
		BookmarkInterval: opts.BookmarkInterval,
		OnCustomResources: func(ops []endpoint.Operation, facts []apiserver.CustomResourceFacts) {
			extras := map[schema.GroupResource]discovery.Extras{}
			for _, f := range facts {
				extras[f.GVR.GroupResource()] = discovery.Extras{Singular: f.Singular, ShortNames: f.ShortNames, Categories: f.Categories}
			}
			if err := disc.SetExtra(ops, extras); err != nil {
				opts.Logger.Error("discovery of the custom resources", "err", err)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	handler, err := restapi.Configure(api)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return &Server{Store: st, API: api, Metrics: opts.Metrics, handler: handler, log: opts.Logger, conns: map[*countingConn]struct{}{}}, nil
}

// Handler returns the HTTP handler of the whole API.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves the API on l until ctx is cancelled, then shuts down:
// watches send the events written so far and end (so clients see the last
// changes), other requests get a few seconds to finish.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	// Requests outlive ctx until the shutdown is done with them.
	reqCtx, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	if ap, err := netip.ParseAddrPort(l.Addr().String()); err == nil {
		s.addr.Store(&ap)
	}
	if sc, ok := l.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			s.listener.Store(&raw)
			s.watchReadable(raw)
			defer s.closeReadable()
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(countingListener{Listener: l, s: s}) }()
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	s.Store.Close()
	defer s.closeDiag()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	cancelRequests()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("server: shutting down: %w", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}
