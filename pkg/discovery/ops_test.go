package discovery

import (
	"net/http"
	"strings"

	"github.com/batkube/batkube/pkg/endpoint"
)

// opsBuilder writes the operations the spec has for a resource, the way the
// generated catalogue describes them.
type opsBuilder struct {
	ops []endpoint.Operation
}

func (b *opsBuilder) prefix(group, version string) string {
	if group == "" {
		return "/api/" + version
	}
	return "/apis/" + group + "/" + version
}

// verbRoutes is where the spec serves each verb of a resource: the method,
// on the item or on the collection, under the deprecated /watch/ or not.
var verbRoutes = map[endpoint.Verb]struct {
	method        string
	onItem, watch bool
}{
	endpoint.Get:              {http.MethodGet, true, false},
	endpoint.List:             {http.MethodGet, false, false},
	endpoint.Create:           {http.MethodPost, false, false},
	endpoint.Update:           {http.MethodPut, true, false},
	endpoint.Patch:            {http.MethodPatch, true, false},
	endpoint.Delete:           {http.MethodDelete, true, false},
	endpoint.DeleteCollection: {http.MethodDelete, false, false},
	endpoint.Watch:            {http.MethodGet, true, true},
	endpoint.WatchList:        {http.MethodGet, false, true},
}

// resource adds the operations of a resource for the given verbs.
func (b *opsBuilder) resource(group, version, kind, resource string, namespaced bool, verbs ...endpoint.Verb) {
	base := b.prefix(group, version)
	collection := base + "/" + resource
	if namespaced {
		collection = base + "/namespaces/{namespace}/" + resource
	}
	item := collection + "/{name}"
	for _, v := range verbs {
		op := endpoint.Operation{
			ID: string(v) + kind, Verb: v, Group: group, Version: version, Kind: kind,
			Resource: resource, Namespaced: namespaced,
		}
		route := verbRoutes[v]
		op.Method, op.Path = route.method, collection
		if route.onItem {
			op.Path = item
		}
		if route.watch {
			op.Path = strings.Replace(op.Path, "/"+version+"/", "/"+version+"/watch/", 1)
		}
		b.ops = append(b.ops, op)
		if namespaced && (v == endpoint.List || v == endpoint.WatchList) {
			// The all-namespaces variant has no {namespace}.
			all := op
			all.ID += "ForAllNamespaces"
			all.Namespaced = false
			all.Path = strings.Replace(op.Path, "/namespaces/{namespace}", "", 1)
			b.ops = append(b.ops, all)
		}
	}
}

// full adds a resource with every verb of a stored resource.
func (b *opsBuilder) full(group, version, kind, resource string, namespaced bool) {
	b.resource(group, version, kind, resource, namespaced,
		endpoint.Get, endpoint.List, endpoint.Watch, endpoint.WatchList, endpoint.Create,
		endpoint.Update, endpoint.Patch, endpoint.Delete, endpoint.DeleteCollection)
}

// sub adds operations of a subresource; connect operations list their methods.
func (b *opsBuilder) sub(group, version, kind, resource, subresource string, namespaced bool, verbs []endpoint.Verb, methods ...string) {
	base := b.prefix(group, version)
	item := base + "/" + resource + "/{name}/" + subresource
	if namespaced {
		item = base + "/namespaces/{namespace}/" + resource + "/{name}/" + subresource
	}
	add := func(v endpoint.Verb, method string) {
		b.ops = append(b.ops, endpoint.Operation{
			ID: string(v) + kind + subresource + method, Method: method, Path: item, Verb: v,
			Group: group, Version: version, Kind: kind, Resource: resource,
			Subresource: subresource, Namespaced: namespaced,
		})
	}
	for _, v := range verbs {
		add(v, verbRoutes[v].method)
	}
	for _, m := range methods {
		add(endpoint.Connect, m)
	}
}

var statusVerbs = []endpoint.Verb{endpoint.Get, endpoint.Update, endpoint.Patch}

// testOperations is a small catalogue shaped like the 1.37 spec.
func testOperations() []endpoint.Operation {
	var b opsBuilder
	nonResource := func(id, path string) {
		b.ops = append(b.ops, endpoint.Operation{ID: id, Method: http.MethodGet, Path: path, Verb: endpoint.NonResource})
	}
	nonResource("getCoreAPIVersions", "/api/")
	nonResource("getCoreV1APIResources", "/api/v1/")
	nonResource("getAPIVersions", "/apis/")
	nonResource("getCodeVersion", "/version/")

	b.full("", "v1", "Pod", "pods", true)
	b.sub("", "v1", "Pod", "pods", "status", true, statusVerbs)
	b.sub("", "v1", "Binding", "pods", "binding", true, []endpoint.Verb{endpoint.Create})
	b.sub("", "v1", "Eviction", "pods", "eviction", true, []endpoint.Verb{endpoint.Create})
	b.sub("", "v1", "Pod", "pods", "log", true, []endpoint.Verb{endpoint.Get})
	b.sub("", "v1", "PodExecOptions", "pods", "exec", true, nil, http.MethodGet, http.MethodPost)
	b.sub("", "v1", "PodProxyOptions", "pods", "proxy", true, nil,
		http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions)
	b.full("", "v1", "Node", "nodes", false)
	b.sub("", "v1", "Node", "nodes", "status", false, statusVerbs)
	b.full("", "v1", "Namespace", "namespaces", false)
	b.sub("", "v1", "Namespace", "namespaces", "status", false, statusVerbs)
	b.sub("", "v1", "Namespace", "namespaces", "finalize", false, []endpoint.Verb{endpoint.Update})
	b.full("", "v1", "Event", "events", true)
	b.full("", "v1", "ServiceAccount", "serviceaccounts", true)
	b.sub("", "v1", "TokenRequest", "serviceaccounts", "token", true, []endpoint.Verb{endpoint.Create})
	b.full("", "v1", "ReplicationController", "replicationcontrollers", true)
	b.sub("", "v1", "Scale", "replicationcontrollers", "scale", true, statusVerbs)
	b.resource("", "v1", "Binding", "bindings", true, endpoint.Create)
	b.resource("", "v1", "ComponentStatus", "componentstatuses", false, endpoint.Get, endpoint.List)

	b.full("apps", "v1", "Deployment", "deployments", true)
	b.sub("apps", "v1", "Deployment", "deployments", "status", true, statusVerbs)
	b.sub("apps", "v1", "Scale", "deployments", "scale", true, statusVerbs)
	b.full("apps", "v1", "ReplicaSet", "replicasets", true)

	b.full("events.k8s.io", "v1", "Event", "events", true)
	b.full("autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true)
	b.full("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true)
	b.resource("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", false, endpoint.Create)
	b.full("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", true)
	b.full("coordination.k8s.io", "v1", "Lease", "leases", true)
	b.full("coordination.k8s.io", "v1beta1", "Lease", "leases", true)
	b.full("coordination.k8s.io", "v1alpha2", "LeaseCandidate", "leasecandidates", true)
	b.full("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", false)
	b.full("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", false)
	b.full("apiregistration.k8s.io", "v1", "APIService", "apiservices", false)
	return b.ops
}
