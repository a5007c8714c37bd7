package registry

import (
	"math"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The labels the real server puts on a Job's pod template, and the
// selector it generates from the first (batch/v1's Job strategy).
const (
	jobControllerUIDLabel       = batchv1.ControllerUidLabel // batch.kubernetes.io/controller-uid
	jobNameLabel                = batchv1.JobNameLabel       // batch.kubernetes.io/job-name
	legacyJobControllerUIDLabel = "controller-uid"
	legacyJobNameLabel          = "job-name"
)

// defaultJob applies batch/v1's defaults (SetDefaults_Job) and, once the
// Job has its uid, generates its selector and pod labels as the real
// server's strategy does on create unless spec.manualSelector is true: the
// Job controller creates no pod for a Job without them.
func defaultJob(job *batchv1.Job) {
	spec := &job.Spec
	one := func() *int32 { v := int32(1); return &v }
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions, spec.Parallelism = one(), one()
	}
	if spec.Parallelism == nil {
		spec.Parallelism = one()
	}
	if spec.BackoffLimit == nil {
		limit := int32(6)
		if spec.BackoffLimitPerIndex != nil {
			limit = math.MaxInt32
		}
		spec.BackoffLimit = &limit
	}
	if len(job.Labels) == 0 && len(spec.Template.Labels) > 0 {
		job.Labels = make(map[string]string, len(spec.Template.Labels))
		for k, v := range spec.Template.Labels {
			job.Labels[k] = v
		}
	}
	if spec.CompletionMode == nil {
		mode := batchv1.NonIndexedCompletion
		spec.CompletionMode = &mode
	}
	if spec.Suspend == nil {
		suspend := false
		spec.Suspend = &suspend
	}
	if spec.PodReplacementPolicy == nil {
		policy := batchv1.TerminatingOrFailed
		if spec.PodFailurePolicy != nil {
			policy = batchv1.Failed
		}
		spec.PodReplacementPolicy = &policy
	}
	if spec.ManualSelector == nil {
		manual := false
		spec.ManualSelector = &manual
	}
	defaultPodSpec(&spec.Template.Spec)
	if *spec.ManualSelector || spec.Selector != nil || job.UID == "" {
		return
	}
	uid := string(job.UID)
	if spec.Template.Labels == nil {
		spec.Template.Labels = map[string]string{}
	}
	spec.Template.Labels[legacyJobControllerUIDLabel] = uid
	spec.Template.Labels[legacyJobNameLabel] = job.Name
	spec.Template.Labels[jobControllerUIDLabel] = uid
	spec.Template.Labels[jobNameLabel] = job.Name
	spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{jobControllerUIDLabel: uid}}
}

// defaultReplicaSet applies apps/v1's defaults to a ReplicaSet.
func defaultReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		one := int32(1)
		rs.Spec.Replicas = &one
	}
	defaultPodSpec(&rs.Spec.Template.Spec)
}

// defaultDeployment applies apps/v1's defaults to a Deployment
// (SetDefaults_Deployment).
func defaultDeployment(d *appsv1.Deployment) {
	spec := &d.Spec
	if spec.Replicas == nil {
		one := int32(1)
		spec.Replicas = &one
	}
	if spec.Strategy.Type == "" {
		spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if spec.Strategy.RollingUpdate == nil {
			spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		quarter := intstr.FromString("25%")
		if spec.Strategy.RollingUpdate.MaxUnavailable == nil {
			spec.Strategy.RollingUpdate.MaxUnavailable = &quarter
		}
		if spec.Strategy.RollingUpdate.MaxSurge == nil {
			surge := quarter
			spec.Strategy.RollingUpdate.MaxSurge = &surge
		}
	}
	if spec.RevisionHistoryLimit == nil {
		limit := int32(10)
		spec.RevisionHistoryLimit = &limit
	}
	if spec.ProgressDeadlineSeconds == nil {
		deadline := int32(600)
		spec.ProgressDeadlineSeconds = &deadline
	}
	defaultPodSpec(&spec.Template.Spec)
}

// defaultDeviceRequests applies resource.k8s.io/v1's defaults to a claim's
// device requests: exactly one device unless the request says otherwise
// (kube-scheduler refuses a request without an allocation mode).
func defaultDeviceRequests(spec *resourcev1.ResourceClaimSpec) {
	for i := range spec.Devices.Requests {
		req := &spec.Devices.Requests[i]
		if r := req.Exactly; r != nil {
			defaultDeviceCount(&r.AllocationMode, &r.Count, r.Tolerations)
		}
		for j := range req.FirstAvailable {
			sub := &req.FirstAvailable[j]
			defaultDeviceCount(&sub.AllocationMode, &sub.Count, sub.Tolerations)
		}
	}
}

// defaultDeviceCount defaults the fields an exact request and a sub-request
// share: exactly one device unless said otherwise, and tolerations that
// compare with Equal.
func defaultDeviceCount(mode *resourcev1.DeviceAllocationMode, count *int64, tolerations []resourcev1.DeviceToleration) {
	if *mode == "" {
		*mode = resourcev1.DeviceAllocationModeExactCount
	}
	if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
	for i := range tolerations {
		if tolerations[i].Operator == "" {
			tolerations[i].Operator = resourcev1.DeviceTolerationOpEqual
		}
	}
}
