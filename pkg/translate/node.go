package translate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Keys Batkube puts on the objects it creates.
const (
	ResourceIDKey = "batkube.io/resource-id" // node label and annotation: the Batsim resource id
	JobIDKey      = "batkube.io/job-id"      // pod annotation: the Batsim job id ("workload!id")
	JobLabel      = "batkube.io/job"         // pod label shared by the pods of one job
	GroupSizeKey  = "batkube.io/group-size"  // pod annotation: number of pods of the job
	GroupIndexKey = "batkube.io/group-index" // pod annotation: index of the pod in its job
	HostNameKey   = "batkube.io/host-name"   // node annotation (and label when it is a valid value): the Batsim host's name
	// HostResource is the extended resource every node has one of, and
	// that the pods of a job whose profile requests nothing ask one of
	// (PodOptions.ExclusiveHosts): such a job holds its hosts alone, as a
	// Batsim job holds its res hosts.
	HostResource corev1.ResourceName = "batkube.io/host"
	labelPrefix                      = "label:"
	taintPrefix                      = "taint:"
	zonePrefix                       = "batkube.io/zone-"
)

// Host is a Batsim compute resource as SIMULATION_BEGINS describes it.
type Host struct {
	ID             int
	Name           string
	Properties     map[string]string
	ZoneProperties map[string]string
}

// NodeOptions are the defaults of a node whose host does not say.
type NodeOptions struct {
	DefaultCPU     resource.Quantity // cores when the host has no cpu/core property
	DefaultMemory  resource.Quantity // when the host has no memory property
	DefaultPods    int64             // 0 means 110
	KubeletVersion string
}

// IsMaster reports whether a host is Batsim's master host, which is not a
// compute resource.
func IsMaster(h Host) bool { return h.Properties["role"] == "master" }

// NodeName returns the node name of a Batsim host: its own name when that
// is a valid node name (a lowercase RFC 1123 subdomain that is also a valid
// kubernetes.io/hostname label value), else the name lowercased, every
// other character turned into '-', trimmed to what a name may start and
// end with ("Bourassa" → "bourassa", "node_12" → "node-12"). Several hosts
// may map onto one name: Nodes tells them apart.
func NodeName(host string) string {
	if validNodeName(host) {
		return host
	}
	var b strings.Builder
	for _, r := range strings.ToLower(host) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := trimName(b.String())
	if !validNodeName(name) {
		// A dot-separated part that starts or ends with '-': no dots.
		name = trimName(strings.ReplaceAll(name, ".", "-"))
	}
	if name == "" {
		name = "host"
	}
	return name
}

// trimName cuts name to 63 characters and trims what a name may not
// start or end with.
func trimName(name string) string {
	name = strings.Trim(name, "-.")
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-.")
	}
	return name
}

func validNodeName(name string) bool {
	return len(validation.IsDNS1123Subdomain(name)) == 0 && len(validation.IsValidLabelValue(name)) == 0
}

