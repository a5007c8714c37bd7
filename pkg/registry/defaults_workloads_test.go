package registry

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Job created without a selector gets the one the real server
// generates from its uid, and the labels on its pod template, without
// which kube-controller-manager's Job controller creates no pod.
func TestJobDefaultsAndGeneratedSelector(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", UID: "u-1"}}
	ApplyDefaults(job)
	s := job.Spec
	if *s.Parallelism != 1 || *s.Completions != 1 || *s.BackoffLimit != 6 || *s.CompletionMode != batchv1.NonIndexedCompletion ||
		*s.Suspend || *s.ManualSelector || *s.PodReplacementPolicy != batchv1.TerminatingOrFailed {
		t.Errorf("defaults: %+v", s)
	}
	if s.Selector == nil || s.Selector.MatchLabels[batchv1.ControllerUidLabel] != "u-1" {
		t.Fatalf("selector %v, want the controller-uid label", s.Selector)
	}
	for k, want := range map[string]string{batchv1.ControllerUidLabel: "u-1", batchv1.JobNameLabel: "pi", "controller-uid": "u-1", "job-name": "pi"} {
		if got := s.Template.Labels[k]; got != want {
			t.Errorf("template label %s = %q, want %q", k, got, want)
		}
	}
	if s.Template.Spec.SchedulerName != DefaultSchedulerName {
		t.Errorf("template's pod spec not defaulted: %+v", s.Template.Spec)
	}

	manual := true
	own := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "m", UID: "u-2"}, Spec: batchv1.JobSpec{ManualSelector: &manual,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}}
	ApplyDefaults(own)
	if len(own.Spec.Selector.MatchLabels) != 1 || len(own.Spec.Template.Labels) != 0 {
		t.Errorf("manual selector changed: %v, labels %v", own.Spec.Selector, own.Spec.Template.Labels)
	}
}

func TestDeploymentDefaults(t *testing.T) {
	d := &appsv1.Deployment{}
	ApplyDefaults(d)
	s := d.Spec
	if *s.Replicas != 1 || s.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType ||
		s.Strategy.RollingUpdate.MaxSurge.String() != "25%" || s.Strategy.RollingUpdate.MaxUnavailable.String() != "25%" ||
		*s.RevisionHistoryLimit != 10 || *s.ProgressDeadlineSeconds != 600 {
		t.Errorf("defaults: %+v", s)
	}
}

// A claim's exact requests and sub-requests are defaulted alike: one device
// (ExactCount) unless they say otherwise, tolerations compared with Equal;
// what a request sets is kept.
func TestResourceClaimDeviceRequestDefaults(t *testing.T) {
	claim := &resourcev1.ResourceClaim{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
		{Name: "exact", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu",
			Tolerations: []resourcev1.DeviceToleration{{Key: "k"}}}},
		{Name: "all", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeAll}},
		{Name: "first", FirstAvailable: []resourcev1.DeviceSubRequest{
			{Name: "big", DeviceClassName: "gpu", Count: 2, Tolerations: []resourcev1.DeviceToleration{{Key: "k", Operator: resourcev1.DeviceTolerationOpExists}}},
			{Name: "small", DeviceClassName: "gpu", Tolerations: []resourcev1.DeviceToleration{{Key: "k"}}},
		}},
	}}}}
	ApplyDefaults(claim)
	reqs := claim.Spec.Devices.Requests
	exact, all, big, small := reqs[0].Exactly, reqs[1].Exactly, reqs[2].FirstAvailable[0], reqs[2].FirstAvailable[1]
	if exact.AllocationMode != resourcev1.DeviceAllocationModeExactCount || exact.Count != 1 || exact.Tolerations[0].Operator != resourcev1.DeviceTolerationOpEqual {
		t.Errorf("exact request: %+v", exact)
	}
	if all.AllocationMode != resourcev1.DeviceAllocationModeAll || all.Count != 0 {
		t.Errorf("a request for all devices: %+v, want its mode kept and no count", all)
	}
	if big.AllocationMode != resourcev1.DeviceAllocationModeExactCount || big.Count != 2 || big.Tolerations[0].Operator != resourcev1.DeviceTolerationOpExists {
		t.Errorf("sub-request big: %+v, want its count and operator kept", big)
	}
	if small.AllocationMode != resourcev1.DeviceAllocationModeExactCount || small.Count != 1 || small.Tolerations[0].Operator != resourcev1.DeviceTolerationOpEqual {
		t.Errorf("sub-request small: %+v", small)
	}
}
