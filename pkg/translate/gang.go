package translate

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Gangs says how the pods of a job asking for res > 1 hosts are grouped for
// the scheduler.
type Gangs string

const (
	// GangsOff leaves the pods of a job independent: the scheduler binds
	// them one by one (the default).
	GangsOff Gangs = "off"
	// GangsPodGroup puts them in a scheduling.k8s.io/v1beta1 PodGroup with
	// a gang policy of minCount res, which kube-scheduler 1.37 with the
	// GenericWorkload feature gate binds all at once or not at all.
	GangsPodGroup Gangs = "podgroup"
)

// ParseGangs reads a --gangs value ("" means GangsOff).
func ParseGangs(s string) (Gangs, error) {
	switch g := Gangs(s); g {
	case "", GangsOff:
		return GangsOff, nil
	case GangsPodGroup:
		return g, nil
	}
	return "", fmt.Errorf("translate: unknown gang mode %q (want off or podgroup)", s)
}

// PodGroupName returns the name of the PodGroup of a job: its pods' JobLabel.
func PodGroupName(jobID string) string { return PodName(jobID) }

// PodGroup returns the PodGroup of a job's pods, to be created before them:
// nil unless opts.Gangs is GangsPodGroup and the job asks for res > 1 hosts.
// It carries the priority class (or priority) of the job's pod_template:
// kube-scheduler schedules a gang only if its pods' priority is the
// group's.
func PodGroup(job Job, opts PodOptions) (*schedulingv1beta1.PodGroup, error) {
	if !gang(job, opts) {
		return nil, nil
	}
	_, tmpl, err := opts.Profiles.templateOf(job)
	if err != nil {
		return nil, err
	}
	name := PodGroupName(job.ID)
	return &schedulingv1beta1.PodGroup{
		TypeMeta: metav1.TypeMeta{APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "PodGroup"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   namespace(opts),
			Labels:      map[string]string{JobLabel: name},
			Annotations: map[string]string{JobIDKey: job.ID},
		},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(job.Res)},
			},
			PriorityClassName: tmpl.Spec.PriorityClassName,
			Priority:          tmpl.Spec.Priority,
		},
	}, nil
}

// gang reports whether the pods of job belong to a PodGroup.
func gang(job Job, opts PodOptions) bool {
	return opts.Gangs == GangsPodGroup && job.Res > 1
}

// joinPodGroup makes pod a member of its job's PodGroup; the job's group
// replaces any schedulingGroup of the pod_template.
func joinPodGroup(pod *corev1.Pod, jobID string) {
	name := PodGroupName(jobID)
	pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
}

func namespace(opts PodOptions) string {
	if opts.Namespace == "" {
		return metav1.NamespaceDefault
	}
	return opts.Namespace
}
