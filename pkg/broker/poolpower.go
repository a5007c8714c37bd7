package broker

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/nodepool"
)

// Switching pool hosts off (Options.SwitchOffPool, Batsim run with
// --energy): a pool host that declares sleep pstates sleeps while no node
// is mapped onto it and no job of it is still on it, so that Batsim's
// energy accounting counts it asleep rather than idle. A launched node is
// Ready once its provisioning delay has passed and its host is back on.
//
// Real Batsim 4.2.1 answers each SET_RESOURCE_STATE with one
// RESOURCE_STATE_CHANGED when every host of the request has switched, and
// aborts on a request for a host running a job, or on EXECUTE_JOB onto a
// host that is not on; a request for a host already switching is never
// answered. So the broker asks one host at a time, only for a host whose
// last switch is done and that no job is on, and runs jobs only on Ready
// nodes, whose hosts are on.

// hostPower is the power state of a pool host as the broker last asked
// Batsim and heard back.
type hostPower int

const (
	powerOn hostPower = iota
	powerSwitchingOff
	powerOff
	powerSwitchingOn
)

func (p hostPower) String() string {
	return [...]string{"on", "switching off", "off", "switching on"}[p]
}

// poolPower follows the sleepable pool hosts.
type poolPower struct {
	hosts map[int]*sleepableHost // by resource id; nil when not switching
	// order is the hosts by id, for a deterministic order of requests.
	order []*sleepableHost
}

type sleepableHost struct {
	host  nodepool.Host
	state hostPower
	// jobs counts the jobs started on the host that have not ended.
	jobs int
}

// newPoolPower follows the pool hosts that can sleep, if enabled.
func newPoolPower(enabled bool, hosts []nodepool.Host) poolPower {
	if !enabled {
		return poolPower{}
	}
	p := poolPower{hosts: map[int]*sleepableHost{}}
	for _, h := range hosts {
		if h.SleepPstate == "" {
			continue
		}
		sh := &sleepableHost{host: h}
		p.hosts[h.ID] = sh
		p.order = append(p.order, sh)
	}
	slices.SortFunc(p.order, func(a, b *sleepableHost) int { return cmp.Compare(a.host.ID, b.host.ID) })
	return p
}

// isOn reports whether a host can run jobs: on, or not one that sleeps.
func (p *poolPower) isOn(id int) bool {
	h := p.hosts[id]
	return h == nil || h.state == powerOn
}

// jobStarted and jobEnded count the jobs on each sleepable host; ids are
// the job's allocation.
func (p *poolPower) jobStarted(ids []int) {
	for _, id := range ids {
		if h := p.hosts[id]; h != nil {
			h.jobs++
		}
	}
}

func (p *poolPower) jobEnded(ids []int) {
	for _, id := range ids {
		if h := p.hosts[id]; h != nil && h.jobs > 0 {
			h.jobs--
		}
	}
}

// changed takes in Batsim's RESOURCE_STATE_CHANGED (a node waiting for a
// host that came on is marked Ready after the step's events).
func (p *poolPower) changed(d batsim.ResourceStateChanged) error {
	for _, id := range d.Resources.IDs() {
		h := p.hosts[id]
		if h == nil {
			continue // not a host the broker switches
		}
		switch {
		case h.state == powerSwitchingOff && d.State == h.host.SleepPstate:
			h.state = powerOff
		case h.state == powerSwitchingOn && d.State == nodepool.ComputePstate:
			h.state = powerOn
		default:
			return fmt.Errorf("pool host %s (resource %d) is %s, and Batsim says it changed to pstate %s", h.host.Name, id, h.state, d.State)
		}
	}
	return nil
}

// switches returns the requests that bring each host whose last switch is
// done to the state it should be in: on while a node is mapped onto it
// (inUse) or a job is still on it, asleep otherwise.
func (p *poolPower) switches(inUse func(id int) bool) []batsim.EventData {
	var out []batsim.EventData
	for _, h := range p.order {
		wantOn := h.jobs > 0 || inUse(h.host.ID)
		var to string
		switch {
		case h.state == powerOn && !wantOn:
			h.state, to = powerSwitchingOff, h.host.SleepPstate
		case h.state == powerOff && wantOn:
			h.state, to = powerSwitchingOn, nodepool.ComputePstate
		default:
			continue
		}
		set, _ := batsim.IntervalSetFromIDs([]int{h.host.ID}) // one id: no error
		out = append(out, batsim.SetResourceState{Resources: set, State: to})
	}
	return out
}
