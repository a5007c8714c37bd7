package launch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/batkube/batkube/pkg/atomicfile"
	"github.com/batkube/batkube/pkg/engine"
	"github.com/batkube/batkube/pkg/nodepool"
	"github.com/batkube/batkube/pkg/translate"
)

// Karpenter in a run (Config.Karpenter).
const (
	// KarpenterProcess names Karpenter (its KWOK provider, bin/karpenter,
	// built by make karpenter) in Summary.Processes and its log,
	// OutDir/karpenter.log.
	KarpenterProcess = "karpenter"
	// KarpenterManifests, in BinDir, are its CRDs (NodePool, NodeClaim,
	// KWOKNodeClass...), installed before the run's objects.
	KarpenterManifests = "karpenter-manifests.yaml"
	// KarpenterInstanceTypesFile, in OutDir, are the instance types of the
	// platform's pool, for the KWOK provider (INSTANCE_TYPES_FILE_PATH).
	KarpenterInstanceTypesFile = "karpenter-instance-types.json"
)

// The defaults of kubernetes-server's --node-default-cpu and
// --node-default-memory: the resources of a pool host that does not say.
var (
	poolDefaultCPU    = resource.MustParse("1")
	poolDefaultMemory = resource.MustParse("16Gi")
)

// karpenterPIDFile is where Karpenter's PID is written for the server
// (kubernetes-server --controller-pid-file karpenter=FILE).
func (r *run) karpenterPIDFile() string { return filepath.Join(r.cfg.OutDir, KarpenterProcess+".pid") }

// prepareKarpenter checks Karpenter's binary and manifests, writes the
// instance types of the platform's pool, and installs the manifests before
// the run's objects (which give its NodePools and KWOKNodeClasses).
func (r *run) prepareKarpenter() error {
	if !r.cfg.Karpenter {
		return nil
	}
	r.cfg.ControllerManager = true // the clock page; Jobs and Deployments too
	if _, err := r.bin(KarpenterProcess); err != nil {
		return err
	}
	manifests := filepath.Join(r.cfg.BinDir, KarpenterManifests)
	if _, err := os.Stat(manifests); err != nil {
		return fmt.Errorf("launch: Karpenter's manifests: %w (make karpenter writes them)", err)
	}
	types, err := poolInstanceTypes(r.cfg.Platform, r.cfg.MasterHost)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(types, "", "  ")
	if err != nil {
		return fmt.Errorf("launch: Karpenter's instance types: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(r.cfg.OutDir, KarpenterInstanceTypesFile), append(b, '\n')); err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	if r.karpenter.metricsPort, err = r.port(); err != nil {
		return err
	}
	if r.karpenter.healthPort, err = r.port(); err != nil {
		return err
	}
	r.cfg.Objects = append([]string{manifests}, r.cfg.Objects...)
	return nil
}

// poolInstanceTypes reads the pool hosts of a platform (nodepool.Is) and
// returns their instance types, or an error if it has none: Karpenter
// would launch nodes that no Batsim host stands for.
func poolInstanceTypes(platform, master string) ([]nodepool.InstanceType, error) {
	p, err := engine.ReadPlatformFileWith(platform, engine.PlatformOptions{MasterHost: master})
	if err != nil {
		return nil, fmt.Errorf("launch: reading the platform's pool hosts: %w", err)
	}
	var hosts []nodepool.Host
	for _, res := range p.Resources {
		h := translate.Host{ID: res.ID, Name: res.Name, Properties: res.Properties, ZoneProperties: res.ZoneProperties}
		if !nodepool.Is(h.Properties) || translate.IsMaster(h) {
			continue
		}
		ph, err := nodepool.FromHost(h, translate.NodeOptions{DefaultCPU: poolDefaultCPU, DefaultMemory: poolDefaultMemory})
		if err != nil {
			return nil, fmt.Errorf("launch: platform %s: %w", platform, err)
		}
		hosts = append(hosts, ph)
	}
	pool, err := nodepool.New(hosts)
	if err != nil {
		return nil, fmt.Errorf("launch: platform %s: %w", platform, err)
	}
	if pool.Len() == 0 {
		return nil, fmt.Errorf("launch: platform %s has no pool hosts (hosts with the properties %s and %s): Karpenter's nodes would be no Batsim hosts",
			platform, nodepool.PoolProperty, nodepool.InstanceTypeProperty)
	}
	return pool.InstanceTypes(), nil
}

// startKarpenter starts BinDir/karpenter (the KWOK provider) on the run's
// kubeconfig and simulated clock, alone (no leader election), with the
// pool's instance types, its metrics and health probes on free ports, and
// waits until its health probe answers.
func (r *run) startKarpenter(ctx context.Context) error {
	if !r.cfg.Karpenter {
		return nil
	}
	bin, err := r.bin(KarpenterProcess)
	if err != nil {
		return err
	}
	env := []string{"DISABLE_LEADER_ELECTION=true",
		"METRICS_PORT=" + strconv.Itoa(r.karpenter.metricsPort),
		"HEALTH_PROBE_PORT=" + strconv.Itoa(r.karpenter.healthPort),
		"INSTANCE_TYPES_FILE_PATH=" + filepath.Join(r.cfg.OutDir, KarpenterInstanceTypesFile)}
	env = append(env, r.cfg.KarpenterEnv...)
	p, err := r.startControllerWith(KarpenterProcess, r.karpenterPIDFile(), env, []string{bin})
	if err != nil {
		return err
	}
	return waitReady(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", r.karpenter.healthPort), p, "Karpenter", 5*time.Minute)
}
