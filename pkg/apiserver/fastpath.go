package apiserver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/endpoint"
)

// hotOperations are the operations a scheduler sends for every pod it
// places or fails to place (bindings, events, the pod's status, its leader
// lease): Wrap serves them on a fast path that goes straight to Serve,
// without the generated router's per-request work (route matching, media
// type negotiation and parameter binding through go-openapi, a copy of the
// request's headers). The generated router stays the front door for
// everything else, and for these operations whenever a request is anything
// but plain (see fastRoute.match): the fast path answers exactly what the
// router would, which TestFastPathAnswersAsTheRouter checks.
var hotOperations = []string{
	"createCoreV1NamespacedPodBinding",
	"patchCoreV1NamespacedPodStatus",
	"replaceCoreV1NamespacedPodStatus",
	"createEventsV1NamespacedEvent",
	"patchEventsV1NamespacedEvent",
	"createCoreV1NamespacedEvent",
	"patchCoreV1NamespacedEvent",
	"readCoordinationV1NamespacedLease",
	"replaceCoordinationV1NamespacedLease",
}

// fastQueryKeys are the query parameters a fast-path request may carry:
// the string parameters of the hot operations, which the generated binder
// cannot refuse, and client-go's undeclared timeout, which it ignores. A
// request with any other parameter (force, which must parse as a boolean;
// an unknown one) takes the generated router.
var fastQueryKeys = map[string]bool{"dryRun": true, "fieldManager": true, "fieldValidation": true, "pretty": true, "timeout": true}

// fastRoute is a hot operation as the fast path matches it.
type fastRoute struct {
	op *endpoint.Operation
	// segments is the operation's path template split at '/', with ""
	// where the template has {namespace} or {name}.
	segments []string
	// namespaceAt and nameAt are the indexes of those parameters (-1: none).
	namespaceAt, nameAt int
	// newBody returns an empty body of the operation's kind (nil: the
	// operation takes no body; a patch takes its raw bytes).
	newBody func() (any, error)
	// media are the body media types the fast path decodes (others take
	// the generated router, which knows every media type of the spec).
	media []string
}

// fastPaths finds the hot operations' routes by method.
type fastPaths struct {
	byMethod map[string][]*fastRoute
}

func newFastPaths(ops []endpoint.Operation, scheme *k8sruntime.Scheme) (*fastPaths, error) {
	fp := &fastPaths{byMethod: map[string][]*fastRoute{}}
	for _, id := range hotOperations {
		var op *endpoint.Operation
		for i := range ops {
			if ops[i].ID == id {
				op = &ops[i]
				break
			}
		}
		if op == nil {
			continue // a spec without it: the router serves what there is
		}
		r := &fastRoute{op: op, namespaceAt: -1, nameAt: -1}
		for i, seg := range strings.Split(strings.TrimPrefix(op.Path, "/"), "/") {
			switch seg {
			case "{namespace}":
				r.namespaceAt, seg = i, ""
			case "{name}":
				r.nameAt, seg = i, ""
			default:
				if strings.Contains(seg, "{") {
					return nil, fmt.Errorf("fast path for %s: unexpected path parameter in %s", id, op.Path)
				}
			}
			r.segments = append(r.segments, seg)
		}
		switch op.Verb {
		case endpoint.Get:
		case endpoint.Patch:
			r.newBody = func() (any, error) { return new(endpoint.PatchBody), nil }
			r.media = []string{mediaStrategicPatch, mediaMergePatch, mediaJSONPatch}
		case endpoint.Create, endpoint.Update:
			gvk := schema.GroupVersionKind{Group: op.Group, Version: op.Version, Kind: op.Kind}
			if !scheme.Recognizes(gvk) {
				return nil, fmt.Errorf("fast path for %s: %s has no Go type", id, gvk)
			}
			r.newBody = func() (any, error) { return scheme.New(gvk) }
			r.media = []string{mediaProtobuf, mediaJSON}
		default:
			return nil, fmt.Errorf("fast path for %s: verb %s is not served on the fast path", id, op.Verb)
		}
		fp.byMethod[op.Method] = append(fp.byMethod[op.Method], r)
	}
	return fp, nil
}

// match returns the route of a plain request for a hot operation and the
// path's namespace and name: no escaped characters in the path, no empty
// segment, only fastQueryKeys, and (with a body) a Content-Type the fast
// path decodes, without parameters.
func (fp *fastPaths) match(r *http.Request) (route *fastRoute, namespace, name string, ok bool) {
	routes := fp.byMethod[r.Method]
	if len(routes) == 0 || r.URL.RawPath != "" {
		return nil, "", "", false
	}
	path := strings.TrimPrefix(r.URL.Path, "/")
	n := strings.Count(path, "/") + 1
	for _, rt := range routes {
		if len(rt.segments) != n {
			continue
		}
		rest, matched := path, true
		for i, want := range rt.segments {
			seg, tail, _ := strings.Cut(rest, "/")
			rest = tail
			switch {
			case seg == "":
				matched = false
			case i == rt.namespaceAt:
				namespace = seg
			case i == rt.nameAt:
				name = seg
			case seg != want:
				matched = false
			}
			if !matched {
				break
			}
		}
		if !matched {
			continue
		}
		if r.URL.RawQuery != "" {
			for k := range r.URL.Query() {
				if !fastQueryKeys[k] {
					return nil, "", "", false
				}
			}
		}
		if rt.newBody != nil && !slices.Contains(rt.media, r.Header.Get("Content-Type")) {
			return nil, "", "", false
		}
		return rt, namespace, name, true
	}
	return nil, "", "", false
}

// serveFast serves r on the fast path if it is a plain request for a hot
// operation, and reports whether it did. A body that does not decode is
// left, as it came, for the generated router, whose error answer is the
// reference.
func (s *Server) serveFast(w http.ResponseWriter, r *http.Request) bool {
	if s.fast == nil {
		return false
	}
	rt, namespace, name, ok := s.fast.match(r)
	if !ok {
		return false
	}
	args := endpoint.Args{Request: r, Namespace: namespace, Name: name}
	if rt.newBody != nil {
		data, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
		giveBack := func() bool {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(data), r.Body), r.Body}
			return false
		}
		if err != nil || len(data) == 0 || len(data) > maxBodyBytes {
			return giveBack()
		}
		body, err := rt.newBody()
		if err != nil {
			return giveBack()
		}
		if err := s.decodeBody(r.Header.Get("Content-Type"), data, body); err != nil {
			return giveBack()
		}
		switch b := body.(type) {
		case *endpoint.PatchBody:
			args.Patch = *b
		case k8sruntime.Object:
			args.Body = b
		}
	}
	s.fastServed.Add(1)
	s.Serve(rt.op, args).WriteResponse(w, nil)
	return true
}

// FastPathRequests counts the requests served on the fast path (the hot
// operations' plain requests) since the server started; every other
// request went through the generated router.
func (s *Server) FastPathRequests() uint64 { return s.fastServed.Load() }
