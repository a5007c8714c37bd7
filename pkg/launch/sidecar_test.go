package launch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func noExpand(s string) (string, error) { return s, nil }

// TestExpandGivesEachPortNameOnePort: {port:NAME} becomes a free port, the
// same for every mention of NAME, another for another name; {kubeconfig}
// the run's kubeconfig.
func TestExpandGivesEachPortNameOnePort(t *testing.T) {
	r := &run{ports: map[string]int{}, pool: NewPorts(), kubeconfig: "/run/kc.yaml"}
	a, ports, err := r.expand("ext --listen 127.0.0.1:{port:ext} --kubeconfig {kubeconfig}")
	if err != nil || len(ports) != 1 || ports[0] == 0 {
		t.Fatalf("expand: %q %v %v", a, ports, err)
	}
	b, again, err := r.expand("urlPrefix: http://127.0.0.1:{port:ext}/ and {port:other}")
	if err != nil || len(again) != 2 || again[0] != ports[0] || again[1] == ports[0] {
		t.Fatalf("second expand: %q %v %v; want the same port for ext (%d), another for other", b, again, err, ports[0])
	}
	if strings.Contains(a+b, "{") || !strings.Contains(a, "/run/kc.yaml") {
		t.Errorf("placeholders left: %q, %q", a, b)
	}
}

// TestSidecarThatNeverListensFails: a sidecar that exits before serving its
// port fails the start with its log.
func TestSidecarThatNeverListensFails(t *testing.T) {
	dir := t.TempDir()
	r := &run{cfg: Config{OutDir: dir, Sidecars: []string{"echo nothing here on {port:x}; exit 3"}}, ports: map[string]int{}, pool: NewPorts(), kubeconfig: filepath.Join(dir, "kc")}
	err := r.startSidecars(context.Background())
	if err == nil || !strings.Contains(err.Error(), "sidecar-1") {
		t.Fatalf("startSidecars: %v, want a failure naming sidecar-1", err)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "sidecar-1.log")); !strings.Contains(string(log), "nothing here on") {
		t.Errorf("sidecar-1.log: %q", log)
	}
}
