package room

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestFitsAndTakeEveryResource(t *testing.T) {
	q := resource.MustParse
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1"), "batkube.io/host": q("1")}}},
		{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("500m")}}},
	}}}
	node := corev1.ResourceList{corev1.ResourceCPU: q("8"), "batkube.io/host": q("1")}
	if !Fits(node, Requests(pod)) {
		t.Fatalf("a pod of 1.5 cores and one host does not fit in %v", node)
	}
	Take(node, Requests(pod))
	if cpu, host := node[corev1.ResourceCPU], node["batkube.io/host"]; cpu.String() != "6500m" || !host.IsZero() {
		t.Errorf("left %v, want 6500m cpu and no host", node)
	}
	if Fits(node, Requests(pod)) {
		t.Error("a second pod asking for the node's one batkube.io/host fits")
	}
}

func TestAdmitsOnlyReadyNodesWhoseTaintsThePodTolerates(t *testing.T) {
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	gpu := corev1.Taint{Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoSchedule}
	plain, tolerant := &corev1.Pod{}, &corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{
		{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "yes", Effect: corev1.TaintEffectNoSchedule}}}}
	for _, tt := range []struct {
		name           string
		node           corev1.Node
		plain, tolerat bool
	}{
		{"ready", corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}}}, true, true},
		{"no condition yet", corev1.Node{}, true, true},
		{"cordoned", corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true}}, false, false},
		{"machine unavailable", corev1.Node{
			Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}}}, false, false},
		{"gpu taint", corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{gpu}}}, false, true},
		{"prefer-no-schedule taint", corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectPreferNoSchedule}}}}, true, true},
	} {
		if got := Admits(&tt.node, plain); got != tt.plain {
			t.Errorf("%s: admits a pod with no toleration: %t, want %t", tt.name, got, tt.plain)
		}
		if got := Admits(&tt.node, tolerant); got != tt.tolerat {
			t.Errorf("%s: admits a pod tolerating gpu=yes: %t, want %t", tt.name, got, tt.tolerat)
		}
	}
}
