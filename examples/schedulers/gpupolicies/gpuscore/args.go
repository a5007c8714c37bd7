package gpuscore

import (
	"bytes"
	"encoding/json"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/examples/schedulers/gpupolicies/policy"
)

// Defaults of Args: Batkube's simulated GPUs (package translate of the
// Batkube module) and the largest node of the openb cluster.
const (
	DefaultDriver         = "gpu.batkube.io"
	DefaultDeviceClass    = "gpu.batkube.io"
	DefaultCapacity       = "milli"
	DefaultModelAttribute = "model"
	DefaultMaxNodeGPUs    = 8
	DefaultSeed           = policy.DefaultSeed
)

// DefaultMaxNodeCPU is the default of Args.MaxNodeCPU: 128 cores.
var DefaultMaxNodeCPU = resource.MustParse("128")

// Args are a policy plugin's arguments, its pluginConfig entry in the
// KubeSchedulerConfiguration (every field optional but FGDScore's
// targetWorkload):
//
//	pluginConfig:
//	  - name: FGDScore
//	    args:
//	      targetWorkload: out/fgd/in/target-workload.csv
type Args struct {
	// Driver is the DRA driver of the GPUs (default DefaultDriver).
	Driver string `json:"driver,omitempty"`
	// DeviceClass is the DeviceClass claims ask GPUs of (default
	// DefaultDeviceClass); requests of other classes are not GPUs.
	DeviceClass string `json:"deviceClass,omitempty"`
	// Capacity names the consumable capacity of a shared GPU, whose whole
	// is one GPU (default DefaultCapacity, "milli", of 1000).
	Capacity string `json:"capacity,omitempty"`
	// ModelAttribute is the devices' attribute holding the GPU model
	// (default DefaultModelAttribute).
	ModelAttribute string `json:"modelAttribute,omitempty"`
	// MaxNodeCPU and MaxNodeGPUs are the largest node's cpu and GPUs,
	// which DotProductScore, GpuClusteringScore and BestFitScore divide
	// by (the paper's MaxSpecCpu and MaxSpecGpu; defaults 128 cores and 8
	// GPUs, the openb cluster's).
	MaxNodeCPU  *resource.Quantity `json:"maxNodeCPU,omitempty"`
	MaxNodeGPUs int                `json:"maxNodeGPUs,omitempty"`
	// TargetWorkload is FGDScore's target workload: the path of a CSV
	// file of pod types and their popularity (policy.ReadWorkload;
	// batkube-openb writes target-workload.csv). Required by FGDScore,
	// refused by the others. A relative path is relative to the
	// scheduler's working directory.
	TargetWorkload string `json:"targetWorkload,omitempty"`
	// Seed seeds RandomScore's draws (default DefaultSeed): the same
	// feasible nodes in the same order of cycles give the same choices.
	// Refused by the other policies.
	Seed *uint64 `json:"seed,omitempty"`
}

// config is Args resolved.
type config struct {
	driver, deviceClass, modelAttribute string
	capacity                            resourcev1.QualifiedName
	scale                               policy.Scale
	workload                            policy.Workload
	seed                                uint64
}

// decodeArgs reads a plugin's arguments strictly (an unknown field is an
// error) and applies the defaults; the target workload is read here, so
// that a bad file stops the scheduler at its start.
func decodeArgs(name string, obj runtime.Object) (config, error) {
	var args Args
	if obj != nil {
		u, ok := obj.(*runtime.Unknown)
		if !ok {
			return config{}, fmt.Errorf("%s: want args of type runtime.Unknown, got %T", name, obj)
		}
		if len(u.Raw) > 0 {
			switch u.ContentType {
			case runtime.ContentTypeJSON, "":
				dec := json.NewDecoder(bytes.NewReader(u.Raw))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&args); err != nil {
					return config{}, fmt.Errorf("%s args: %w", name, err)
				}
			case runtime.ContentTypeYAML:
				if err := yaml.UnmarshalStrict(u.Raw, &args); err != nil {
					return config{}, fmt.Errorf("%s args: %w", name, err)
				}
			default:
				return config{}, fmt.Errorf("%s args: content type %q not supported", name, u.ContentType)
			}
		}
	}
	cfg := config{driver: args.Driver, deviceClass: args.DeviceClass, capacity: resourcev1.QualifiedName(args.Capacity),
		modelAttribute: args.ModelAttribute, seed: DefaultSeed}
	for _, d := range []struct {
		field *string
		def   string
	}{{&cfg.driver, DefaultDriver}, {&cfg.deviceClass, DefaultDeviceClass}, {&cfg.modelAttribute, DefaultModelAttribute}} {
		if *d.field == "" {
			*d.field = d.def
		}
	}
	if cfg.capacity == "" {
		cfg.capacity = DefaultCapacity
	}
	cpu := DefaultMaxNodeCPU
	if args.MaxNodeCPU != nil {
		cpu = *args.MaxNodeCPU
	}
	if cpu.MilliValue() <= 0 {
		return config{}, fmt.Errorf("%s args: maxNodeCPU %s: want above 0", name, cpu.String())
	}
	gpus := args.MaxNodeGPUs
	if gpus == 0 {
		gpus = DefaultMaxNodeGPUs
	}
	if gpus < 0 {
		return config{}, fmt.Errorf("%s args: maxNodeGPUs %d: want above 0", name, gpus)
	}
	cfg.scale = policy.Scale{CPU: cpu.MilliValue(), GPU: int64(gpus) * policy.MilliPerGPU}
	switch {
	case name == FGDName && args.TargetWorkload == "":
		return config{}, fmt.Errorf("%s args: targetWorkload: want the path of the target workload (pod types and popularity; batkube-openb writes target-workload.csv)", name)
	case name != FGDName && args.TargetWorkload != "":
		return config{}, fmt.Errorf("%s args: targetWorkload is %s's only", name, FGDName)
	case name != RandomName && args.Seed != nil:
		return config{}, fmt.Errorf("%s args: seed is %s's only", name, RandomName)
	}
	if args.TargetWorkload != "" {
		w, err := policy.ReadWorkloadFile(args.TargetWorkload)
		if err != nil {
			return config{}, fmt.Errorf("%s args: targetWorkload: %w", name, err)
		}
		cfg.workload = w
	}
	if args.Seed != nil {
		cfg.seed = *args.Seed
	}
	return cfg, nil
}