// Nodes returns the nodes of the compute hosts (Batsim's master host
// aside), named by NodeName; where several hosts would share a name, each
// of them but the one that has it as its own name gets "-<resource id>"
// appended. The Batsim host name stays in the HostNameKey annotation.
func Nodes(hosts []Host, opts NodeOptions) ([]*corev1.Node, error) {
	count := map[string]int{}
	for _, h := range hosts {
		if !IsMaster(h) {
			count[NodeName(h.Name)]++
		}
	}
	taken := map[string]bool{}
	var nodes []*corev1.Node
	for _, h := range hosts {
		if IsMaster(h) {
			continue
		}
		name := NodeName(h.Name)
		if count[name] > 1 && name != h.Name || taken[name] {
			name = uniqueName(name, h.ID, taken)
		}
		taken[name] = true
		n, err := node(h, name, opts)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// uniqueName appends the resource id (and more if needed) to name.
func uniqueName(name string, id int, taken map[string]bool) string {
	suffix := "-" + strconv.Itoa(id)
	for i := 0; ; i++ {
		cut := min(len(name), 63-len(suffix))
		candidate := strings.TrimRight(name[:cut], "-.") + suffix
		if !taken[candidate] {
			return candidate
		}
		suffix = fmt.Sprintf("-%d-%d", id, i+1)
	}
}

// Node returns the Node of a compute host, named by NodeName.
func Node(h Host, opts NodeOptions) (*corev1.Node, error) {
	return node(h, NodeName(h.Name), opts)
}

func node(h Host, name string, opts NodeOptions) (*corev1.Node, error) {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    opts.DefaultCPU.DeepCopy(),
		corev1.ResourceMemory: opts.DefaultMemory.DeepCopy(),
		HostResource:          *resource.NewQuantity(1, resource.DecimalSI),
	}
	pods := opts.DefaultPods
	if pods == 0 {
		pods = 110
	}
	capacity[corev1.ResourcePods] = *resource.NewQuantity(pods, resource.DecimalSI)
	labels := map[string]string{
		corev1.LabelHostname:   name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
		ResourceIDKey:          strconv.Itoa(h.ID),
	}
	var taints []corev1.Taint
	keys := make([]string, 0, len(h.Properties))
	for k := range h.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		value := h.Properties[key]
		switch {
		case key == "cpu" || key == "core":
			q, err := resource.ParseQuantity(value)
			if err != nil {
				return nil, fmt.Errorf("translate: host %s: property %s=%q: %w", h.Name, key, value, err)
			}
			capacity[corev1.ResourceCPU] = q
		case key == "memory" || key == "pods":
			q, err := resource.ParseQuantity(value)
			if err != nil {
				return nil, fmt.Errorf("translate: host %s: property %s=%q: %w", h.Name, key, value, err)
			}
			capacity[corev1.ResourceName(key)] = q
		case strings.HasPrefix(key, labelPrefix):
			lk := strings.TrimPrefix(key, labelPrefix)
			if errs := validation.IsQualifiedName(lk); len(errs) > 0 {
				return nil, fmt.Errorf("translate: host %s: label key %q: %s", h.Name, lk, strings.Join(errs, "; "))
			}
			if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
				return nil, fmt.Errorf("translate: host %s: label %s value %q: %s", h.Name, lk, value, strings.Join(errs, "; "))
			}
			labels[lk] = value
		case strings.HasPrefix(key, taintPrefix):
			t, err := parseTaint(strings.TrimPrefix(key, taintPrefix), value)
			if err != nil {
				return nil, fmt.Errorf("translate: host %s: %w", h.Name, err)
			}
			taints = append(taints, t)
		case strings.Contains(key, "/"):
			if errs := validation.IsQualifiedName(key); len(errs) > 0 {
				continue // not a resource name: an ordinary property
			}
			q, err := resource.ParseQuantity(value)
			if err != nil {
				continue
			}
			capacity[corev1.ResourceName(key)] = q
		}
	}
	if len(validation.IsValidLabelValue(h.Name)) == 0 {
		labels[HostNameKey] = h.Name
	}
	for k, v := range h.ZoneProperties {
		lk := zonePrefix + k
		if len(validation.IsQualifiedName(lk)) == 0 && len(validation.IsValidLabelValue(v)) == 0 {
			labels[lk] = v
		}
	}
	version := opts.KubeletVersion
	if version == "" {
		version = "v1.37.1"
	}
	return &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{ResourceIDKey: strconv.Itoa(h.ID), HostNameKey: h.Name},
		},
		Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Phase:       corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "simulated by Batkube"},
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory"},
				{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure"},
				{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID"},
			},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion:          version,
				OperatingSystem:         "linux",
				Architecture:            "amd64",
				ContainerRuntimeVersion: "batkube://simulated",
			},
		},
	}, nil
}

func parseTaint(key, value string) (corev1.Taint, error) {
	v, effect, ok := strings.Cut(value, ":")
	if !ok {
		return corev1.Taint{}, fmt.Errorf("taint %s=%q: want <value>:<Effect>", key, value)
	}
	switch e := corev1.TaintEffect(effect); e {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return corev1.Taint{}, fmt.Errorf("taint key %q: %s", key, strings.Join(errs, "; "))
		}
		return corev1.Taint{Key: key, Value: v, Effect: e}, nil
	default:
		return corev1.Taint{}, fmt.Errorf("taint %s: unknown effect %q (NoSchedule, PreferNoSchedule or NoExecute)", key, effect)
	}
}

// ResourceID returns the Batsim resource id kept on a node.
func ResourceID(n *corev1.Node) (int, error) {
	v, ok := n.Annotations[ResourceIDKey]
	if !ok {
		v, ok = n.Labels[ResourceIDKey]
	}
	if !ok {
		return 0, fmt.Errorf("translate: node %s has no %s", n.Name, ResourceIDKey)
	}
	id, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("translate: node %s: %s=%q: %w", n.Name, ResourceIDKey, v, err)
	}
	return id, nil
}
