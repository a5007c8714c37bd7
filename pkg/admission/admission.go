// Package admission calls a cluster's admission webhooks as kube-apiserver
// does: the MutatingWebhookConfigurations' webhooks one after the other,
// each taking the object as the previous left it (their JSON patches
// applied), then the ValidatingWebhookConfigurations', over HTTPS with
// each configuration's caBundle, as admission.k8s.io/v1 AdmissionReviews.
// A webhook is called when one of its rules matches the request
// (operations, API groups and versions, resources and subresources,
// scope; matchPolicy Equivalent matches the resource at any version of
// its group) and its namespaceSelector and objectSelector match; a
// webhook that fails (unreachable, a timeout after timeoutSeconds, an
// answer that is not a review) fails the request under failurePolicy
// Fail and is skipped under Ignore; a webhook with side effects is not
// called for a dry run, which it then refuses, as on the real server.
//
// A webhook reached through a Service (clientConfig.service) is called at
// the address a Resolver gives (package apiserver's: the Service's
// EndpointSlices, as kube-apiserver with aggregator routing), with the
// Service's DNS name (<name>.<namespace>.svc) as the TLS server name, which
// the webhook's certificate names.
//
// Not done: matchConditions (CEL) are not evaluated (a webhook that has
// some is called as if they held), reinvocationPolicy IfNeeded (no second
// round).
//
// The package knows the webhooks' configurations and HTTP; package
// apiserver decides when to call them.
package admission

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// Request is one request that admission sees.
type Request struct {
	Operation admissionv1.Operation
	// Resource is the resource written (its group, version and plural),
	// SubResource the subresource ("" or "status"...), Kind the object's.
	Resource    schema.GroupVersionResource
	SubResource string
	Kind        schema.GroupVersionKind
	Namespace   string
	Name        string
	// Namespaced tells the resource's scope.
	Namespaced bool
	// Object and OldObject are the object written and the stored one
	// (JSON); nil when the operation has none (no OldObject on create, no
	// Object on delete).
	Object, OldObject []byte
	// ObjectLabels and OldObjectLabels are their labels, for the
	// objectSelectors; NamespaceLabels the labels of the namespace, for
	// the namespaceSelectors.
	ObjectLabels, OldObjectLabels, NamespaceLabels map[string]string
	UserInfo                                       authenticationv1.UserInfo
	DryRun                                         bool
	Options                                        runtime.Object
}

// Webhooks are the webhooks of a cluster's configurations. The zero value
// calls none. A Webhooks is immutable: Compile makes a new one when the
// configurations change.
type Webhooks struct {
	mutating, validating []*webhook
}

// Clients are the HTTP clients of the webhooks, one per TLS identity (the
// caBundle and the server name): the webhooks of one server (Kueue's, one
// per kind it admits) share their connections, kept alive from one call to
// the next and from one compilation of the configurations to the next, as
// kube-apiserver's client cache keeps them. Without it each webhook kept
// at most two idle connections of its own: calls made at once by several
// clients opened new ones, each with a TLS handshake, a twentieth of
// Kueue's CPU in a busy run. The zero value is ready to use.
type Clients struct {
	mu      sync.Mutex
	clients map[clientKey]*http.Client
}

// clientKey is what tells two webhooks' TLS configurations apart.
type clientKey struct {
	caBundle, serverName string
}

// maxIdlePerHost is the idle connections a client keeps to one webhook
// server (client-go's default for kube-apiserver's clients).
const maxIdlePerHost = 25

// client returns the client of the TLS identity, made on first use.
func (c *Clients) client(caBundle []byte, serverName string, roots *x509.CertPool) *http.Client {
	key := clientKey{string(caBundle), serverName}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[key]; ok {
		return cl
	}
	if c.clients == nil {
		c.clients = map[clientKey]*http.Client{}
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName, RootCAs: roots}
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig, Proxy: nil, // each call has its timeout
		MaxIdleConnsPerHost: maxIdlePerHost, IdleConnTimeout: 90 * time.Second}}
	c.clients[key] = cl
	return cl
}

