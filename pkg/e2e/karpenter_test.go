package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/batkube/batkube/pkg/outputs"
	"github.com/batkube/batkube/pkg/simtime/simclock"
)

// karpenterBinaries returns bin/karpenter and bin/karpenter-manifests.yaml
// (or $BATKUBE_BIN's), built by `make upstream`.
func karpenterBinaries(t *testing.T) (bin, manifests string) {
	t.Helper()
	return binary(t, "karpenter"), binary(t, "karpenter-manifests.yaml")
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

// TestKarpenterRunsPendingPodsOnPoolHosts runs examples/karpenter with
// batkube-run's --karpenter: two ordinary 8-core hosts and a pool of four
// (two of c-16x, two of c-32x), two small jobs that fit the ordinary hosts
// and three (12 and 24 cores) that do not, a provisioning delay of 30 s.
// Karpenter launches nodes for the three, which the broker maps onto pool
// hosts of their instance type; each NodeClaim is created at the end of
// the batch window its pod opened (BATCH_IDLE_DURATION, 1 s: a work timer
// of kubeclock, not the next unrelated step), each node is Ready 30 s
// after its creation, the three jobs run on pool hosts and finish, none
// waits longer than the batch window's maximum plus the delay, every step
// is exact, and once the jobs end Karpenter consolidates the empty nodes
// (consolidateAfter 10 s): every node is deleted and its host back in the
// pool.
func TestKarpenterRunsPendingPodsOnPoolHosts(t *testing.T) {
	karpenterBinaries(t)
	const (
		delay     = 30.0 // --provisioning-delay
		batchIdle = 1.0  // Karpenter's BATCH_IDLE_DURATION
		batchMax  = 10.0 // BATCH_MAX_DURATION
		eps       = 1e-4 // the engine's message times (µs) and callNoise
	)
	s := newSimulation(t, "examples/karpenter/platform.xml", "examples/karpenter/workload.json")
	s.obs = nil
	s.cfg.Karpenter = true
	s.cfg.ProvisioningDelay = time.Duration(delay) * time.Second
	s.cfg.Objects = []string{abs(repoRoot(), "examples/karpenter/nodepool.yaml")}
	sum := s.mustRunExact(5 * time.Minute)
	t.Logf("%d steps, %+v; wall %v", sum.Settle.Steps(), sum.Settle, sum.Wall)
	if sum.Succeeded != 5 {
		t.Fatalf("%d of %d jobs succeeded, want all 5", sum.Succeeded, sum.Jobs)
	}

	nodes, err := outputs.ReadNodes(filepath.Join(s.cfg.OutDir, "_nodes.csv"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]outputs.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
		t.Logf("node %s: %s on %s (%d), created %g, ready %g, deleted %g, cost %g, %d jobs",
			n.Name, n.InstanceType, n.Host, n.ResourceID, n.Created, n.Ready, n.Deleted, n.Cost, n.Jobs)
		if n.Host == "" || !strings.HasPrefix(n.Host, "pool") {
			t.Errorf("node %s is mapped onto %q, want a pool host", n.Name, n.Host)
		}
		if math.Abs(n.Ready-(n.Created+delay)) > eps {
			t.Errorf("node %s created at %g, Ready at %g: want Ready the provisioning delay (%g s) later", n.Name, n.Created, n.Ready, delay)
		}
		if n.State != "deleted" {
			t.Errorf("node %s ends %s, want deleted by Karpenter's consolidation", n.Name, n.State)
		}
	}
	if len(nodes) == 0 || len(nodes) > 3 {
		t.Fatalf("%d nodes launched, want 1 to 3 (for the three jobs that fit no ordinary host)", len(nodes))
	}

	rows, err := outputs.ReadCSV(filepath.Join(s.cfg.OutDir, "_pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	jobs := s.jobs()
	lastEnd := map[string]float64{} // node → the end of its last job
	for _, r := range rows {
		j := jobs[r["job_id"]]
		if j.state != "COMPLETED_SUCCESSFULLY" {
			t.Errorf("job %s: %s, want it to succeed", j.id, j.state)
		}
		if strings.Contains(j.id, "small") {
			if _, launched := byName[r["node"]]; launched {
				t.Errorf("job %s ran on launched node %s, want an ordinary host (it fits one)", j.id, r["node"])
			}
			continue
		}
		n, launched := byName[r["node"]]
		if !launched {
			t.Errorf("job %s ran on %s, want a node Karpenter launched", j.id, r["node"])
			continue
		}
		if len(j.alloc) != 1 || j.alloc[0] != n.ResourceID {
			t.Errorf("job %s ran on resources %v, want its node's pool host %d", j.id, j.alloc, n.ResourceID)
		}
		if wait := j.start - j.known; wait > batchMax+delay+eps {
			t.Errorf("job %s known at %g, started at %g: waited %g s, want at most the batch window's maximum and the provisioning delay (%g s)",
				j.id, j.known, j.start, wait, batchMax+delay)
		}
		if j.start < n.Ready-eps {
			t.Errorf("job %s started at %g on node %s, Ready only at %g", j.id, j.start, n.Name, n.Ready)
		}
		lastEnd[n.Name] = max(lastEnd[n.Name], j.finish)
	}
	// Each NodeClaim comes at the end of a batch window a pending pod of
	// those jobs opened: a pod's creation plus BATCH_IDLE_DURATION.
	for _, n := range nodes {
		opened := false
		for _, j := range jobs {
			if !strings.Contains(j.id, "small") && math.Abs(n.Created-(j.known+batchIdle)) < eps {
				opened = true
			}
		}
		if !opened {
			t.Errorf("node %s created at %g: at no pod's creation + the batch window's idle duration (%g s)", n.Name, n.Created, batchIdle)
		}
		if end, ok := lastEnd[n.Name]; ok && n.Deleted < end+10-eps {
			t.Errorf("node %s deleted at %g, its last job ended at %g: want it kept at least consolidateAfter (10 s) empty", n.Name, n.Deleted, end)
		}
	}
	var stats struct {
		Launched  int `json:"launched"`
		Unmapped  int `json:"unmapped"`
		PoolInUse int `json:"poolInUse"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(s.cfg.OutDir, "server-stats.json")), &stats); err != nil {
		t.Fatal(err)
	}
	if stats.Launched != len(nodes) || stats.Unmapped != 0 || stats.PoolInUse != 0 {
		t.Errorf("server stats %+v, want %d launched, none unmapped, no pool host in use at the end", stats, len(nodes))
	}
}
