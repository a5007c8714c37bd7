package discovery

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What a real kube-apiserver 1.37 reports that the OpenAPI spec does not say:
// short names and categories (the ShortNamesProvider and CategoriesProvider
// of each registry storage), the group order of /apis (the aggregator's
// APIService priorities) and the group version of subresource kinds that live
// in another group (GroupVersionKindProvider storages).

// resourceExtras are the short names and categories of a resource.
type resourceExtras struct {
	shortNames []string
	categories []string
}

var all = []string{"all"}

var apiExtensions = []string{"api-extensions"}

// extrasByResource maps a group resource to its short names and categories,
// in every version of the group.
var extrasByResource = map[schema.GroupResource]resourceExtras{
	{Group: "", Resource: "componentstatuses"}:                                             {shortNames: []string{"cs"}},
	{Group: "", Resource: "configmaps"}:                                                    {shortNames: []string{"cm"}},
	{Group: "", Resource: "endpoints"}:                                                     {shortNames: []string{"ep"}},
	{Group: "", Resource: "events"}:                                                        {shortNames: []string{"ev"}},
	{Group: "", Resource: "limitranges"}:                                                   {shortNames: []string{"limits"}},
	{Group: "", Resource: "namespaces"}:                                                    {shortNames: []string{"ns"}},
	{Group: "", Resource: "nodes"}:                                                         {shortNames: []string{"no"}},
	{Group: "", Resource: "persistentvolumeclaims"}:                                        {shortNames: []string{"pvc"}},
	{Group: "", Resource: "persistentvolumes"}:                                             {shortNames: []string{"pv"}},
	{Group: "", Resource: "pods"}:                                                          {shortNames: []string{"po"}, categories: all},
	{Group: "", Resource: "replicationcontrollers"}:                                        {shortNames: []string{"rc"}, categories: all},
	{Group: "", Resource: "resourcequotas"}:                                                {shortNames: []string{"quota"}},
	{Group: "", Resource: "serviceaccounts"}:                                               {shortNames: []string{"sa"}},
	{Group: "", Resource: "services"}:                                                      {shortNames: []string{"svc"}, categories: all},
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}:         {categories: apiExtensions},
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicybindings"}:   {categories: apiExtensions},
	{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}:     {categories: apiExtensions},
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}:       {categories: apiExtensions},
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}: {categories: apiExtensions},
	{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}:   {categories: apiExtensions},
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}:                 {shortNames: []string{"crd", "crds"}, categories: apiExtensions},
	{Group: "apiregistration.k8s.io", Resource: "apiservices"}:                             {categories: apiExtensions},
	{Group: "apps", Resource: "daemonsets"}:                                                {shortNames: []string{"ds"}, categories: all},
	{Group: "apps", Resource: "deployments"}:                                               {shortNames: []string{"deploy"}, categories: all},
	{Group: "apps", Resource: "replicasets"}:                                               {shortNames: []string{"rs"}, categories: all},
	{Group: "apps", Resource: "statefulsets"}:                                              {shortNames: []string{"sts"}, categories: all},
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}:                           {shortNames: []string{"hpa"}, categories: all},
	{Group: "batch", Resource: "cronjobs"}:                                                 {shortNames: []string{"cj"}, categories: all},
	{Group: "batch", Resource: "jobs"}:                                                     {categories: all},
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}:                 {shortNames: []string{"csr"}},
	{Group: "events.k8s.io", Resource: "events"}:                                           {shortNames: []string{"ev"}},
	{Group: "networking.k8s.io", Resource: "ingresses"}:                                    {shortNames: []string{"ing"}},
	{Group: "networking.k8s.io", Resource: "ipaddresses"}:                                  {shortNames: []string{"ip"}},
	{Group: "networking.k8s.io", Resource: "networkpolicies"}:                              {shortNames: []string{"netpol"}},
	{Group: "policy", Resource: "poddisruptionbudgets"}:                                    {shortNames: []string{"pdb"}},
	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}:                              {shortNames: []string{"pc"}},
	{Group: "storage.k8s.io", Resource: "storageclasses"}:                                  {shortNames: []string{"sc"}},
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}:                         {shortNames: []string{"vac"}},
}

// groupPriorities orders the groups of /apis as the aggregator does (higher
// first, ties by name); a group missing here has priority 0.
var groupPriorities = map[string]int{
	"apiregistration.k8s.io":       20001,
	"":                             18000,
	"apps":                         17800,
	"events.k8s.io":                17750,
	"authentication.k8s.io":        17700,
	"authorization.k8s.io":         17600,
	"autoscaling":                  17500,
	"batch":                        17400,
	"certificates.k8s.io":          17300,
	"networking.k8s.io":            17200,
	"policy":                       17100,
	"rbac.authorization.k8s.io":    17000,
	"storage.k8s.io":               16800,
	"apiextensions.k8s.io":         16700,
	"admissionregistration.k8s.io": 16700,
	"scheduling.k8s.io":            16600,
	"coordination.k8s.io":          16500,
	"node.k8s.io":                  16300,
	"discovery.k8s.io":             16200,
	"resource.k8s.io":              16200,
	"flowcontrol.apiserver.k8s.io": 16100,
	"internal.apiserver.k8s.io":    16000,
	"storagemigration.k8s.io":      15800,
}

// foreignSubresourceKinds gives the group version of subresource kinds served
// from another group (deployments/scale answers an autoscaling/v1 Scale).
var foreignSubresourceKinds = map[string]schema.GroupVersion{
	"Scale":        {Group: "autoscaling", Version: "v1"},
	"Eviction":     {Group: "policy", Version: "v1"},
	"TokenRequest": {Group: "authentication.k8s.io", Version: "v1"},
}

// storageAliases maps resources stored by another group's storage: their
// storage version hash is the other group's.
var storageAliases = map[schema.GroupResource]schema.GroupResource{
	{Group: "events.k8s.io", Resource: "events"}: {Group: "", Resource: "events"},
}