// Retain closes and forgets the clients that no webhook of w uses (the
// configurations changed: a new caBundle).
func (c *Clients) Retain(w *Webhooks) {
	if c == nil {
		return
	}
	used := map[*http.Client]bool{}
	if w != nil {
		for _, wh := range slices.Concat(w.mutating, w.validating) {
			used[wh.client] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, cl := range c.clients {
		if !used[cl] {
			cl.CloseIdleConnections()
			delete(c.clients, key)
		}
	}
}

// Resolver gives the address ("host:port") at which a Service's port is
// served.
type Resolver func(namespace, name string, port int32) (string, error)

// webhook is one webhook of a configuration, ready to call.
type webhook struct {
	name, config string
	url          string
	// service, when the webhook is reached through a Service: resolve
	// gives its address at each call.
	service       *admissionregistrationv1.ServiceReference
	resolve       Resolver
	client        *http.Client
	rules         []admissionregistrationv1.RuleWithOperations
	equivalent    bool
	failOpen      bool
	sideEffects   bool
	timeout       time.Duration
	nsSelector    labels.Selector
	objSelector   labels.Selector
	noURLProblem  string // why it cannot be called, if so
	reviewVersion bool   // it accepts admission.k8s.io/v1
}

// Empty reports whether there is no webhook to call.
func (w *Webhooks) Empty() bool { return w == nil || len(w.mutating)+len(w.validating) == 0 }

// Compile builds the webhooks of the configurations, in the order the
// real server calls them: configurations by name, webhooks in their
// configuration's order. A webhook that cannot be built (an invalid
// selector) is left out, and said in the error; the others are returned.
//
// The webhooks' HTTP clients come from clients (nil: clients of their
// own).
func Compile(mutating []*admissionregistrationv1.MutatingWebhookConfiguration, validating []*admissionregistrationv1.ValidatingWebhookConfiguration, resolve Resolver, clients *Clients) (*Webhooks, error) {
	if clients == nil {
		clients = &Clients{}
	}
	sort.Slice(mutating, func(i, j int) bool { return mutating[i].Name < mutating[j].Name })
	sort.Slice(validating, func(i, j int) bool { return validating[i].Name < validating[j].Name })
	w := &Webhooks{}
	var errs []error
	add := func(to *[]*webhook, wh *webhook, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		*to = append(*to, wh)
	}
	for _, c := range mutating {
		for _, h := range c.Webhooks {
			wh, err := compile(c.Name, h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.MatchPolicy, h.NamespaceSelector,
				h.ObjectSelector, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, resolve, clients)
			add(&w.mutating, wh, err)
		}
	}
	for _, c := range validating {
		for _, h := range c.Webhooks {
			wh, err := compile(c.Name, h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.MatchPolicy, h.NamespaceSelector,
				h.ObjectSelector, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, resolve, clients)
			add(&w.validating, wh, err)
		}
	}
	return w, errors.Join(errs...)
}

// Intercepts reports whether a mutating (or validating) webhook has a rule
// for req's operation, resource and subresource, whatever its selectors:
// a write that none intercepts need not have its objects encoded into the
// Request (which Mutate and Validate need only for the webhooks they call).
func (w *Webhooks) Intercepts(mutating bool, req *Request) bool {
	if w == nil {
		return false
	}
	hooks := w.validating
	if mutating {
		hooks = w.mutating
	}
	return slices.ContainsFunc(hooks, func(wh *webhook) bool { return wh.hasRuleFor(req) })
}

func compile(config, name string, cc admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations,
	fp *admissionregistrationv1.FailurePolicyType, mp *admissionregistrationv1.MatchPolicyType, ns, obj *metav1.LabelSelector,
	se *admissionregistrationv1.SideEffectClass, timeout *int32, versions []string, resolve Resolver, clients *Clients) (*webhook, error) {
	wh := &webhook{name: name, config: config, rules: rules, timeout: 10 * time.Second,
		failOpen:      fp != nil && *fp == admissionregistrationv1.Ignore,
		equivalent:    mp == nil || *mp == admissionregistrationv1.Equivalent,
		sideEffects:   se == nil || (*se != admissionregistrationv1.SideEffectClassNone && *se != admissionregistrationv1.SideEffectClassNoneOnDryRun),
		reviewVersion: len(versions) == 0 || slices.Contains(versions, "v1")}
	if timeout != nil && *timeout > 0 {
		wh.timeout = time.Duration(*timeout) * time.Second
	}
	var err error
	if wh.nsSelector, err = selector(ns); err != nil {
		return nil, fmt.Errorf("admission: webhook %s of %s: namespaceSelector: %w", name, config, err)
	}
	if wh.objSelector, err = selector(obj); err != nil {
		return nil, fmt.Errorf("admission: webhook %s of %s: objectSelector: %w", name, config, err)
	}
	serverName := ""
	switch {
	case cc.URL != nil:
		wh.url = *cc.URL
	case cc.Service != nil && resolve != nil:
		wh.service, wh.resolve = cc.Service, resolve
		serverName = cc.Service.Name + "." + cc.Service.Namespace + ".svc"
	case cc.Service != nil:
		wh.noURLProblem = fmt.Sprintf("it is reached through service %s/%s, which nothing resolves", cc.Service.Namespace, cc.Service.Name)
	default:
		wh.noURLProblem = "its clientConfig has neither url nor service"
	}
	var roots *x509.CertPool
	if len(cc.CABundle) > 0 {
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(cc.CABundle) {
			wh.noURLProblem = "its caBundle holds no PEM certificate"
		}
	}
	wh.client = clients.client(cc.CABundle, serverName, roots)
	return wh, nil
}

func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

// hasRuleFor reports whether one of the webhook's rules matches req.
func (wh *webhook) hasRuleFor(req *Request) bool {
	return slices.ContainsFunc(wh.rules, func(r admissionregistrationv1.RuleWithOperations) bool { return ruleMatches(r, req, wh.equivalent) })
}

// matches reports whether the webhook is to be called for req.
func (wh *webhook) matches(req *Request) bool {
	if !wh.hasRuleFor(req) {
		return false
	}
	if req.Namespaced && !wh.nsSelector.Matches(labels.Set(req.NamespaceLabels)) {
		return false
	}
	if req.Resource.Group == "" && req.Resource.Resource == "namespaces" && !wh.nsSelector.Matches(labels.Set(req.ObjectLabels)) {
		return false
	}
	if wh.objSelector.Empty() {
		return true
	}
	return (req.Object != nil && wh.objSelector.Matches(labels.Set(req.ObjectLabels))) ||
		(req.OldObject != nil && wh.objSelector.Matches(labels.Set(req.OldObjectLabels)))
}

func ruleMatches(r admissionregistrationv1.RuleWithOperations, req *Request, equivalent bool) bool {
	if !slices.ContainsFunc(r.Operations, func(op admissionregistrationv1.OperationType) bool {
		return op == admissionregistrationv1.OperationAll || string(op) == string(req.Operation)
	}) {
		return false
	}
	if !matchesAny(r.APIGroups, req.Resource.Group) || (!equivalent && !matchesAny(r.APIVersions, req.Resource.Version)) {
		return false
	}
	if r.Scope != nil && *r.Scope != admissionregistrationv1.AllScopes &&
		(*r.Scope == admissionregistrationv1.NamespacedScope) != req.Namespaced {
		return false
	}
	for _, res := range r.Resources {
		main, sub, _ := strings.Cut(res, "/")
		if (main == "*" || main == req.Resource.Resource) && (sub == req.SubResource || sub == "*") {
			return true
		}
	}
	return false
}

func matchesAny(values []string, v string) bool {
	return slices.Contains(values, "*") || slices.Contains(values, v)
}

// Mutate calls the mutating webhooks that match req, each with the object
// the previous ones left, and returns the object then (req.Object if none
// changed it).
func (w *Webhooks) Mutate(ctx context.Context, req *Request) ([]byte, error) {
	if w == nil {
		return req.Object, nil
	}
	obj := req.Object
	for _, wh := range w.mutating {
		if !wh.matches(req) {
			continue
		}
		if err := wh.dryRunRefused(req); err != nil {
			return nil, err
		}
		r := *req
		r.Object = obj
		resp, err := wh.call(ctx, &r)
		if err != nil {
			if wh.failOpen {
				continue
			}
			return nil, err
		}
		if len(resp.Patch) == 0 || obj == nil {
			continue
		}
		if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
			return nil, callError(wh, errors.New("its patch is not a JSONPatch"))
		}
		p, err := jsonpatch.DecodePatch(resp.Patch)
		if err != nil {
			return nil, callError(wh, fmt.Errorf("its patch: %w", err))
		}
		if obj, err = p.Apply(obj); err != nil {
			return nil, callError(wh, fmt.Errorf("applying its patch: %w", err))
		}
	}
	return obj, nil
}

// Validate calls the validating webhooks that match req.
func (w *Webhooks) Validate(ctx context.Context, req *Request) error {
	if w == nil {
		return nil
	}
	for _, wh := range w.validating {
		if !wh.matches(req) {
			continue
		}
		if err := wh.dryRunRefused(req); err != nil {
			return err
		}
		if _, err := wh.call(ctx, req); err != nil && !wh.failOpen {
			return err
		}
	}
	return nil
}

// dryRunRefused is the refusal of a dry run by a webhook with side
// effects, whatever its failurePolicy.
func (wh *webhook) dryRunRefused(req *Request) error {
	if req.DryRun && wh.sideEffects {
		return apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q has side effects and does not support dry run", wh.name))
	}
	return nil
}

// call sends req to the webhook and returns its answer, or the error the
// request fails with: a refusal (403, or the code the webhook gives), or
// the webhook's failure (500).
func (wh *webhook) call(ctx context.Context, req *Request) (*admissionv1.AdmissionResponse, error) {
	if wh.noURLProblem != "" {
		return nil, callError(wh, errors.New(wh.noURLProblem))
	}
	if !wh.reviewVersion {
		return nil, callError(wh, errors.New("it accepts no admission.k8s.io/v1 AdmissionReview, the only version Batkube sends"))
	}
	url := wh.url
	if wh.service != nil {
		port := int32(443)
		if wh.service.Port != nil {
			port = *wh.service.Port
		}
		addr, err := wh.resolve(wh.service.Namespace, wh.service.Name, port)
		if err != nil {
			return nil, callError(wh, fmt.Errorf("resolving service %s/%s: %w", wh.service.Namespace, wh.service.Name, err))
		}
		url = "https://" + addr
		if wh.service.Path != nil {
			url += *wh.service.Path
		}
	}
	uid := types.UID(uuid.NewUUID())
	gvr := metav1.GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource}
	gvk := metav1.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: uid, Kind: gvk, Resource: gvr, SubResource: req.SubResource,
			RequestKind: &gvk, RequestResource: &gvr, RequestSubResource: req.SubResource,
			Name: req.Name, Namespace: req.Namespace, Operation: req.Operation, UserInfo: req.UserInfo,
			DryRun: &req.DryRun, Options: runtime.RawExtension{Object: req.Options}},
	}
	body, err := reviewBody(&review, req.Object, req.OldObject)
	if err != nil {
		return nil, callError(wh, err)
	}
	ctx, cancel := context.WithTimeout(ctx, wh.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, callError(wh, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	resp, err := wh.client.Do(hreq)
	if err != nil {
		return nil, callError(wh, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, callError(wh, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, callError(wh, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(data))))
	}
	var answer admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &answer); err != nil || answer.Response == nil {
		return nil, callError(wh, fmt.Errorf("its answer is not an AdmissionReview with a response: %q", truncate(data)))
	}
	if answer.Response.UID != uid {
		return nil, callError(wh, fmt.Errorf("its answer is for request %q, not %q", answer.Response.UID, uid))
	}
	if !answer.Response.Allowed {
		return nil, denied(wh.name, answer.Response.Result)
	}
	return answer.Response, nil
}

