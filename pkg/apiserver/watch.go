package apiserver

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/batkube/batkube/pkg/store"
)

// watchDeprecated serves the /watch/ paths of the spec.
func (q *request) watchDeprecated(w http.ResponseWriter) {
	opts, sel, err := q.listOptions()
	if err != nil {
		q.fail(w, err)
		return
	}
	q.watch(w, opts, sel)
}

// watch streams the changes of a collection (see the API concepts: the
// resourceVersion semantics of watch, and the watch-list protocol).
func (q *request) watch(w http.ResponseWriter, opts *metav1.ListOptions, sel store.Selection) {
	s := q.server
	q.metrics.Watching()
	sendInitial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if opts.SendInitialEvents != nil {
		if opts.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
			q.fail(w, newUnprocessable(q.res, "", "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
			return
		}
		if sendInitial && !opts.AllowWatchBookmarks {
			q.fail(w, newUnprocessable(q.res, "", "allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true"))
			return
		}
	} else if opts.ResourceVersionMatch != "" {
		q.fail(w, newUnprocessable(q.res, "", "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		return
	}
	wo := store.WatchOptions{Selection: sel}
	switch rv := opts.ResourceVersion; {
	case sendInitial, rv == "", rv == "0":
		wo.SendInitialEvents = true
	default:
		n, err := strconv.ParseUint(rv, 10, 64)
		if err != nil {
			q.fail(w, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv)))
			return
		}
		wo.ResourceVersion = n
	}
	if opts.AllowWatchBookmarks {
		wo.BookmarkInterval = s.opts.BookmarkInterval
	}
	timeout := s.watchTimeout()
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	if limit := s.opts.MaxWatchTimeout; limit > 0 {
		timeout = min(timeout, limit)
	}
	// The watch ends at its timeout; one that allows bookmarks gets one
	// first, at the resourceVersion it has reached (as kube-apiserver
	// sends one before a watch's deadline), so that its client resumes
	// from there, and client-go does not take a short watch without events
	// for a failure to back off from.
	ctx, cancel := context.WithCancel(q.http.Context())
	defer cancel()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()

	f := q.format
	if f.media == mediaYAML {
		f.media = mediaJSON
	}
	enc := &watchEncoder{server: s, res: q.res, format: f, req: q.http, firstTable: true}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a watch outlives the server's write timeout
	contentType := f.media
	if f.media == mediaProtobuf {
		contentType += ";stream=watch"
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	out := bufio.NewWriterSize(w, 32<<10)
	flush := func() bool {
		if out.Flush() != nil {
			return false
		}
		return rc.Flush() == nil
	}

	watcher, err := s.store.Watch(ctx, q.res.storage, wo)
	if err != nil {
		_ = enc.writeError(out, err)
		flush()
		return
	}
	defer watcher.Stop()
	agent := q.http.UserAgent()
	s.countWatch(q.res.storage, agent, 1, watcher.Start())
	defer s.countWatch(q.res.storage, agent, -1, 0)
	live := &liveWatch{watcher: watcher, gr: q.res.storage, agent: agent}
	s.trackWatch(live, true)
	defer s.trackWatch(live, false)
	var sent uint64 // events written to the connection
	instruments := q.metrics.WatchOpened()
	defer func() { instruments.Close(sent) }()
	if !flush() {
		return
	}
	events := watcher.Events()
	var received uint64 // events taken from the watcher
	var lastRV uint64   // of the latest event written
	for {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			if opts.AllowWatchBookmarks {
				s.endWithBookmark(out, enc, watcher, events, lastRV)
				flush()
			}
			return
		case ev, ok := <-events:
			if !ok {
				if err := watcher.Err(); err != nil && ctx.Err() == nil {
					_ = enc.writeError(out, err)
					flush()
				}
				return
			}
			received++
			skip := (ev.Type == watch.Bookmark && !opts.AllowWatchBookmarks) ||
				(ev.Type == watch.Bookmark && ev.InitialEventsEnd && !sendInitial)
			if !skip {
				if err := enc.write(out, ev); err != nil {
					s.log.Error("watch: encoding an event", "resource", q.res.gvr, "err", err)
					return
				}
				sent++
				lastRV = max(lastRV, ev.RV)
				if ev.Type == watch.Error {
					flush()
					return
				}
			}
			if len(events) == 0 {
				// The store's watcher may be handing over the next event of
				// the same burst of writes: let it, so that one write to the
				// connection carries them all.
				runtime.Gosched()
			}
			if len(events) == 0 {
				instruments.Sent(sent) // before the client can read them
				if !flush() {
					return
				}
				live.flushed.Store(received)
			}
		}
	}
}

// endWithBookmark writes what the watcher has handed over so far, then a
// bookmark at the resourceVersion that covers it.
func (s *Server) endWithBookmark(out *bufio.Writer, enc *watchEncoder, watcher *store.Watcher, events <-chan store.Event, lastRV uint64) {
	rv, _ := watcher.Progress() // every event up to rv is in events or written
	for {
		select {
		case ev, ok := <-events:
			if !ok || ev.Type == watch.Error {
				return
			}
			if ev.Type != watch.Bookmark {
				if err := enc.write(out, ev); err != nil {
					return
				}
			}
			lastRV = max(lastRV, ev.RV)
			continue
		default:
		}
		break
	}
	if rv = max(rv, lastRV); rv > 0 {
		_ = enc.write(out, store.Event{Type: watch.Bookmark, RV: rv})
	}
}

// liveWatch is an open watch as WatchesDelivered sees it.
type liveWatch struct {
	watcher *store.Watcher
	gr      schema.GroupResource
	agent   string // the client's User-Agent, for messages
	// flushed counts the events taken from the watcher and written to the
	// connection (or skipped), flushed.
	flushed atomic.Uint64
}

func (s *Server) trackWatch(w *liveWatch, open bool) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if open {
		s.live[w] = struct{}{}
	} else {
		delete(s.live, w)
	}
}

