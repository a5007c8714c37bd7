package translate

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// A Batsim job's walltime and a pod's deadline are one thing seen from
// both sides, and this file is their only home:
//
//   - A job's walltime becomes its pods' spec.activeDeadlineSeconds,
//     rounded up to a whole second (Deadline, in Pods); no walltime, no
//     deadline.
//   - A pod a client creates (a dynamic job) gets its deadline back as
//     the job's walltime (Walltime, in the broker's dynamic jobs).
//   - A Deployment's pods have none (WithoutDeadline): they run until
//     deleted, whatever the workload's walltime.
//   - Batsim ends a job that reaches its walltime (COMPLETED_WALLTIME_REACHED),
//     and the broker's kubelet fails its pods with reason DeadlineExceeded,
//     as the kubelet does a pod active on its node longer than its deadline
//     (finalStages in pkg/broker/kubelet.go).
//
// The deadline counts from the pod's start on its node and Batsim's
// walltime from the job's start: the same instant in a simulation.

// Deadline is the activeDeadlineSeconds of the pods of a job with the
// given walltime in seconds (nil when walltime <= 0: none): the walltime
// rounded up, since a deadline is a whole number of seconds.
func Deadline(walltime float64) *int64 {
	if walltime <= 0 {
		return nil
	}
	secs := int64(math.Ceil(walltime))
	return &secs
}

// Walltime is the walltime in seconds of the job of a pod with the given
// spec, its deadline; ok is false when it has none.
func Walltime(spec *corev1.PodSpec) (seconds float64, ok bool) {
	if d := spec.ActiveDeadlineSeconds; d != nil && *d > 0 {
		return float64(*d), true
	}
	return 0, false
}

// WithoutDeadline removes a pod template's deadline (a Deployment's pods
// run until deleted).
func WithoutDeadline(spec *corev1.PodSpec) { spec.ActiveDeadlineSeconds = nil }
