package e2e

import (
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/outputs"
	"github.com/batkube/batkube/pkg/translate"
)

// TestDevicesAllocatedExactly: GPUs through Dynamic Resource Allocation,
// with the real kube-scheduler 1.37 (DynamicResources) and
// kube-controller-manager (resource claim controller). The hosts of
// testdata/gpu_platform.xml have 4, 2 and no GPUs (their gpu property),
// which Batkube publishes as ResourceSlices; the 16 jobs of
// testdata/gpu_jobs.json claim 1 or 2 of them through
// ResourceClaimTemplates. From the claims' allocations (seen by a
// client-go watch) and _pods.csv: every job completes, no device is held
// by two running pods at once, and no pod waits at an instant when a node
// has as many free devices as it claims; every step is exact.
func TestDevicesAllocatedExactly(t *testing.T) {
	s := newSimulation(t, "pkg/e2e/testdata/gpu_platform.xml", "pkg/e2e/testdata/gpu_jobs.json")
	s.cfg.ControllerManager = true
	s.cfg.Objects = []string{abs(repoRoot(), "pkg/e2e/testdata/gpu_claim_templates.yaml")}
	claims := &claimAllocations{}
	s.onReady = claims.watch
	sum := s.mustRun(5 * time.Minute)
	if sum.Succeeded != 16 {
		t.Fatalf("%d of 16 jobs succeeded", sum.Succeeded)
	}
	wantEveryStepExact(t, sum)
	devices := claims.byPod()
	rows, err := outputs.ReadCSV(filepath.Join(s.cfg.OutDir, "_pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	type pod struct {
		name                     string
		created, started, finish float64
		devices                  []string // pool/device
		wants                    int
	}
	var pods []pod
	for _, r := range rows {
		p := pod{name: r["pod"], created: num(t, r["created"]), started: num(t, r["started"]), finish: num(t, r["finished"]), devices: devices[r["pod"]]}
		p.wants = len(p.devices)
		if p.wants == 0 {
			t.Errorf("pod %s: no device allocated to its claim", p.name)
		}
		pods = append(pods, p)
	}
	capacity := map[string]int{"gpu0": 4, "gpu1": 2}
	var instants []float64
	for _, p := range pods {
		instants = append(instants, p.created, p.finish)
	}
	sort.Float64s(instants)
	shared, late := 0, 0
	for _, at := range instants {
		held := map[string]string{}
		used := map[string]int{}
		for _, p := range pods {
			if p.started <= at && p.finish > at {
				for _, d := range p.devices {
					if other, ok := held[d]; ok {
						shared++
						t.Errorf("t=%g: device %s held by %s and %s", at, d, other, p.name)
					}
					held[d] = p.name
					used[strings.Split(d, "/")[0]]++
				}
			}
		}
		for _, p := range pods {
			if p.created <= at && p.started > at {
				for node, n := range capacity {
					if n-used[node] >= p.wants {
						late++
						t.Errorf("t=%g: pod %s (%d GPUs, started at %g) waited while node %s had %d free", at, p.name, p.wants, p.started, node, n-used[node])
						break
					}
				}
			}
		}
	}
	waited := 0
	for _, p := range pods {
		if p.started > p.created {
			waited++
		}
	}
	t.Logf("%d pods, %d waited for devices; %d instants with a shared device, %d late starts", len(pods), waited, shared, late)
	if waited == 0 {
		t.Error("no pod waited: the workload is meant to contend for the GPUs")
	}
}

// claimAllocations records, through a client-go watch, the devices
// allocated to each pod's claims (pool/device), by pod name, with the
// capacity each allocation consumes of a shared device (its
// consumedCapacity, milli; 0 for an exclusive device).
type claimAllocations struct {
	mu      sync.Mutex
	devices map[string]map[string]int64
	done    <-chan struct{}
}

func (c *claimAllocations) watch(s *simulation) {
	c.devices = map[string]map[string]int64{}
	c.done = watchObjects(s, "ResourceClaims", s.client.ResourceV1().ResourceClaims(metav1.NamespaceAll).Watch, func(claim *resourcev1.ResourceClaim) {
		if claim.Status.Allocation == nil {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, user := range claim.Status.ReservedFor {
			if user.Resource != "pods" {
				continue
			}
			if c.devices[user.Name] == nil {
				c.devices[user.Name] = map[string]int64{}
			}
			for _, r := range claim.Status.Allocation.Devices.Results {
				milli := r.ConsumedCapacity[translate.GPUMilliCapacity]
				c.devices[user.Name][r.Pool+"/"+r.Device] = milli.Value()
			}
		}
	})
}

// byPod returns the devices of each pod, once the watch has ended.
func (c *claimAllocations) byPod() map[string][]string {
	out := map[string][]string{}
	for pod, ds := range c.consumedByPod() {
		for d := range ds {
			out[pod] = append(out[pod], d)
		}
	}
	return out
}

// consumedByPod returns, once the watch has ended, the devices of each
// pod with the milli of each it consumes (0 for an exclusive device).
func (c *claimAllocations) consumedByPod() map[string]map[string]int64 {
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]map[string]int64, len(c.devices))
	for pod, ds := range c.devices {
		out[pod] = make(map[string]int64, len(ds))
		for d, milli := range ds {
			out[pod][d] = milli
		}
	}
	return out
}
