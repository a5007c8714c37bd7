package server_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/server/servertest"
)

// TestPodGroupPriorityIsResolved: a PodGroup gets the priority of its
// PriorityClass, or of the global default class, as the Priority admission
// plugin gives it (kube-scheduler schedules a gang only if its pods'
// priority is its group's); a priority that contradicts the class, or an
// unknown class, is refused.
func TestPodGroupPriorityIsResolved(t *testing.T) {
	ts := servertest.StartDefault(t)
	ctx := context.Background()
	cs := ts.ProtobufClientset()
	groups := cs.SchedulingV1beta1().PodGroups("default")
	group := func(name, class string, priority *int32) *schedulingv1beta1.PodGroup {
		return &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: schedulingv1beta1.PodGroupSpec{
				SchedulingPolicy:  schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2}},
				PriorityClassName: class,
				Priority:          priority,
			},
		}
	}
	if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	g, err := groups.Create(ctx, group("named", "high", nil), metav1.CreateOptions{})
	if err != nil || g.Spec.Priority == nil || *g.Spec.Priority != 1000 {
		t.Fatalf("pod group of class high: %v, %v; want priority 1000", g, err)
	}
	g, err = groups.Create(ctx, group("unnamed", "", nil), metav1.CreateOptions{})
	if err != nil || g.Spec.Priority == nil || *g.Spec.Priority != 0 || g.Spec.PriorityClassName != "" {
		t.Fatalf("pod group without class and no global default: %v, %v; want priority 0", g, err)
	}
	if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "usual"}, Value: 10, GlobalDefault: true}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	g, err = groups.Create(ctx, group("defaulted", "", nil), metav1.CreateOptions{})
	if err != nil || g.Spec.Priority == nil || *g.Spec.Priority != 10 || g.Spec.PriorityClassName != "usual" {
		t.Fatalf("pod group without class: %v, %v; want the global default class usual, priority 10", g, err)
	}
	// Its pods get the same priority: the gang is consistent.
	pod, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "member"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}, metav1.CreateOptions{})
	if err != nil || pod.Spec.Priority == nil || *pod.Spec.Priority != *g.Spec.Priority {
		t.Fatalf("pod without class: %v, %v; want the group's priority %d", pod, err, *g.Spec.Priority)
	}
	wrong := int32(5)
	if _, err := groups.Create(ctx, group("contradicted", "high", &wrong), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("pod group of class high asking for priority 5: %v, want Forbidden", err)
	}
	if _, err := groups.Create(ctx, group("unknown", "nonexistent", nil), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("pod group of an unknown class: %v, want Forbidden", err)
	}
}
