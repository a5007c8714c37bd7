package outputs

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// TestDevicesRoundTrip: a devices cell reads back as written; a shared
// GPU's share is its milli, a device held whole 1000; a malformed cell is
// an error.
func TestDevicesRoundTrip(t *testing.T) {
	in := []DeviceUse{
		{Device: "node-1/gpu-0", Consumed: map[string]resource.Quantity{"milli": resource.MustParse("460")}},
		{Device: "node-1/gpu-1"},
	}
	cell := FormatDevices(in)
	if cell != "node-1/gpu-0:milli=460;node-1/gpu-1" {
		t.Fatalf("cell %q", cell)
	}
	out, err := ParseDevices(cell)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Device != "node-1/gpu-0" || out[0].Milli() != 460 || out[1].Milli() != 1000 {
		t.Errorf("read back %+v", out)
	}
	for _, bad := range []string{"a:milli", "a:milli=x", ";"} {
		if _, err := ParseDevices(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
