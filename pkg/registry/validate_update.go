package registry

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// updatablePodSpecFields are the fields of a pod's spec an update may
// change, as the real server's message lists them.
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// validatePodSpecUpdate rejects an update of a pod's spec (its main
// resource; binding and status have their own paths) that changes more
// than the real server allows: images, a shorter activeDeadlineSeconds,
// added tolerations, removed scheduling gates, a negative grace period
// set to 1, and, while the pod is gated, added node selector terms. The
// spec with those fields set back to the old ones must equal the old
// spec. (The real server's message ends with a diff of the two specs;
// this one names the fields that differ.) Unlike the real server, a gated
// pod's node affinity may change in any way.
func validatePodSpecUpdate(spec, old *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, c := range []struct {
		name     string
		new, old []corev1.Container
	}{{"containers", spec.Containers, old.Containers}, {"initContainers", spec.InitContainers, old.InitContainers}} {
		if len(c.new) != len(c.old) {
			return append(errs, field.Forbidden(path.Child(c.name), "pod updates may not add or remove containers"))
		}
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && old.ActiveDeadlineSeconds != nil && *d > *old.ActiveDeadlineSeconds {
		errs = append(errs, field.Invalid(path.Child("activeDeadlineSeconds"), *d, "must be less than or equal to previous value"))
	} else if d == nil && old.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(path.Child("activeDeadlineSeconds"), d, "must not update from a positive integer to nil value"))
	}
	for i, t := range old.Tolerations {
		if !hasToleration(spec.Tolerations, t) {
			errs = append(errs, field.Forbidden(path.Child("tolerations").Index(i), "existing toleration can not be modified except its tolerationSeconds"))
		}
	}
	for i, g := range spec.SchedulingGates {
		if !hasGate(old.SchedulingGates, g.Name) {
			errs = append(errs, field.Forbidden(path.Child("schedulingGates").Index(i), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	if equality.Semantic.DeepEqual(spec, old) {
		return errs
	}
	munged := spec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = old.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = old.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = old.ActiveDeadlineSeconds
	munged.SchedulingGates = old.SchedulingGates
	munged.Tolerations = old.Tolerations
	if g := old.TerminationGracePeriodSeconds; g != nil && *g < 0 && munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = g
	}
	if len(old.SchedulingGates) > 0 {
		for k, v := range old.NodeSelector {
			if cur, ok := munged.NodeSelector[k]; !ok || cur != v {
				errs = append(errs, field.Invalid(path.Child("nodeSelector"), munged.NodeSelector, "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
				break
			}
		}
		munged.NodeSelector = old.NodeSelector
		if munged.Affinity != nil || old.Affinity != nil {
			munged.Affinity = mungeNodeAffinity(munged.Affinity, old.Affinity)
		}
	}
	if !equality.Semantic.DeepEqual(munged, old) {
		changed := changedFields(munged, old)
		errs = append(errs, field.Forbidden(path, fmt.Sprintf("pod updates may not change fields other than %s (changed: %s)",
			strings.Join(updatablePodSpecFields, ","), strings.Join(changed, ", "))))
	}
	return errs
}

// mungeNodeAffinity is a gated pod's new affinity with the old node
// affinity.
func mungeNodeAffinity(cur, old *corev1.Affinity) *corev1.Affinity {
	var oldNode *corev1.NodeAffinity
	if old != nil {
		oldNode = old.NodeAffinity
	}
	if cur == nil {
		if oldNode == nil {
			return nil
		}
		return &corev1.Affinity{NodeAffinity: oldNode}
	}
	if old == nil && cur.PodAffinity == nil && cur.PodAntiAffinity == nil {
		return nil
	}
	cur = cur.DeepCopy()
	cur.NodeAffinity = oldNode
	return cur
}

func hasToleration(ts []corev1.Toleration, t corev1.Toleration) bool {
	for _, c := range ts {
		// tolerationSeconds may change (the real server lets a NoExecute
		// toleration's shorten).
		c.TolerationSeconds = t.TolerationSeconds
		if equality.Semantic.DeepEqual(c, t) {
			return true
		}
	}
	return false
}

func hasGate(gates []corev1.PodSchedulingGate, name string) bool {
	for _, g := range gates {
		if g.Name == name {
			return true
		}
	}
	return false
}

// changedFields names the top-level fields of a pod spec that differ
// (their JSON names).
func changedFields(spec, old *corev1.PodSpec) []string {
	var out []string
	for _, f := range podSpecFields {
		if !equality.Semantic.DeepEqual(f.get(spec), f.get(old)) {
			out = append(out, "spec."+f.name)
		}
	}
	if len(out) == 0 {
		out = []string{"spec"}
	}
	return out
}

// podSpecFields are the pod spec's fields an update is likely to touch,
// by JSON name; a change elsewhere is reported as "spec".
var podSpecFields = []struct {
	name string
	get  func(*corev1.PodSpec) any
}{
	{"containers", func(s *corev1.PodSpec) any { return s.Containers }},
	{"initContainers", func(s *corev1.PodSpec) any { return s.InitContainers }},
	{"volumes", func(s *corev1.PodSpec) any { return s.Volumes }},
	{"nodeName", func(s *corev1.PodSpec) any { return s.NodeName }},
	{"nodeSelector", func(s *corev1.PodSpec) any { return s.NodeSelector }},
	{"affinity", func(s *corev1.PodSpec) any { return s.Affinity }},
	{"schedulerName", func(s *corev1.PodSpec) any { return s.SchedulerName }},
	{"priority", func(s *corev1.PodSpec) any { return s.Priority }},
	{"priorityClassName", func(s *corev1.PodSpec) any { return s.PriorityClassName }},
	{"resources", func(s *corev1.PodSpec) any { return s.Resources }},
	{"resourceClaims", func(s *corev1.PodSpec) any { return s.ResourceClaims }},
	{"restartPolicy", func(s *corev1.PodSpec) any { return s.RestartPolicy }},
	{"overhead", func(s *corev1.PodSpec) any { return s.Overhead }},
	{"topologySpreadConstraints", func(s *corev1.PodSpec) any { return s.TopologySpreadConstraints }},
}

// validateJobUpdate rejects the changes of a Job no update may make: its
// selector and its completion mode.
func validateJobUpdate(job, old *batchv1.Job) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec")
	if !equality.Semantic.DeepEqual(job.Spec.Selector, old.Spec.Selector) {
		errs = append(errs, field.Invalid(path.Child("selector"), job.Spec.Selector, "field is immutable"))
	}
	if !equality.Semantic.DeepEqual(job.Spec.CompletionMode, old.Spec.CompletionMode) {
		errs = append(errs, field.Invalid(path.Child("completionMode"), job.Spec.CompletionMode, "field is immutable"))
	}
	return errs
}
