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
	if !Fits(node, pod) {
		t.Fatalf("a pod of 1.5 cores and one host does not fit in %v", node)
	}
	Take(node, pod)
	if cpu, host := node[corev1.ResourceCPU], node["batkube.io/host"]; cpu.String() != "6500m" || !host.IsZero() {
		t.Errorf("left %v, want 6500m cpu and no host", node)
	}
	if Fits(node, pod) {
		t.Error("a second pod asking for the node's one batkube.io/host fits")
	}
}
