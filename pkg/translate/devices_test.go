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

func TestSharedGPUsHaveAMilliCapacity(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu0"}}
	s, err := ResourceSlice(Host{Name: "gpu0", Properties: map[string]string{"gpu": "2", "gpu_model": "T4", "gpu_shared": "true"}}, node)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range s.Spec.Devices {
		if d.AllowMultipleAllocations == nil || !*d.AllowMultipleAllocations {
			t.Errorf("device %s: not shareable", d.Name)
		}
		c, ok := d.Capacity[GPUMilliCapacity]
		if !ok || c.Value.Value() != 1000 {
			t.Errorf("device %s: capacity %v, want milli 1000", d.Name, d.Capacity)
		}
		// No request policy: a request stating no capacity consumes it all,
		// so whole-GPU claims never share.
		if c.RequestPolicy != nil {
			t.Errorf("device %s: request policy %+v, want none", d.Name, c.RequestPolicy)
		}
	}
	for _, v := range []string{"false", ""} {
		props := map[string]string{"gpu": "1"}
		if v != "" {
			props["gpu_shared"] = v
		}
		s, err := ResourceSlice(Host{Name: "gpu1", Properties: props}, node)
		if err != nil {
			t.Fatal(err)
		}
		if d := s.Spec.Devices[0]; d.AllowMultipleAllocations != nil || d.Capacity != nil {
			t.Errorf("gpu_shared=%q: device %+v, want an exclusive device", v, d)
		}
	}
	if _, err := ResourceSlice(Host{Name: "h", Properties: map[string]string{"gpu": "1", "gpu_shared": "half"}}, node); err == nil {
		t.Error(`gpu_shared="half": no error`)
	}
}
