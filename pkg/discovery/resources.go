package discovery

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/batkube/batkube/pkg/endpoint"
)

// groupVersionResources holds the resources of one group version, sorted by
// name (subresources as "pods/status"), the way the API installer lists them.
type groupVersionResources struct {
	gv        schema.GroupVersion
	resources []metav1.APIResource
}

// group holds the served versions of one group, preferred first.
type group struct {
	name     string
	versions []*groupVersionResources
}

// resourceBuilder accumulates what the operations say of one resource or
// subresource.
type resourceBuilder struct {
	name       string // "pods" or "pods/status"
	kind       string
	kindRank   int // how much the kind's operation says about the resource: lower wins
	namespaced bool
	verbs      map[string]bool
}

// kubeVerbs maps an operation to the discovery verbs it contributes, as the
// API installer does: connect operations count by their HTTP method.
func kubeVerbs(op *endpoint.Operation) []string {
	switch op.Verb {
	case endpoint.Get, endpoint.List, endpoint.Create, endpoint.Update, endpoint.Patch, endpoint.Delete, endpoint.DeleteCollection:
		return []string{string(op.Verb)}
	case endpoint.Watch, endpoint.WatchList:
		return []string{"watch"}
	case endpoint.Connect:
		switch strings.ToUpper(op.Method) {
		case http.MethodGet:
			return []string{"get"}
		case http.MethodPost:
			return []string{"create"}
		case http.MethodPut:
			return []string{"update"}
		case http.MethodPatch:
			return []string{"patch"}
		case http.MethodDelete:
			return []string{"delete"}
		}
	}
	return nil
}

// kindRank orders the operations whose kind names the resource.
func kindRank(v endpoint.Verb) int {
	switch v {
	case endpoint.Get:
		return 0
	case endpoint.Create:
		return 1
	case endpoint.List:
		return 2
	case endpoint.Update, endpoint.Patch:
		return 3
	default:
		return 4
	}
}

// buildGroups turns the operations into the served groups, sorted as the
// aggregated /apis lists them (the core group, named "", among them).
func buildGroups(ops []endpoint.Operation, extras map[schema.GroupResource]Extras) ([]*group, error) {
	builders := map[schema.GroupVersion]map[string]*resourceBuilder{}
	for i := range ops {
		op := &ops[i]
		if op.Verb == endpoint.NonResource || op.Resource == "" {
			continue
		}
		if op.Version == "" {
			return nil, fmt.Errorf("discovery: operation %s has a resource but no version", op.ID)
		}
		gv := schema.GroupVersion{Group: op.Group, Version: op.Version}
		name := op.Resource
		if op.Subresource != "" {
			name += "/" + op.Subresource
		}
		byName := builders[gv]
		if byName == nil {
			byName = map[string]*resourceBuilder{}
			builders[gv] = byName
		}
		b := byName[name]
		if b == nil {
			b = &resourceBuilder{name: name, kindRank: 1 << 30, verbs: map[string]bool{}}
			byName[name] = b
		}
		// The all-namespaces list and watch of a namespaced resource have no
		// {namespace}: one namespaced operation is enough.
		b.namespaced = b.namespaced || op.Namespaced
		for _, v := range kubeVerbs(op) {
			b.verbs[v] = true
		}
		if r := kindRank(op.Verb); op.Kind != "" && r < b.kindRank {
			b.kind, b.kindRank = op.Kind, r
		}
	}

	byGroup := map[string]*group{}
	for gv, byName := range builders {
		g := byGroup[gv.Group]
		if g == nil {
			g = &group{name: gv.Group}
			byGroup[gv.Group] = g
		}
		g.versions = append(g.versions, &groupVersionResources{gv: gv, resources: apiResources(gv, byName, extras)})
	}
	groups := make([]*group, 0, len(byGroup))
	for _, g := range byGroup {
		sort.Slice(g.versions, func(i, j int) bool {
			return version.CompareKubeAwareVersionStrings(g.versions[i].gv.Version, g.versions[j].gv.Version) > 0
		})
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool {
		pi, pj := groupPriorities[groups[i].name], groupPriorities[groups[j].name]
		if pi != pj {
			return pi > pj
		}
		return groups[i].name < groups[j].name
	})
	setStorageVersionHashes(groups)
	return groups, nil
}

