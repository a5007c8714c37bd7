package translate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestResourceSliceOfAHostsGPUs(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu0"}}
	s, err := ResourceSlice(Host{Name: "GPU0", Properties: map[string]string{"gpu": "3", "gpu_model": "a100"}}, node)
	if err != nil {
		t.Fatal(err)
	}
	if s.Spec.Driver != GPUDriver || s.Spec.Pool.Name != "gpu0" || *s.Spec.NodeName != "gpu0" || len(s.Spec.Devices) != 3 {
		t.Fatalf("slice %+v", s.Spec)
	}
	d := s.Spec.Devices[2]
	if d.Name != "gpu-2" || *d.Attributes["model"].StringValue != "a100" || *d.Attributes["index"].IntValue != 2 {
		t.Errorf("device %+v", d)
	}
	if s, err := ResourceSlice(Host{Name: "cpu", Properties: map[string]string{"core": "8"}}, node); s != nil || err != nil {
		t.Errorf("a host without GPUs: %v, %v", s, err)
	}
	for _, bad := range []string{"many", "-1", "100000"} {
		if _, err := ResourceSlice(Host{Name: "h", Properties: map[string]string{"gpu": bad}}, node); err == nil {
			t.Errorf("gpu=%q: no error", bad)
		}
	}
}
