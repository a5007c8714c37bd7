package openb

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// PendingPolicy says what Convert does with the pods the trace never
// scheduled (no scheduled_time, phase Pending).
type PendingPolicy string

const (
	// PendingDrop (the default, also as "") drops them: the trace gives no
	// run time for them.
	PendingDrop PendingPolicy = "drop"
	// PendingKeep replays them for as long as they existed: from
	// creation_time to deletion_time.
	PendingKeep PendingPolicy = "keep"
)

// Options tune Convert.
type Options struct {
	// From and To bound the creation times kept, in the trace's seconds:
	// From inclusive, To exclusive; To <= 0 means no upper bound.
	From, To float64
	// MaxPods keeps at most the first MaxPods pods (after cleaning and the
	// window) in creation order; 0 keeps them all.
	MaxPods int
	// Pending is what becomes of the pods the trace never scheduled.
	Pending PendingPolicy
	// KeepAbsoluteTimes keeps the trace's creation times as submission
	// times instead of shifting the first kept pod to 0.
	KeepAbsoluteTimes bool
	// ExclusiveGPUs is the cluster without GPU sharing: a share of a GPU
	// asks for the whole GPU (pair it with PlatformOptions.ExclusiveGPUs).
	ExclusiveGPUs bool
	// NoPriority gives no pod a PriorityClass.
	NoPriority bool
}

// Reason says why a pod was dropped.
type Reason string

// The reasons, in the order Convert applies them.
const (
	ReasonNeverScheduled  Reason = "never-scheduled"
	ReasonNoDeletionTime  Reason = "no-deletion-time"
	ReasonNoDuration      Reason = "no-duration"
	ReasonInconsistentGPU Reason = "inconsistent-gpu"
	ReasonSharedMultiGPU  Reason = "shared-multi-gpu"
	ReasonFitsNoNode      Reason = "fits-no-node"
	ReasonBeforeFrom      Reason = "before-from"
	ReasonAfterTo         Reason = "after-to"
	ReasonBeyondMaxPods   Reason = "beyond-max-pods"
	reasonNone            Reason = ""
)

// reasonDescriptions says what each reason means, in report order.
func reasonDescriptions() []struct {
	reason Reason
	what   string
} {
	return []struct {
		reason Reason
		what   string
	}{
		{ReasonNeverScheduled, "never scheduled in the trace (no scheduled_time), dropped by --pending=drop"},
		{ReasonNoDeletionTime, "no deletion_time: no run time to replay"},
		{ReasonNoDuration, "deletion_time not after the start: nothing to replay"},
		{ReasonInconsistentGPU, "num_gpu and gpu_milli disagree (one of them 0, or gpu_milli above 1000)"},
		{ReasonSharedMultiGPU, "a share (gpu_milli < 1000) of several GPUs, which one DRA request cannot express"},
		{ReasonFitsNoNode, "bigger than every node (cpu, memory, GPUs of an accepted model): could never run"},
		{ReasonBeforeFrom, "created before --from"},
		{ReasonAfterTo, "created at or after --to"},
		{ReasonBeyondMaxPods, "past --max-pods"},
	}
}

// Workload is a converted trace: the Batsim jobs and profiles, and the
// Kubernetes objects their pods name.
type Workload struct {
	NbRes           int
	Description     string
	Jobs            []Job
	Profiles        map[string]Profile
	ClaimTemplates  []ClaimTemplate
	PriorityClasses []PriorityClass
}

// Job is one Batsim job: one pod of the trace.
type Job struct {
	ID      string  `json:"id"`
	Subtime float64 `json:"subtime"`
	Res     int     `json:"res"`
	Profile string  `json:"profile"`
}

// Profile is a delay profile with the pod's requests and its template.
type Profile struct {
	Type        string       `json:"type"`
	Delay       float64      `json:"delay"`
	CPU         json.Number  `json:"cpu,omitempty"`
	Memory      string       `json:"memory,omitempty"`
	PodTemplate *PodTemplate `json:"pod_template,omitempty"`
}

// PodTemplate is the part of a pod a profile's pod_template sets.
type PodTemplate struct {
	Spec PodSpec `json:"spec"`
}