// denied is a webhook's refusal, as the real server words it.
func denied(name string, result *metav1.Status) error {
	st := metav1.Status{Status: metav1.StatusFailure}
	if result != nil {
		st = *result
		st.Status = metav1.StatusFailure
	}
	by := fmt.Sprintf("admission webhook %q denied the request", name)
	switch {
	case st.Message != "":
		st.Message = by + ": " + st.Message
	case st.Reason != "":
		st.Message = by + ": " + string(st.Reason)
	default:
		st.Message = by + " without explanation"
	}
	if st.Code == 0 {
		st.Code = http.StatusForbidden
	}
	return &apierrors.StatusError{ErrStatus: st}
}

// callError is a webhook that could not be called, as the real server
// words it (500).
func callError(wh *webhook, err error) error {
	return apierrors.NewInternalError(fmt.Errorf("failed calling webhook %q: %w", wh.name, err))
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// reviewBody encodes review with the request's object and old object (the
// server's JSON of them) written in as they are. encoding/json would scan
// each again to compact it, the largest part of a review's encoding; they
// are marshalled as placeholders, strings named after the request's UID,
// which are then replaced.
func reviewBody(review *admissionv1.AdmissionReview, object, oldObject []byte) ([]byte, error) {
	type part struct {
		raw  *runtime.RawExtension
		data []byte
		mark []byte
	}
	parts := []part{{&review.Request.Object, object, nil}, {&review.Request.OldObject, oldObject, nil}}
	for i, name := range []string{"object", "oldObject"} {
		if parts[i].data != nil {
			parts[i].mark = []byte(strconv.Quote("batkube:" + name + ":" + string(review.Request.UID)))
			parts[i].raw.Raw = parts[i].mark
		}
	}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, err
	}
	// The placeholders are looked for in the marshalled review, in order,
	// never in the objects written in.
	out := make([]byte, 0, len(body)+len(object)+len(oldObject))
	from := 0
	for _, p := range parts {
		if p.mark == nil {
			continue
		}
		at := bytes.Index(body[from:], p.mark)
		if at < 0 {
			return nil, fmt.Errorf("encoding the review: its placeholder %s is not in it", p.mark)
		}
		out = append(append(out, body[from:from+at]...), p.data...)
		from += at + len(p.mark)
	}
	return append(out, body[from:]...), nil
}
