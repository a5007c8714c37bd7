// Package nodepool is the capacity a simulated cloud can provide: the hosts
// of a Batsim platform that carry the property "pool" are not nodes at the
// start of a run but free capacity, by instance type (property
// "instance_type", and optionally "price" per hour), which an autoscaler
// (Karpenter's KWOK provider) launches nodes onto. The broker maps each
// such Node onto a free host of its instance type and gives the host back
// when the Node is deleted; batkube-run writes the pool's instance types
// for Karpenter (InstanceTypes).
package nodepool

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/batkube/batkube/pkg/translate"
)

// The host properties of a pool host.
const (
	// PoolProperty marks a host as pool capacity (its value names the
	// pool, for the reader; every pool host is one pool).
	PoolProperty = "pool"
	// InstanceTypeProperty is the instance type the host is an instance
	// of (required on a pool host), e.g. "c-8x-amd64-linux".
	InstanceTypeProperty = "instance_type"
	// PriceProperty is the price of the instance type per hour (optional,
	// default 0).
	PriceProperty = "price"
	// SleepPstatesProperty is Batsim's own: the host's power states
	// "sleep:switch_off:switch_on" (several triplets comma-separated), read
	// by Batsim run with --energy. A pool host that has it can be switched
	// to its (first) sleep pstate while no node is mapped onto it.
	SleepPstatesProperty = "sleep_pstates"
)

// ComputePstate is the power state a sleeping pool host is switched back
// to: Batsim does not tell a host's initial pstate, so pool hosts must
// compute in pstate 0 (their pstate attribute 0, or none).
const ComputePstate = "0"

// Is reports whether a host's properties make it pool capacity.
func Is(properties map[string]string) bool {
	_, ok := properties[PoolProperty]
	return ok
}

// Host is a pool host.
type Host struct {
	ID           int    // Batsim resource id
	Name         string // Batsim host name
	InstanceType string
	Price        float64 // per hour
	// Resources are the host's cpu, memory and pods, as the node of an
	// ordinary host would have them (translate.Node: its cpu/core and
	// memory properties, or the defaults).
	Resources corev1.ResourceList
	// SleepPstate is the power state it sleeps in (its sleep_pstates'
	// first triplet); "" if it cannot be switched off.
	SleepPstate string
}

// FromHost reads a pool host (Is(h.Properties)).
func FromHost(h translate.Host, opts translate.NodeOptions) (Host, error) {
	it := h.Properties[InstanceTypeProperty]
	if it == "" {
		return Host{}, fmt.Errorf("nodepool: host %s has the property %s but no %s", h.Name, PoolProperty, InstanceTypeProperty)
	}
	price := 0.0
	if v, ok := h.Properties[PriceProperty]; ok {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || p < 0 {
			return Host{}, fmt.Errorf("nodepool: host %s: %s=%q: want a number >= 0", h.Name, PriceProperty, v)
		}
		price = p
	}
	sleep, err := sleepPstate(h.Properties[SleepPstatesProperty])
	if err != nil {
		return Host{}, fmt.Errorf("nodepool: host %s: %s: %w", h.Name, SleepPstatesProperty, err)
	}
	node, err := translate.Node(h, opts)
	if err != nil {
		return Host{}, fmt.Errorf("nodepool: %w", err)
	}
	res := corev1.ResourceList{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
		if q, ok := node.Status.Capacity[name]; ok {
			res[name] = q
		}
	}
	return Host{ID: h.ID, Name: h.Name, InstanceType: it, Price: price, Resources: res, SleepPstate: sleep}, nil
}

// sleepPstate reads Batsim's sleep_pstates property ("sleep:off:on", or
// several such triplets comma-separated): the first sleep pstate, "" for
// none.
func sleepPstate(v string) (string, error) {
	if strings.TrimSpace(v) == "" {
		return "", nil
	}
	var sleep string
	for i, triplet := range strings.Split(v, ",") {
		parts := strings.Split(strings.TrimSpace(triplet), ":")
		if len(parts) != 3 {
			return "", fmt.Errorf("%q: want sleep:switch_off:switch_on power state numbers (comma-separated triplets)", v)
		}
		for _, p := range parts {
			if n, err := strconv.Atoi(p); err != nil || n < 0 {
				return "", fmt.Errorf("%q: %q is not a power state number", v, p)
			}
		}
		if parts[0] == ComputePstate {
			return "", fmt.Errorf("%q: the sleep pstate %s is the one pool hosts compute in", v, parts[0])
		}
		if i == 0 {
			sleep = parts[0]
		}
	}
	return sleep, nil
}

// Pool is the pool's hosts, free or in use by a node. Not safe for
// concurrent use.
type Pool struct {
	hosts []Host            // every pool host, by id
	free  map[string][]Host // by instance type, by id
	used  map[string]Host   // by node name
	// usedIDs are the ids of the hosts in used.
	usedIDs map[int]bool
}