// PodSpec holds the priority class and the GPU claim of a pod.
type PodSpec struct {
	PriorityClassName string         `json:"priorityClassName,omitempty"`
	ResourceClaims    []PodClaim     `json:"resourceClaims,omitempty"`
	Containers        []PodContainer `json:"containers,omitempty"`
}

// PodClaim names the claim template of a pod's GPUs.
type PodClaim struct {
	Name                      string `json:"name"`
	ResourceClaimTemplateName string `json:"resourceClaimTemplateName"`
}

// PodContainer is the container that uses the claim.
type PodContainer struct {
	Name      string             `json:"name"`
	Resources ContainerResources `json:"resources"`
}

// ContainerResources lists the pod claims a container uses.
type ContainerResources struct {
	Claims []ContainerClaim `json:"claims"`
}

// ContainerClaim names a pod claim a container uses.
type ContainerClaim struct {
	Name string `json:"name"`
}

// ClaimTemplate is a ResourceClaimTemplate a GPU request is asked through.
type ClaimTemplate struct {
	Name    string
	Request GPURequest
}

// gpuClaimName is the name of the GPU claim in a pod and its container.
const gpuClaimName = "gpu"

// Report says what Convert kept and dropped.
type Report struct {
	Read, Kept              int
	Dropped                 map[Reason]int
	FirstSubmit, LastSubmit float64 // creation times of the first and last kept pods
	Shift                   float64 // subtracted from creation times
	ByQoS                   map[string]int
	NoPriority              bool // Options.NoPriority: no qos mapped onto a PriorityClass
	ClaimTemplates          int
}

// DroppedTotal is the number of pods dropped for any reason.
func (r Report) DroppedTotal() int {
	n := 0
	for _, c := range r.Dropped {
		n += c
	}
	return n
}

// Convert turns the pods of a trace into a Batsim workload for a platform
// of the nodes (see the package documentation for the rules).
func Convert(nodes []Node, pods []Pod, opts Options) (Workload, Report, error) {
	rep := Report{Read: len(pods), Dropped: map[Reason]int{}, ByQoS: map[string]int{}, NoPriority: opts.NoPriority}
	switch opts.Pending {
	case "", PendingDrop, PendingKeep:
	default:
		return Workload{}, rep, fmt.Errorf("openb: pending policy %q: want %q or %q", opts.Pending, PendingDrop, PendingKeep)
	}
	if len(nodes) == 0 {
		return Workload{}, rep, errors.New("openb: no node")
	}
	type kept struct {
		pod      Pod
		duration float64
		gpu      GPURequest
	}
	var keep []kept
	for _, p := range pods {
		d, gpu, reason := replayable(p, nodes, opts)
		if reason != reasonNone {
			rep.Dropped[reason]++
			continue
		}
		keep = append(keep, kept{pod: p, duration: d, gpu: gpu})
	}
	sort.SliceStable(keep, func(i, j int) bool {
		if keep[i].pod.Created != keep[j].pod.Created {
			return keep[i].pod.Created < keep[j].pod.Created
		}
		return keep[i].pod.Name < keep[j].pod.Name
	})
	w := Workload{NbRes: len(nodes), Profiles: map[string]Profile{}}
	var templates claimTemplates
	classes := map[string]bool{}
	for _, k := range keep {
		switch {
		case k.pod.Created < opts.From:
			rep.Dropped[ReasonBeforeFrom]++
			continue
		case opts.To > 0 && k.pod.Created >= opts.To:
			rep.Dropped[ReasonAfterTo]++
			continue
		case opts.MaxPods > 0 && len(w.Jobs) >= opts.MaxPods:
			rep.Dropped[ReasonBeyondMaxPods]++
			continue
		}
		if len(w.Jobs) == 0 && !opts.KeepAbsoluteTimes {
			rep.Shift = k.pod.Created
		}
		prof := Profile{Type: "delay", Delay: k.duration}
		if k.pod.CPUMilli > 0 {
			prof.CPU = json.Number(cores(k.pod.CPUMilli))
		}
		if k.pod.MemMiB > 0 {
			prof.Memory = strconv.FormatInt(k.pod.MemMiB, 10) + "Mi"
		}
		var spec PodSpec
		if c, ok := QoSClass(k.pod.QoS); ok && !opts.NoPriority {
			spec.PriorityClassName = c.Name
			if !classes[c.Name] {
				classes[c.Name] = true
				w.PriorityClasses = append(w.PriorityClasses, c)
			}
		}
		if k.gpu.Count > 0 {
			spec.ResourceClaims = []PodClaim{{Name: gpuClaimName, ResourceClaimTemplateName: templates.name(k.gpu)}}
			spec.Containers = []PodContainer{{Name: "main", Resources: ContainerResources{Claims: []ContainerClaim{{Name: gpuClaimName}}}}}
		}
		if spec.PriorityClassName != "" || len(spec.ResourceClaims) > 0 {
			prof.PodTemplate = &PodTemplate{Spec: spec}
		}
		name := profileName(prof)
		w.Profiles[name] = prof
		w.Jobs = append(w.Jobs, Job{ID: k.pod.Name, Subtime: k.pod.Created - rep.Shift, Res: 1, Profile: name})
		rep.ByQoS[k.pod.QoS]++
		if len(w.Jobs) == 1 {
			rep.FirstSubmit = k.pod.Created
		}
		rep.LastSubmit = k.pod.Created
	}
	rep.Kept = len(w.Jobs)
	for _, r := range templates.order {
		w.ClaimTemplates = append(w.ClaimTemplates, ClaimTemplate{Name: templates.byKey[r.key()], Request: r})
	}
	sort.Slice(w.PriorityClasses, func(i, j int) bool { return w.PriorityClasses[i].Value > w.PriorityClasses[j].Value })
	rep.ClaimTemplates = len(w.ClaimTemplates)
	if len(w.Jobs) == 0 {
		return w, rep, errors.New("openb: no pod left to convert")
	}
	return w, rep, nil
}

