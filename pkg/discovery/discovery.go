package discovery

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/batkube/batkube/pkg/endpoint"
)

// Paths of the discovery documents.
const (
	legacyPrefix = "/api"
	groupPrefix  = "/apis"
	versionPath  = "/version"
)

// Discovery serves the discovery documents of the served API. It is built
// once and safe for concurrent use.
type Discovery struct {
	// pages maps a normalised path (no trailing slash) to its documents.
	pages     map[string]*page
	resources map[schema.GroupVersionResource]metav1.APIResource
	version   encoded
	// coreVersions are the versions of the core group, for /api.
	coreVersions []string
}

// page is what one discovery path serves.
type page struct {
	// legacy is the unaggregated document; nil for /api, which depends on
	// the request (serverAddressByClientCIDRs).
	legacy *document
	// aggregated is the aggregated discovery v2 document (/api and /apis only).
	aggregated *document
}

var _ http.Handler = (*Discovery)(nil)

// New builds the discovery documents from the spec's operations and the
// version reported at /version.
func New(ops []endpoint.Operation, info version.Info) (*Discovery, error) {
	return newWithExtras(ops, info, nil)
}

func newWithExtras(ops []endpoint.Operation, info version.Info, extras map[schema.GroupResource]Extras) (*Discovery, error) {
	groups, err := buildGroups(ops, extras)
	if err != nil {
		return nil, err
	}
	d := &Discovery{
		pages:     map[string]*page{},
		resources: map[schema.GroupVersionResource]metav1.APIResource{},
	}
	versionJSON, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("discovery: encoding the version: %w", err)
	}
	d.version = encoded{body: versionJSON, etag: etagOf(versionJSON)}

	groupList := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	aggregatedGroups := newAggregatedList()
	aggregatedCore := newAggregatedList()
	for _, g := range groups {
		for _, v := range g.versions {
			for _, r := range v.resources {
				d.resources[v.gv.WithResource(r.Name)] = r
			}
			if err := d.addVersionPage(v); err != nil {
				return nil, err
			}
		}
		if g.name == "" {
			for _, v := range g.versions {
				d.coreVersions = append(d.coreVersions, v.gv.Version)
			}
			aggregatedCore.Items = append(aggregatedCore.Items, groupDiscovery(g))
			continue
		}
		apiGroup := legacyGroup(g)
		groupList.Groups = append(groupList.Groups, apiGroup)
		aggregatedGroups.Items = append(aggregatedGroups.Items, groupDiscovery(g))
		apiGroup.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		if err := d.addPage(groupPrefix+"/"+g.name, &apiGroup, nil); err != nil {
			return nil, err
		}
	}
	if err := d.addPage(groupPrefix, groupList, aggregatedGroups); err != nil {
		return nil, err
	}
	if err := d.addPage(legacyPrefix, nil, aggregatedCore); err != nil {
		return nil, err
	}
	return d, nil
}

func newAggregatedList() *apidiscoveryv2.APIGroupDiscoveryList {
	return &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: aggregatedKind, APIVersion: aggregatedGroup + "/" + aggregatedVersion},
		Items:    []apidiscoveryv2.APIGroupDiscovery{},
	}
}

// addVersionPage adds /api/v1 or /apis/{group}/{version}. The core group and
// extensions answer without apiVersion, as the API server keeps them
// backward compatible with Kubernetes 1.1.
func (d *Discovery) addVersionPage(v *groupVersionResources) error {
	list := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: v.gv.String(),
		APIResources: v.resources,
	}
	path := groupPrefix + "/" + v.gv.Group + "/" + v.gv.Version
	if v.gv.Group == "" {
		path = legacyPrefix + "/" + v.gv.Version
	}
	if v.gv.Group == "" || v.gv.Group == "extensions" {
		list.APIVersion = ""
	}
	return d.addPage(path, list, nil)
}

// addPage encodes the documents of one path.
func (d *Discovery) addPage(path string, legacy, aggregated runtime.Object) error {
	p := &page{}
	var err error
	if legacy != nil {
		if p.legacy, err = newDocument(legacy); err != nil {
			return err
		}
	}
	if aggregated != nil {
		if p.aggregated, err = newDocument(aggregated); err != nil {
			return err
		}
	}
	d.pages[path] = p
	return nil
}

func legacyGroup(g *group) metav1.APIGroup {
	out := metav1.APIGroup{Name: g.name}
	for _, v := range g.versions {
		out.Versions = append(out.Versions, metav1.GroupVersionForDiscovery{GroupVersion: v.gv.String(), Version: v.gv.Version})
	}
	out.PreferredVersion = out.Versions[0]
	return out
}

// normalise drops the trailing slash of a path ("/apis/apps/" serves "/apis/apps").
func normalise(path string) string {
	if len(path) > 1 {
		return strings.TrimSuffix(path, "/")
	}
	return path
}

// Handles reports whether path is a discovery path of the served API; other
// paths under /api and /apis belong to the resource handlers (or are 404).
func (d *Discovery) Handles(path string) bool {
	path = normalise(path)
	if path == versionPath {
		return true
	}
	_, ok := d.pages[path]
	return ok
}

// Resource returns the discovery entry of a resource ("pods") or subresource
// ("pods/status") as /api/v1 or /apis/{group}/{version} lists it.
func (d *Discovery) Resource(group, version, resource string) (metav1.APIResource, bool) {
	r, ok := d.resources[schema.GroupVersionResource{Group: group, Version: version, Resource: resource}]
	if !ok {
		return metav1.APIResource{}, false
	}
	return *r.DeepCopy(), true
}

// ServeHTTP answers a discovery request, negotiating the media type (JSON,
// YAML, protobuf) and the aggregated form, and answering 304 to a request
// whose If-None-Match names the current document.
func (d *Discovery) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405: Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	path := normalise(r.URL.Path)
	if path == versionPath {
		writeEncoded(w, r, mediaJSON, d.version, false)
		return
	}
	p, ok := d.pages[path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	c, ok := negotiate(r.Header.Get("Accept"), p.aggregated != nil)
	if !ok {
		writeNotAcceptable(w)
		return
	}
	var (
		e   encoded
		err error
	)
	switch {
	case c.aggregated:
		e, err = p.aggregated.representation(c.media)
	case p.legacy != nil:
		e, err = p.legacy.representation(c.media)
	default:
		e, err = encode(d.apiVersions(r), c.media)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeEncoded(w, r, c.contentType(), e, c.aggregated)
}

// apiVersions is the /api document: the core versions and the address the
// client reached the server at.
func (d *Discovery) apiVersions(r *http.Request) *metav1.APIVersions {
	return &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: d.coreVersions,
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host},
		},
	}
}

// writeNotAcceptable answers 406 with a Status, as the API server does.
func writeNotAcceptable(w http.ResponseWriter) {
	status := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  "only the following media types are accepted: " + strings.Join(offeredMedia, ", "),
		Reason:   "NotAcceptable",
		Code:     http.StatusNotAcceptable,
	}
	body, _ := json.Marshal(status)
	w.Header().Set("Content-Type", mediaJSON)
	w.WriteHeader(http.StatusNotAcceptable)
	_, _ = w.Write(append(body, '\n'))
}
