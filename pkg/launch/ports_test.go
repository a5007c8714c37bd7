package launch

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestPortsNeverHandsOutAPortTwice: ports taken at once by many goroutines
// (runs side by side) are all different, free, and outside the kernel's
// ephemeral range; a released port can be handed out again.
func TestPortsNeverHandsOutAPortTwice(t *testing.T) {
	p := NewPorts()
	elo, ehi := ephemeralRange()
	const n = 200
	got := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			port, err := p.Take()
			if err != nil {
				t.Error(err)
				return
			}
			got <- port
		})
	}
	wg.Wait()
	close(got)
	seen := map[int]bool{}
	for port := range got {
		if seen[port] {
			t.Errorf("port %d handed out twice", port)
		}
		seen[port] = true
		if elo-10000 >= 1000 && port >= elo && port <= ehi {
			t.Errorf("port %d is in the ephemeral range [%d, %d]", port, elo, ehi)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d ports, want %d", len(seen), n)
	}

	// A range of two ports: both taken, a third Take fails; one released,
	// it comes back.
	lo := 0
	for port := range seen {
		lo = port
		break
	}
	small := newPorts(lo, lo+1)
	first, err := small.Take()
	if err != nil || first != lo {
		t.Fatalf("Take: %d, %v; want %d", first, err, lo)
	}
	if port, err := small.Take(); err == nil {
		t.Fatalf("Take with every port handed out: %d, want an error", port)
	}
	small.Release(first)
	if again, err := small.Take(); err != nil || again != first {
		t.Errorf("Take after Release: %d, %v; want %d", again, err, first)
	}
}

// TestPortsSkipsPortsInUse: a port another process listens on is never
// handed out.
func TestPortsSkipsPortsInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	p := newPorts(busy, busy+1)
	if port, err := p.Take(); err == nil {
		t.Fatalf("Take with the only port in use by a listener: %d, want an error", port)
	}
	if _, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(busy)); err == nil {
		t.Fatal("the busy port could be bound again: the test proves nothing")
	}
}

func TestPortRangeAvoidsTheEphemeralRange(t *testing.T) {
	for _, tc := range []struct{ elo, ehi, lo, hi int }{
		{32768, 60999, 10000, 32768}, // Linux's default
		{1024, 50000, 50001, 65536},  // no room below
		{1024, 65535, 20000, 32768},  // no room at all
	} {
		if lo, hi := portRange(tc.elo, tc.ehi); lo != tc.lo || hi != tc.hi {
			t.Errorf("portRange(%d, %d) = [%d, %d), want [%d, %d)", tc.elo, tc.ehi, lo, hi, tc.lo, tc.hi)
		}
	}
}

// TestWriteJSONReplacesWhole: the file is replaced by the new content and
// no temporary file is left behind.
func TestWriteJSONReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	if err := os.WriteFile(path, []byte("old and longer than the new content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(path, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "{\n  \"a\": 1\n}\n" {
		t.Errorf("summary.json: %q, %v", data, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the folder, want only summary.json", len(entries))
	}
}

// TestServerArgsNamePortsLikeSidecars: {port:NAME} in the server's and
// kube-scheduler's arguments is the same port as in a sidecar's command,
// taken from the run's pool and released with it.
func TestServerArgsNamePortsLikeSidecars(t *testing.T) {
	r := &run{ports: map[string]int{}, pool: NewPorts(), kubeconfig: "/run/kc.yaml"}
	args, err := r.expandEach([]string{"--batsky-endpoint=tcp://127.0.0.1:{port:batsky}", "--settle=signal"})
	if err != nil {
		t.Fatal(err)
	}
	_, ports, err := r.expand("fake-batsky --listen {port:batsky}")
	if err != nil || len(ports) != 1 {
		t.Fatalf("expand: %v %v", ports, err)
	}
	want := []string{"--batsky-endpoint=tcp://127.0.0.1:" + strconv.Itoa(ports[0]), "--settle=signal"}
	if strings.Join(args, " ") != strings.Join(want, " ") {
		t.Errorf("args %q, want %q", args, want)
	}
	if len(r.held) != 1 || r.held[0] != ports[0] {
		t.Errorf("held ports %v, want [%d]: released at the end of the run", r.held, ports[0])
	}
}

// TestOldKubeSchedulerInsecurePortFromThePool: kube-scheduler 1.18's
// insecure healthz and metrics endpoints get a port of the run's pool
// (0.0.0.0:10251 otherwise: runs side by side would fight for it).
func TestOldKubeSchedulerInsecurePortFromThePool(t *testing.T) {
	dir := t.TempDir()
	r := &run{ports: map[string]int{}, pool: NewPorts(), kubeconfig: filepath.Join(dir, "kc")}
	expand := func(s string) (string, error) { out, _, err := r.expand(s); return out, err }
	path := filepath.Join(dir, "kube-scheduler.yaml")
	if _, err := writeSchedulerConfig(path, "", r.kubeconfig, 18, expand); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "127.0.0.1:" + strconv.Itoa(r.ports[insecurePortName])
	if len(r.held) != 1 || !strings.Contains(string(data), "healthzBindAddress: "+want) || !strings.Contains(string(data), "metricsBindAddress: "+want) {
		t.Errorf("held %v; configuration:\n%s\nwant both endpoints on %s", r.held, data, want)
	}
}