// replayable returns a pod's run time and GPU request, or why it cannot
// be replayed.
func replayable(p Pod, nodes []Node, opts Options) (float64, GPURequest, Reason) {
	start := p.Scheduled
	if start == nil {
		if opts.Pending != PendingKeep {
			return 0, GPURequest{}, ReasonNeverScheduled
		}
		start = &p.Created
	}
	if p.Deleted == nil {
		return 0, GPURequest{}, ReasonNoDeletionTime
	}
	d := *p.Deleted - *start
	if !(d > 0) {
		return 0, GPURequest{}, ReasonNoDuration
	}
	gpu, reason := gpuRequest(p, opts.ExclusiveGPUs)
	if reason != reasonNone {
		return 0, GPURequest{}, reason
	}
	for _, n := range nodes {
		if n.CPUMilli >= p.CPUMilli && n.MemMiB >= p.MemMiB && gpu.fits(n, !opts.ExclusiveGPUs) {
			return d, gpu, reasonNone
		}
	}
	return 0, GPURequest{}, ReasonFitsNoNode
}

// cores writes thousandths of a core as a decimal number of cores.
func cores(milli int64) string {
	s := strconv.FormatInt(milli/1000, 10)
	if f := milli % 1000; f != 0 {
		frac := fmt.Sprintf("%03d", f)
		for frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		s += "." + frac
	}
	return s
}

// profileName names a profile after its content, so that identical pods
// share a profile and the same trace gives the same workload:
// d3600_c6_m12288Mi_gpu-460m_openb-best-effort.
func profileName(p Profile) string {
	name := "d" + strconv.FormatFloat(p.Delay, 'f', -1, 64)
	if p.CPU != "" {
		name += "_c" + string(p.CPU)
	}
	if p.Memory != "" {
		name += "_m" + p.Memory
	}
	if p.PodTemplate != nil {
		for _, c := range p.PodTemplate.Spec.ResourceClaims {
			name += "_" + c.ResourceClaimTemplateName
		}
		if pc := p.PodTemplate.Spec.PriorityClassName; pc != "" {
			name += "_" + pc
		}
	}
	return name
}
