package server_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/batkube/batkube/pkg/server/servertest"
)

// TestPodUpdatesChangeOnlyWhatTheRealServerAllows: through client-go, an
// update may change a pod's image, add a toleration and remove a
// scheduling gate, and then add a node selector; it may not change a
// container's resources, add a scheduling gate or a container, as a real
// kube-apiserver answers (422, the message naming the fields an update
// may change).
func TestPodUpdatesChangeOnlyWhatTheRealServerAllows(t *testing.T) {
	ts := servertest.StartDefault(t)
	eachClient(t, ts, func(t *testing.T, ctx context.Context, name string, cs kubernetes.Interface) {
		pods := cs.CoreV1().Pods("default")
		p := newPod("update-" + strings.ToLower(name))
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/a"}, {Name: "example.com/b"}}
		cur, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		update := func(change func(*corev1.Pod)) (*corev1.Pod, error) {
			p := cur.DeepCopy()
			change(p)
			return pods.Update(ctx, p, metav1.UpdateOptions{})
		}
		for _, allowed := range []struct {
			what   string
			change func(*corev1.Pod)
		}{
			{"a new image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "busybox:1.37" }},
			{"a toleration added", func(p *corev1.Pod) {
				p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists})
			}},
			{"a node selector added while gated", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "a"} }},
			{"a scheduling gate removed", func(p *corev1.Pod) { p.Spec.SchedulingGates = p.Spec.SchedulingGates[1:] }},
		} {
			if cur, err = update(allowed.change); err != nil {
				t.Fatalf("%s: %v", allowed.what, err)
			}
		}
		for _, refused := range []struct {
			what, message string
			change        func(*corev1.Pod)
		}{
			{"a container's cpu", "pod updates may not change fields other than `spec.containers[*].image`", func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("2")
			}},
			{"a scheduling gate added", "only deletion is allowed, but found new scheduling gate 'example.com/c'", func(p *corev1.Pod) {
				p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: "example.com/c"})
			}},
			{"a container added", "pod updates may not add or remove containers", func(p *corev1.Pod) {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "d", Image: "busybox"})
			}},
			{"a toleration removed", "existing toleration can not be modified", func(p *corev1.Pod) { p.Spec.Tolerations = nil }},
		} {
			_, err := update(refused.change)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), refused.message) {
				t.Errorf("%s: got %v, want 422 Invalid saying %q", refused.what, err, refused.message)
			}
		}
		got, err := pods.Get(ctx, cur.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if q := got.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]; q.String() != "500m" || len(got.Spec.SchedulingGates) != 1 || got.Spec.Containers[0].Image != "busybox:1.37" {
			t.Errorf("stored pod: cpu %s, gates %v, image %s; want 500m, one gate, busybox:1.37", q.String(), got.Spec.SchedulingGates, got.Spec.Containers[0].Image)
		}
	})
}