// WatchesDelivered reports whether every open watch has written to its
// connection, and flushed, every event of the writes made so far: what a
// client has been sent is then all in its socket (or on its way through
// the kernel), and a client that has stopped running has handled it. It
// is false while a client that has acted as a scheduler has no open watch
// on pods, or on nodes if it has watched them: between two watches
// (client-go ends and reopens them every few minutes) what happens is not
// on its way to it at all.
func (s *Server) WatchesDelivered() bool { return s.UndeliveredWatch() == "" }

// UndeliveredWatch says why WatchesDelivered is false ("" when it is
// true): the first watch found that has not delivered everything, or the
// scheduler without its watch.
func (s *Server) UndeliveredWatch() string {
	s.watchMu.Lock()
	for agent := range s.schedulers {
		pods, nodes := clientWatch{podsResource.GroupResource(), agent}, clientWatch{nodesResource.GroupResource(), agent}
		if s.byClient[pods] == 0 || s.everWatched[nodes] && s.byClient[nodes] == 0 {
			s.watchMu.Unlock()
			return fmt.Sprintf("the scheduler %q has no open watch on pods (or nodes)", agent)
		}
	}
	live := make([]*liveWatch, 0, len(s.live))
	for w := range s.live {
		live = append(live, w)
	}
	s.watchMu.Unlock()
	for _, w := range live {
		delivered, sent := w.watcher.Progress()
		if latest := s.store.LatestRV(w.gr); delivered < latest || w.flushed.Load() != sent {
			return fmt.Sprintf("a watch on %s by %q: delivered up to %d of %d, %d of %d events flushed", w.gr, w.agent, delivered, latest, w.flushed.Load(), sent)
		}
	}
	return ""
}

// watchEncoder writes watch events in the negotiated framing: JSON objects
// one per line, or length-prefixed protobuf WatchEvents.
type watchEncoder struct {
	server     *Server
	res        *resource
	format     format
	req        *http.Request
	firstTable bool
}

