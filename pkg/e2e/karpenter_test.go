package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/batkube/batkube/pkg/simtime/simclock"
)

// karpenterBinaries returns bin/karpenter and bin/karpenter-manifests.yaml
// (or $BATKUBE_BIN's), built by `make karpenter`, and skips the test when
// they are absent: Karpenter is not part of `make upstream` yet.
func karpenterBinaries(t *testing.T) (bin, manifests string) {
	t.Helper()
	dir := os.Getenv("BATKUBE_BIN")
	if dir == "" {
		dir = filepath.Join(repoRoot(), "bin")
	}
	bin, manifests = filepath.Join(dir, "karpenter"), filepath.Join(dir, "karpenter-manifests.yaml")
	for _, p := range []string{bin, manifests} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s not found: run `make karpenter` (Karpenter is not part of make upstream yet)", p)
		}
	}
	return bin, manifests
}

// TestKarpenterLaunchesANodeForAPendingPod runs Karpenter v1.15.0's KWOK
// provider (bin/karpenter: unmodified, on the run's simulated clock) beside
// kube-controller-manager, as a sidecar whose process every step's barrier
// waits for, with its CRDs and a NodePool (testdata/karpenter-nodepool.yaml)
// installed before time 0. A pod of 16 CPUs, which no node of platform_4
// (8 CPUs each) fits, is pending from 0: Karpenter launches a NodeClaim of
// family c for it and the provider creates its Node, which Karpenter
// registers; its startup taint keeps the pod off it (the broker maps no
// Batsim host onto such a node yet).
func TestKarpenterLaunchesANodeForAPendingPod(t *testing.T) {
	bin, manifests := karpenterBinaries(t)
	workload := filepath.Join(t.TempDir(), "big.json")
	writeJSON(t, workload, map[string]any{"nb_res": 4,
		"jobs":     []map[string]any{{"id": "big", "subtime": 0, "walltime": 100, "res": 1, "profile": "big"}},
		"profiles": map[string]any{"big": map[string]any{"type": "delay", "delay": 60, "cpu": 16, "memory": "8Gi"}}})
	s := newSimulation(t, "examples/platforms/platform_4.xml", workload)
	out := s.cfg.OutDir
	s.cfg.ControllerManager = true // the clock page, and its probes before time 0
	s.cfg.EndAt = 30 * time.Second
	s.cfg.Objects = []string{manifests, abs(repoRoot(), "pkg/e2e/testdata/karpenter-nodepool.yaml")}
	pidFile := filepath.Join(out, "karpenter.pid")
	s.cfg.ServerArgs = []string{"--controller-pid-file=karpenter=" + pidFile}
	// The script writes its PID and becomes Karpenter (exec): the barrier
	// watches Karpenter's process. Its clock server is the kubeconfig's.
	script := filepath.Join(t.TempDir(), "karpenter.sh")
	writeFile(t, script, []byte(fmt.Sprintf(`#!/bin/sh
echo $$ > %s
exec env BATKUBE_CLOCK=%s BATKUBE_CLOCK_SERVER="$(sed -n 's/^ *server: //p' "$KUBECONFIG" | head -1)" \
  DISABLE_LEADER_ELECTION=true METRICS_PORT="$1" HEALTH_PROBE_PORT="$2" %s > %s 2>&1
`, pidFile, filepath.Join(out, "clock"), bin, filepath.Join(out, "karpenter.log"))))
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	s.cfg.Sidecars = []string{script + " {port:karpenter-metrics} {port:karpenter-health}"}
	sum := s.mustRunExact(3 * time.Minute)
	t.Logf("%d steps, %+v", sum.Settle.Steps(), sum.Settle)

	// The nodes are copied out under the observer's lock, which podsOf
	// takes again below.
	var launched []*corev1.Node
	s.obs.mu.Lock()
	for _, n := range s.obs.nodes {
		if n.Labels["karpenter.sh/nodepool"] == "default" {
			launched = append(launched, n)
		}
	}
	s.obs.mu.Unlock()
	if len(launched) != 1 {
		t.Fatalf("%d nodes of the NodePool, want 1", len(launched))
	}
	n := launched[0]
	if it := n.Labels[corev1.LabelInstanceTypeStable]; !strings.HasPrefix(it, "c-") {
		t.Errorf("node %s: instance type %q, want one of family c", n.Name, it)
	}
	if cpu := n.Status.Allocatable[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("16")) < 0 {
		t.Errorf("node %s: allocatable cpu %s, want at least the pod's 16", n.Name, cpu.String())
	}
	if n.Labels["karpenter.sh/registered"] != "true" {
		t.Errorf("node %s: labels %v, want it registered by Karpenter", n.Name, n.Labels)
	}
	// Karpenter's batch window: it launches once no pod has come for
	// BATCH_IDLE_DURATION (1 s), within BATCH_MAX_DURATION (10 s).
	at := n.CreationTimestamp.Sub(simclock.DefaultEpoch)
	t.Logf("node %s (%s) created at %v simulated", n.Name, n.Labels[corev1.LabelInstanceTypeStable], at)
	if at < time.Second || at > 10*time.Second {
		t.Errorf("node %s created at %v simulated, want within Karpenter's batch window after the pod's creation at 0 (1 s to 10 s)", n.Name, at)
	}
	if pods := s.obs.podsOf("w0!big"); len(pods) != 1 || pods[0].node != "" {
		t.Errorf("the pod of w0!big: %+v, want one, never bound (the node's startup taint)", pods)
	}
}
