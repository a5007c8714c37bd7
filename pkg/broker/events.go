package broker

import (
	"context"
	"encoding/json"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/nodepool"
	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/translate"
)

// apply applies one Batsim event to the cluster.
func (r *run) apply(ctx context.Context, ev batsim.Event, now float64) error {
	switch d := ev.Data.(type) {
	case batsim.SimulationBegins:
		return r.begin(ctx, d)
	case batsim.JobSubmitted:
		if err := r.submit(ctx, d, now); err != nil {
			return err
		}
		if j := r.jobs.byID[d.JobID]; r.ended && j != nil && j.phase == jobPending {
			r.reject(ctx, j) // submitted after Options.EndAt
		}
	case batsim.JobCompleted:
		return r.completed(ctx, d)
	case batsim.JobKilled:
		for _, id := range d.JobIDs {
			if j := r.jobs.byID[id]; j != nil {
				r.leftHosts(j)
				r.removeJobPods(ctx, j)
			}
		}
	case batsim.RequestedCall:
		r.wakeups.called(r.opts.Clock, now)
	case batsim.ResourceStateChanged:
		if err := r.pool.power.changed(d); err != nil {
			return err
		}
	case batsim.Notify:
		switch d.Type {
		case batsim.NoMoreStaticJobToSubmit:
			r.noMoreJobs = true
		case batsim.EventMachineUnavailable, batsim.EventMachineAvailable:
			return r.setAvailability(ctx, d.Resources, d.Type == batsim.EventMachineAvailable)
		}
	default:
		r.log.Debug("ignoring a Batsim event", "type", ev.Type())
	}
	return nil
}

// begin creates the nodes of the platform.
func (r *run) begin(ctx context.Context, d batsim.SimulationBegins) error {
	r.computeSharing = d.AllowComputeSharing
	r.dynamicEnabled.Store(d.Config.DynamicJobsEnabled)
	r.dynamicAck = d.Config.DynamicJobsAcknowledged
	if r.opts.Preempted == PreemptedResubmit && !d.Config.DynamicJobsEnabled {
		return fmt.Errorf("broker: resubmitting preempted jobs needs Batsim's dynamic jobs: run batkube-run with --dynamic-jobs, or batsim with --enable-dynamic-jobs --acknowledge-dynamic-jobs")
	}
	r.profiles = d.Profiles
	if !d.AllowComputeSharing {
		r.log.Warn("Batsim runs without compute sharing: a node can run one pod at a time; run batsim with --enable-compute-sharing for Kubernetes semantics")
	}
	var hosts []translate.Host
	var pool []nodepool.Host
	for _, res := range d.ComputeResources {
		h := translate.Host{ID: res.ID, Name: res.Name, Properties: res.Properties, ZoneProperties: res.ZoneProperties}
		if !nodepool.Is(h.Properties) || translate.IsMaster(h) {
			hosts = append(hosts, h)
			continue
		}
		// Pool capacity: a node only once an autoscaler launches one
		// (pool.go).
		ph, err := nodepool.FromHost(h, r.opts.Nodes)
		if err != nil {
			return err
		}
		pool = append(pool, ph)
	}
	p, err := nodepool.New(pool)
	if err != nil {
		return err
	}
	r.pool.pool = p
	r.pool.power = newPoolPower(r.opts.SwitchOffPool, pool)
	if len(pool) > 0 {
		r.log.Info("pool hosts are capacity for launched nodes, not nodes", "hosts", len(pool), "instanceTypes", len(p.InstanceTypes()))
	}
	nodes, err := translate.Nodes(hosts, r.opts.Nodes)
	if err != nil {
		return err
	}
	byID := make(map[int]translate.Host, len(hosts))
	for _, h := range hosts {
		byID[h.ID] = h
	}
	devices := false
	for _, node := range nodes {
		id, err := translate.ResourceID(node)
		if err != nil {
			return err
		}
		if _, err := r.api.Create(ctx, nodesGVR, node); err != nil {
			return fmt.Errorf("creating node %s (Batsim host %q): %w", node.Name, node.Annotations[translate.HostNameKey], err)
		}
		r.nodes.add(node, id)
		slice, err := translate.ResourceSlice(byID[id], node)
		if err != nil {
			return err
		}
		if slice != nil {
			if _, err := r.api.Create(ctx, resourceSlicesGVR, slice); err != nil {
				return fmt.Errorf("publishing the devices of node %s: %w", node.Name, err)
			}
			devices = true
		}
	}
	if devices {
		if _, err := r.api.Create(ctx, deviceClassesGVR, translate.GPUDeviceClass()); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the DeviceClass %s: %w", translate.GPUDriver, err)
		}
	}
	r.begun.Store(true)
	return nil
}