// New returns a pool of hosts, all free. The hosts of one instance type
// must have the same price and resources.
func New(hosts []Host) (*Pool, error) {
	p := &Pool{hosts: slices.Clone(hosts), free: map[string][]Host{}, used: map[string]Host{}, usedIDs: map[int]bool{}}
	slices.SortFunc(p.hosts, func(a, b Host) int { return cmp.Compare(a.ID, b.ID) })
	first := map[string]Host{}
	for _, h := range p.hosts {
		if f, ok := first[h.InstanceType]; ok {
			if f.Price != h.Price || !sameResources(f.Resources, h.Resources) {
				return nil, fmt.Errorf("nodepool: hosts %s and %s are both of instance type %s but differ in price or resources", f.Name, h.Name, h.InstanceType)
			}
		} else {
			first[h.InstanceType] = h
		}
		p.free[h.InstanceType] = append(p.free[h.InstanceType], h)
	}
	return p, nil
}

func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if o, ok := b[name]; !ok || o.Cmp(q) != 0 {
			return false
		}
	}
	return true
}

// Len is the number of pool hosts.
func (p *Pool) Len() int { return len(p.hosts) }

// Take maps node onto the free host of instance type it with the lowest
// id; false if none is free.
func (p *Pool) Take(it, node string) (Host, bool) {
	free := p.free[it]
	if len(free) == 0 {
		return Host{}, false
	}
	h := free[0]
	p.free[it] = free[1:]
	p.used[node] = h
	p.usedIDs[h.ID] = true
	return h, true
}

// Release gives back the host of node; false if node holds none.
func (p *Pool) Release(node string) (Host, bool) {
	h, ok := p.used[node]
	if !ok {
		return Host{}, false
	}
	delete(p.used, node)
	delete(p.usedIDs, h.ID)
	free := append(p.free[h.InstanceType], h)
	slices.SortFunc(free, func(a, b Host) int { return cmp.Compare(a.ID, b.ID) })
	p.free[h.InstanceType] = free
	return h, true
}

// HostOf returns the host node is mapped onto.
func (p *Pool) HostOf(node string) (Host, bool) {
	h, ok := p.used[node]
	return h, ok
}

// Used reports whether the host of resource id is mapped onto a node.
func (p *Pool) Used(id int) bool { return p.usedIDs[id] }

// Free is the number of free hosts of instance type it.
func (p *Pool) Free(it string) int { return len(p.free[it]) }

// InUse is the number of hosts mapped onto nodes.
func (p *Pool) InUse() int { return len(p.used) }

// Known reports whether it is an instance type of the pool.
func (p *Pool) Known(it string) bool {
	for _, h := range p.hosts {
		if h.InstanceType == it {
			return true
		}
	}
	return false
}

// Zone is the topology zone of every offering of the pool's instance types.
const Zone = "batkube-zone"

// InstanceType is an entry of the instance types file of Karpenter's KWOK
// provider (its INSTANCE_TYPES_FILE_PATH; kwok/cloudprovider's
// InstanceTypeOptions).
type InstanceType struct {
	Name             string              `json:"name"`
	Offerings        []Offering          `json:"offerings"`
	Architecture     string              `json:"architecture"`
	OperatingSystems []string            `json:"operatingSystems"`
	Resources        corev1.ResourceList `json:"resources"`
}

// Offering is an offering of an instance type (KWOKOffering).
type Offering struct {
	Price float64 `json:"Price"`
	// Available: the KWOK provider sets every offering available when it
	// reads the file, whatever it says; a launch beyond the free hosts of
	// a type gets a Node that the broker maps onto no host (see the
	// broker's pool.go).
	Available    bool                             `json:"Available"`
	Requirements []corev1.NodeSelectorRequirement `json:"Requirements"`
}

// InstanceTypes returns the pool's instance types, one per distinct
// instance type, by name: its hosts' resources, amd64 and linux (as the
// nodes of ordinary hosts), one on-demand offering in Zone at the hosts'
// price.
func (p *Pool) InstanceTypes() []InstanceType {
	var out []InstanceType
	seen := map[string]bool{}
	for _, h := range p.hosts {
		if seen[h.InstanceType] {
			continue
		}
		seen[h.InstanceType] = true
		out = append(out, InstanceType{
			Name: h.InstanceType, Architecture: "amd64", OperatingSystems: []string{"linux"},
			Resources: h.Resources.DeepCopy(),
			Offerings: []Offering{{Price: h.Price, Available: true, Requirements: []corev1.NodeSelectorRequirement{
				{Key: CapacityTypeLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"on-demand"}},
				{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{Zone}},
			}}},
		})
	}
	slices.SortFunc(out, func(a, b InstanceType) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// CapacityTypeLabel is Karpenter's label of an offering's capacity type.
const CapacityTypeLabel = "karpenter.sh/capacity-type"
