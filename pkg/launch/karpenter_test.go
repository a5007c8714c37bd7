package launch

import (
	"strings"
	"testing"
)

// TestPoolInstanceTypes: the instance types Karpenter gets are the
// platform's pool's, one per instance_type with its hosts' cores, memory
// and price; a platform without a pool is refused, since Karpenter's nodes
// would then be no Batsim hosts.
func TestPoolInstanceTypes(t *testing.T) {
	types, err := poolInstanceTypes("../../examples/karpenter/platform.xml", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(types) != 2 || types[0].Name != "c-16x-amd64-linux" || types[1].Name != "c-32x-amd64-linux" {
		t.Fatalf("instance types %+v, want c-16x-amd64-linux and c-32x-amd64-linux", types)
	}
	for i, want := range []struct {
		cpu, memory string
		price       float64
	}{{"16", "64Gi", 0.68}, {"32", "128Gi", 1.36}} {
		cpu, memory := types[i].Resources["cpu"], types[i].Resources["memory"]
		if cpu.String() != want.cpu || memory.String() != want.memory || types[i].Offerings[0].Price != want.price {
			t.Errorf("%s: cpu %s, memory %s, price %g; want %s, %s, %g", types[i].Name, cpu.String(), memory.String(),
				types[i].Offerings[0].Price, want.cpu, want.memory, want.price)
		}
	}
	if _, err := poolInstanceTypes("../../examples/platforms/platform_4.xml", ""); err == nil || !strings.Contains(err.Error(), "no pool hosts") {
		t.Errorf("a platform without a pool: %v, want an error saying it has no pool hosts", err)
	}
}
