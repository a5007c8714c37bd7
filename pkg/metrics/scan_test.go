package metrics

import "testing"

func TestParseLine(t *testing.T) {
	name, labels, value, err := ParseLine([]byte(`scheduler_pending_pods{queue="active",note="a \"b\"\nc"} 3 1700000000000`))
	if err != nil || name != "scheduler_pending_pods" || value != 3 || labels["queue"] != "active" || labels["note"] != "a \"b\"\nc" {
		t.Errorf("got %q %q %v %v", name, labels, value, err)
	}
	if name, labels, value, err := ParseLine([]byte(`process_start_time_seconds 1.5e9`)); err != nil || name != "process_start_time_seconds" || labels != nil || value != 1.5e9 {
		t.Errorf("no labels: got %q %q %v %v", name, labels, value, err)
	}
	for _, bad := range []string{`{a="b"} 1`, `x{a="b" 1`, `x{a=b} 1`, `x{a="b"}`, `x 1e`, `x{a="b\`} {
		if _, _, _, err := ParseLine([]byte(bad)); err == nil {
			t.Errorf("ParseLine(%q): no error", bad)
		}
	}
}