func (e *watchEncoder) write(out *bufio.Writer, ev store.Event) error {
	var (
		doc document
		err error
	)
	switch {
	case ev.Type == watch.Error:
		return e.writeError(out, ev.Err)
	case ev.Type == watch.Bookmark:
		doc.body, err = e.bookmark(ev)
	case e.format.shape != shapeObject:
		doc.body, err = e.shaped(ev.Object)
	default:
		doc, err = e.server.storedDocument(e.res, ev.Object, e.format.media)
	}
	if err != nil {
		return err
	}
	return e.frame(out, string(ev.Type), doc)
}

// frame writes one event around an encoded object.
func (e *watchEncoder) frame(out *bufio.Writer, typ string, obj document) error {
	if e.format.media == mediaProtobuf {
		_, _ = out.Write(watchEventFrameHead(typ, obj.len()))
		return obj.writeTo(out)
	}
	_, _ = out.WriteString(`{"type":"`)
	_, _ = out.WriteString(typ)
	_, _ = out.WriteString(`","object":`)
	if n := len(obj.body); n > 0 && obj.body[n-1] == '\n' {
		obj.body = obj.body[:n-1]
	}
	_ = obj.writeTo(out)
	_, err := out.WriteString("}\n")
	return err
}

// encode encodes a whole object in the stream's media type.
func (e *watchEncoder) encode(obj k8sruntime.Object) ([]byte, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if e.format.media == mediaProtobuf {
		raw, err := encodeProtoRaw(obj)
		if err != nil {
			return nil, err
		}
		return encodeProto(gvk, raw), nil
	}
	return encodeJSON(obj)
}

// bookmark encodes the empty object that carries a bookmark's resourceVersion.
func (e *watchEncoder) bookmark(ev store.Event) ([]byte, error) {
	obj, err := e.res.newObject()
	if err != nil {
		return nil, err
	}
	obj.SetResourceVersion(strconv.FormatUint(ev.RV, 10))
	if ev.InitialEventsEnd {
		obj.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	if e.format.shape == shapeMetadata {
		pm, _, err := partialMetadata(obj)
		if err != nil {
			return nil, err
		}
		return e.encode(pm)
	}
	return e.encode(obj)
}

// shaped encodes an object as a one-row Table or as metadata.
func (e *watchEncoder) shaped(st *store.Stored) ([]byte, error) {
	if e.format.shape == shapeMetadata {
		// An object's metadata is the same at every version it is served
		// at: read from the stored object (never changed once stored)
		// rather than from a copy converted to the served version.
		pm, _, err := partialMetadata(st.Object())
		if err != nil {
			return nil, err
		}
		return e.encode(pm)
	}
	obj, err := e.server.servedObject(e.res, st)
	if err != nil {
		return nil, err
	}
	t, err := e.res.tableOf(obj, includeObject(e.req), e.server.clock.Now())
	if err != nil {
		return nil, err
	}
	if !e.firstTable {
		t.ColumnDefinitions = nil
	}
	e.firstTable = false
	return e.encode(t)
}

func (e *watchEncoder) writeError(out *bufio.Writer, err error) error {
	st := statusOf(err)
	st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	b, encErr := e.encode(st)
	if encErr != nil {
		return encErr
	}
	return e.frame(out, string(watch.Error), document{body: b})
}

// watchEventFrameHead returns what precedes an object of n bytes in a
// protobuf watch stream: the 4-byte frame length, then a metav1.WatchEvent
// message (type = field 1, object = field 2, a RawExtension whose raw bytes
// are its field 1) up to the object's bytes. The object, shared by every
// watcher, is then written as is instead of being copied into each
// watcher's message.
func watchEventFrameHead(typ string, n int) []byte {
	rawExt := len(appendTag(nil, 1, n)) + n
	head := appendTag(nil, 1, len(typ))
	head = append(head, typ...)
	head = appendTag(head, 2, rawExt)
	head = appendTag(head, 1, n)
	frame := make([]byte, 4, 4+len(head))
	binary.BigEndian.PutUint32(frame, uint32(len(head)+n))
	return append(frame, head...)
}
