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
	labelPrefix   = "label:"
	taintPrefix   = "taint:"
	zonePrefix    = "batkube.io/zone-"
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

// Node returns the Node of a compute host.
func Node(h Host, opts NodeOptions) (*corev1.Node, error) {
	if errs := validation.IsDNS1123Subdomain(h.Name); len(errs) > 0 {
		return nil, fmt.Errorf("translate: host %q cannot be a node name: %s", h.Name, strings.Join(errs, "; "))
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    opts.DefaultCPU.DeepCopy(),
		corev1.ResourceMemory: opts.DefaultMemory.DeepCopy(),
	}
	pods := opts.DefaultPods
	if pods == 0 {
		pods = 110
	}
	capacity[corev1.ResourcePods] = *resource.NewQuantity(pods, resource.DecimalSI)
	labels := map[string]string{
		corev1.LabelHostname:   h.Name,
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
			Name:        h.Name,
			Labels:      labels,
			Annotations: map[string]string{ResourceIDKey: strconv.Itoa(h.ID)},
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
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: h.Name}},
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
