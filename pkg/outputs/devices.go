package outputs

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// DeviceUse is one device of _pods.csv's devices column: the device, as
// "pool/device", and the parts of its capacity the pod's claim consumed
// (a shared GPU's "milli"; none for a device held whole).
type DeviceUse struct {
	Device   string
	Consumed map[string]resource.Quantity
}

// FormatDevices writes a devices cell: "pool/device" then
// ":name=quantity" for each part consumed, by name; devices separated by
// ";".
func FormatDevices(devices []DeviceUse) string {
	var b strings.Builder
	for i, d := range devices {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(d.Device)
		for _, name := range slices.Sorted(maps.Keys(d.Consumed)) {
			q := d.Consumed[name]
			b.WriteString(":" + name + "=" + q.String())
		}
	}
	return b.String()
}

// ParseDevices reads a devices cell (FormatDevices).
func ParseDevices(cell string) ([]DeviceUse, error) {
	if cell == "" {
		return nil, nil
	}
	var out []DeviceUse
	for dev := range strings.SplitSeq(cell, ";") {
		parts := strings.Split(dev, ":")
		d := DeviceUse{Device: parts[0]}
		if d.Device == "" {
			return nil, fmt.Errorf("outputs: devices %q: a device without a name", cell)
		}
		for _, part := range parts[1:] {
			name, value, ok := strings.Cut(part, "=")
			if !ok {
				return nil, fmt.Errorf("outputs: devices %q: %q is not name=quantity", cell, part)
			}
			q, err := resource.ParseQuantity(value)
			if err != nil {
				return nil, fmt.Errorf("outputs: devices %q: %s: %w", cell, name, err)
			}
			if d.Consumed == nil {
				d.Consumed = map[string]resource.Quantity{}
			}
			d.Consumed[name] = q
		}
		out = append(out, d)
	}
	return out, nil
}

// Milli is the thousandths of the device held: its consumed "milli", or
// the whole device (1000) when the claim consumed no part of a capacity.
func (d DeviceUse) Milli() int64 {
	if q, ok := d.Consumed["milli"]; ok {
		return q.Value()
	}
	return 1000
}