// apiResources returns the APIResource list of one group version.
func apiResources(gv schema.GroupVersion, byName map[string]*resourceBuilder, more map[schema.GroupResource]Extras) []metav1.APIResource {
	out := make([]metav1.APIResource, 0, len(byName))
	for _, b := range byName {
		verbs := make([]string, 0, len(b.verbs))
		for v := range b.verbs {
			verbs = append(verbs, v)
		}
		sort.Strings(verbs)
		r := metav1.APIResource{
			Name:       b.name,
			Namespaced: b.namespaced,
			Kind:       b.kind,
			Verbs:      verbs,
		}
		if strings.Contains(b.name, "/") {
			if fgv, ok := foreignSubresourceKinds[b.kind]; ok && fgv.Group != gv.Group {
				r.Group, r.Version = fgv.Group, fgv.Version
			}
		} else {
			r.SingularName = strings.ToLower(b.kind)
			gr := schema.GroupResource{Group: gv.Group, Resource: b.name}
			if extras, ok := extrasByResource[gr]; ok {
				r.ShortNames = slices.Clone(extras.shortNames)
				r.Categories = slices.Clone(extras.categories)
			}
			if extras, ok := more[gr]; ok {
				r.SingularName = extras.Singular
				r.ShortNames = slices.Clone(extras.ShortNames)
				r.Categories = slices.Clone(extras.Categories)
			}
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// setStorageVersionHashes gives every persisted resource the hash of its
// storage version: the preferred version of its group that serves it (or of
// the group whose storage it shares). Resources that are not stored (reviews,
// bindings, component statuses) have none, as on a real server.
func setStorageVersionHashes(groups []*group) {
	storageKind := map[schema.GroupResource]schema.GroupVersionKind{}
	for _, g := range groups {
		for _, v := range g.versions { // preferred first
			for _, r := range v.resources {
				gr := schema.GroupResource{Group: g.name, Resource: r.Name}
				if _, seen := storageKind[gr]; !seen && persisted(r) {
					storageKind[gr] = v.gv.WithKind(r.Kind)
				}
			}
		}
	}
	for _, g := range groups {
		for _, v := range g.versions {
			for i := range v.resources {
				r := &v.resources[i]
				if !persisted(*r) {
					continue
				}
				gr := schema.GroupResource{Group: g.name, Resource: r.Name}
				if alias, ok := storageAliases[gr]; ok {
					if gvk, ok := storageKind[alias]; ok {
						r.StorageVersionHash = storageVersionHash(gvk)
						continue
					}
				}
				r.StorageVersionHash = storageVersionHash(storageKind[gr])
			}
		}
	}
}

// persisted reports whether a main resource is kept in storage: it can be
// created, read and deleted.
func persisted(r metav1.APIResource) bool {
	return !strings.Contains(r.Name, "/") && slices.Contains(r.Verbs, "create") &&
		slices.Contains(r.Verbs, "get") && slices.Contains(r.Verbs, "delete")
}

// storageVersionHash is the opaque hash the API server publishes for a
// storage version: the first 8 bytes of SHA-256("group/version/kind"), base64.
func storageVersionHash(gvk schema.GroupVersionKind) string {
	sum := sha256.Sum256([]byte(gvk.Group + "/" + gvk.Version + "/" + gvk.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// groupDiscovery converts a group into its aggregated discovery form, the way
// the API server converts its APIResource lists.
func groupDiscovery(g *group) apidiscoveryv2.APIGroupDiscovery {
	out := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
	for _, v := range g.versions {
		out.Versions = append(out.Versions, apidiscoveryv2.APIVersionDiscovery{
			Version:   v.gv.Version,
			Resources: aggregatedResources(v.resources),
			Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
		})
	}
	return out
}

func aggregatedResources(list []metav1.APIResource) []apidiscoveryv2.APIResourceDiscovery {
	var out []apidiscoveryv2.APIResourceDiscovery
	parents := map[string]int{}
	scope := func(r metav1.APIResource) apidiscoveryv2.ResourceScope {
		if r.Namespaced {
			return apidiscoveryv2.ScopeNamespace
		}
		return apidiscoveryv2.ScopeCluster
	}
	for _, r := range list {
		if strings.Contains(r.Name, "/") {
			continue
		}
		parents[r.Name] = len(out)
		out = append(out, apidiscoveryv2.APIResourceDiscovery{
			Resource:         r.Name,
			ResponseKind:     &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind},
			Scope:            scope(r),
			SingularResource: r.SingularName,
			Verbs:            slices.Clone(r.Verbs),
			ShortNames:       slices.Clone(r.ShortNames),
			Categories:       slices.Clone(r.Categories),
		})
	}
	for _, r := range list {
		parent, sub, ok := strings.Cut(r.Name, "/")
		if !ok {
			continue
		}
		i, exists := parents[parent]
		if !exists {
			// A subresource without its resource: the API server makes up an
			// empty parent.
			i = len(out)
			parents[parent] = i
			out = append(out, apidiscoveryv2.APIResourceDiscovery{
				Resource:     parent,
				Scope:        scope(r),
				ResponseKind: &metav1.GroupVersionKind{},
			})
		}
		out[i].Subresources = append(out[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource:  sub,
			ResponseKind: &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind},
			Verbs:        slices.Clone(r.Verbs),
		})
	}
	return out
}
