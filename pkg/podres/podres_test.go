package podres

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestRequests(t *testing.T) {
	q := resource.MustParse
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("1Gi")}}},
			// A limit without a request is the request.
			{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("1"), "example.com/gpu": q("2")}}},
		},
		// An init container asking more than the containers' sum wins.
		InitContainers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("2")}}}},
		Overhead:       corev1.ResourceList{corev1.ResourceMemory: q("100Mi")},
	}}
	want := List{corev1.ResourcePods: 1, corev1.ResourceCPU: 2000, corev1.ResourceMemory: 1<<30 + 100<<20, "example.com/gpu": 2}
	if got := Requests(pod); !maps.Equal(got, want) {
		t.Errorf("Requests = %v, want %v", got, want)
	}
	used := List{}
	used.Add(want)
	used.Add(want)
	used.Sub(want)
	if !maps.Equal(used, want) {
		t.Errorf("add twice, take once: %v, want %v", used, want)
	}
	if got := Of(corev1.ResourceList{corev1.ResourceCPU: q("8"), corev1.ResourcePods: q("110")}); !maps.Equal(got, List{corev1.ResourceCPU: 8000, corev1.ResourcePods: 110}) {
		t.Errorf("Of = %v", got)
	}
}
