package broker

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/translate"
)

// Dynamic jobs: a pod created through the API during a simulation becomes
// a Batsim job (REGISTER_JOB), when Batsim runs with dynamic jobs.

// serviceDelay is the length of the Batsim job of a pod that runs until it
// is deleted (a service): longer than any simulation.
const serviceDelay = 1e12

// registerDynamic turns a pod created through the API into a Batsim job.
func (r *run) registerDynamic(ctx context.Context, pod *corev1.Pod) error {
	if !r.dynamicEnabled.Load() || r.registrationOK.Load() {
		return nil // refused by admission; nothing to do
	}
	now := r.opts.Clock.Seconds()
	delay := r.opts.DynamicJobDelay.Seconds()
	v, annotated := pod.Annotations[DelayAnnotation]
	service := !annotated && metav1.GetControllerOf(pod) != nil && pod.Spec.RestartPolicy == corev1.RestartPolicyAlways
	if service {
		// A controller's pod that restarts its containers for ever (a
		// Deployment's): it runs until deleted, or until the rest of the
		// simulation is over (endServices).
		delay = serviceDelay
	}
	if annotated {
		d, err := strconv.ParseFloat(v, 64)
		if err != nil || d < 0 {
			r.log.Warn("ignoring a malformed annotation", "pod", pod.Name, "annotation", DelayAnnotation, "value", v)
		} else {
			delay = d
		}
	}
	exit := 0
	if v, ok := pod.Annotations[ExitCodeAnnotation]; ok {
		if c, err := strconv.Atoi(v); err != nil || c < 0 || c > 255 {
			r.log.Warn("ignoring a malformed annotation", "pod", pod.Name, "annotation", ExitCodeAnnotation, "value", v)
		} else {
			exit = c
		}
	}
	profileName := "batkube-delay-" + strconv.FormatFloat(delay, 'f', -1, 64)
	fields := map[string]json.RawMessage{}
	fields["delay"], _ = json.Marshal(delay)
	if exit != 0 {
		profileName += "-ret-" + strconv.Itoa(exit)
		fields["ret"] = json.RawMessage(strconv.Itoa(exit))
	}
	id := batsim.JobID("dyn!" + pod.Namespace + "." + pod.Name)
	if !r.profilesSent[profileName] {
		r.step.decisions = append(r.step.decisions, batsim.RegisterProfile{WorkloadName: "dyn", ProfileName: profileName,
			Profile: batsim.Profile{Type: "delay", Fields: fields}})
		r.profilesSent[profileName] = true
	}
	walltime, ok := translate.Walltime(&pod.Spec)
	if !ok {
		walltime = batsim.NoWalltime
	}
	r.step.decisions = append(r.step.decisions, batsim.RegisterJob{JobID: id, Job: batsim.Job{ID: id, Subtime: now, Res: 1, Profile: profileName, Walltime: walltime}})
	ref := podRef{pod.Namespace, pod.Name}
	j := &job{id: id, pods: []podRef{ref}, pendingSince: now, dynamic: true,
		owned: metav1.GetControllerOf(pod) != nil || len(pod.Finalizers) > 0, service: service}
	r.jobs.add(j)
	r.pods.created(j)
	r.owners.podCreated(j, pod, now)
	if pod.Spec.NodeName != "" { // created already bound
		return r.bound(ctx, j, ref, pod)
	}
	return nil
}

// AdmitCreate implements apiserver.Admitter: during a simulation, a pod
// created by a client becomes a dynamic job, which Batsim must allow.
//
// A node an autoscaler launches (LaunchedProviderPrefix) is admitted with
// the not-ready taint its kubelet would register it with (pool.go).
func (b *Broker) AdmitCreate(gvr schema.GroupVersionResource, obj runtime.Object) error {
	if gvr.GroupResource() == nodesGVR.GroupResource() {
		if node, ok := obj.(*corev1.Node); ok {
			admitLaunchedNode(node)
		}
		return nil
	}
	if gvr.GroupResource() != podsGVR.GroupResource() {
		return nil
	}
	if !b.begun.Load() {
		return apierrors.NewServiceUnavailable("the simulation has not begun yet: pods come from the workload")
	}
	if !b.dynamicEnabled.Load() {
		return apierrors.NewForbidden(podsGVR.GroupResource(), "",
			errors.New("the simulation creates pods from its workload; pods created through the API need Batsim's dynamic jobs (batsim --enable-dynamic-jobs --acknowledge-dynamic-jobs)"))
	}
	if b.registrationOK.Load() {
		return apierrors.NewForbidden(podsGVR.GroupResource(), "",
			errors.New("the simulation is ending: its workload is over and Batsim was told no more jobs come"))
	}
	return nil
}

// endServices kills the jobs of service pods once nothing else is left to
// happen (no job to submit, no object to create, nothing pending, nothing
// else running), so that the simulation ends.
func (r *run) endServices() {
	if !r.noMoreJobs || len(r.objects) > 0 || r.jobs.pending > 0 || r.jobs.running == 0 || len(r.awaiting) > 0 {
		return
	}
	if _, owe := r.controllersOwe(); owe {
		return // a Job's controller will create pods (after its back-off)
	}
	var services []*job
	for _, j := range r.jobs.sortedByID() {
		if j.phase != jobRunning {
			continue
		}
		if !j.service {
			return
		}
		services = append(services, j)
	}
	for _, j := range services {
		r.log.Info("ending a service pod: the rest of the simulation is over", "job", j.id)
		r.kill(j)
	}
}