// The devices of the platform's hosts (translate.ResourceSlice).
var (
	resourceSlicesGVR = resourcev1.SchemeGroupVersion.WithResource("resourceslices")
	deviceClassesGVR  = resourcev1.SchemeGroupVersion.WithResource("deviceclasses")
)

// podGroupsGVR holds the gangs of multi-host jobs (translate.GangsPodGroup).
var podGroupsGVR = schedulingv1beta1.SchemeGroupVersion.WithResource("podgroups")

// submit creates the pods of a submitted job (after its PodGroup, if any).
func (r *run) submit(ctx context.Context, d batsim.JobSubmitted, now float64) error {
	if _, known := r.jobs.byID[d.JobID]; known {
		return nil // a dynamic job, registered for a pod that exists
	}
	profile, key := d.Profile, ""
	if profile == nil {
		p, ok := r.profiles[d.JobID.Workload()][d.Job.Profile]
		if !ok {
			return fmt.Errorf("job %s: profile %q of workload %q is unknown", d.JobID, d.Job.Profile, d.JobID.Workload())
		}
		// A workload's profile: translated once for all its jobs.
		profile, key = &p, d.JobID.Workload()+"/"+d.Job.Profile
	}
	tj := translate.Job{ID: string(d.JobID), Res: d.Job.Res, Walltime: d.Job.Walltime, Fields: d.Job.Extra, ProfileKey: key}
	if key == "" || !r.profileCache.Has(key) {
		tj.Profile = make(map[string]json.RawMessage, len(profile.Fields)+1)
		for k, v := range profile.Fields {
			tj.Profile[k] = v
		}
		typ, _ := json.Marshal(profile.Type)
		tj.Profile["type"] = typ
	}
	podOpts := r.opts.Pods
	podOpts.Profiles = r.profileCache
	pods, err := translate.Pods(tj, podOpts)
	if err != nil {
		return err
	}
	group, err := translate.PodGroup(tj, podOpts)
	if err != nil {
		return err
	}
	spec := d.Job
	j := &job{id: d.JobID, pendingSince: now, spec: &spec}
	if rs, ok := r.awaiting[d.JobID]; ok {
		delete(r.awaiting, d.JobID)
		j.origin, j.attempt = rs.origin, rs.attempt
	}
	for _, p := range pods {
		j.pods = append(j.pods, podRef{p.Namespace, p.Name})
	}
	r.jobs.add(j)
	r.pods.created(j)
	if group != nil {
		if hold := r.settle.Abilities().Hold; hold != nil {
			// Created held: the policy releases it once the scheduler holds
			// all its pods, and whenever it may fit again.
			ref := settle.GroupRef{Namespace: group.Namespace, Name: group.Name}
			r.gangs[ref] = group
			hold(ref)
			group = heldGroup(group)
		}
		if _, err := r.api.Create(ctx, podGroupsGVR, group); err != nil {
			return fmt.Errorf("creating pod group %s/%s of job %s: %w", group.Namespace, group.Name, d.JobID, err)
		}
	}
	for _, p := range pods {
		if _, err := r.api.Create(ctx, podsGVR, p); err != nil {
			return fmt.Errorf("creating pod %s/%s of job %s: %w", p.Namespace, p.Name, d.JobID, err)
		}
	}
	return nil
}

// completed records the end of a job in its pods' status.
func (r *run) completed(ctx context.Context, d batsim.JobCompleted) error {
	j, ok := r.jobs.byID[d.JobID]
	if !ok {
		r.log.Warn("Batsim completed a job the broker does not know", "job", d.JobID)
		return nil
	}
	if j.phase == jobRunning {
		r.releaseJob(ctx, j)
		r.step.freed = true
	}
	r.leftHosts(j)
	r.jobs.setPhase(j, jobFinished)
	j.endState, j.endedAt = d.JobState, r.opts.Clock.Seconds()
	r.owners.ended(j, d.JobState)
	if d.JobState == batsim.JobStateRejected {
		r.removeJobPods(ctx, j)
		return nil
	}
	stage, ok := finalStages[d.JobState]
	if !ok {
		stage = finalStages[batsim.JobStateCompletedFailed]
	}
	exit := int32(d.ReturnCode)
	switch {
	case j.lost:
		stage, exit = stageLost, exitKilled
	case d.JobState == batsim.JobStateCompletedKilled:
		exit = exitKilled
	}
	if stage.phase != "Succeeded" && exit == 0 {
		exit = 1
	}
	if err := r.setStage(ctx, j.pods, stage, exit); err != nil {
		return err
	}
	if j.killSent && !j.lost {
		// Killed because a client deleted a pod: once its containers are
		// gone the kubelet removes them (those with finalizers stay,
		// terminated, until their finalizers go).
		r.removeJobPods(ctx, j)
		return nil
	}
	for _, ref := range j.pods {
		r.finishLater(ref)
	}
	return nil
}
