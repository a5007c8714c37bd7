package qosdriven

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Defaults of Args.
const (
	DefaultControllerLabel = "qos.batkube.io/controller"
	DefaultSLOKey          = "qos.batkube.io/slo"
	DefaultSLO             = 0.8
)

// Args are the plugin's arguments, its pluginConfig entry in the
// KubeSchedulerConfiguration:
//
//	pluginConfig:
//	  - name: QoSDriven
//	    args:
//	      debugAddress: 127.0.0.1:10300
//	      defaultSLO: 0.8
type Args struct {
	// DebugAddress, if set, is the host:port where the debug table is
	// served over HTTP.
	DebugAddress string `json:"debugAddress,omitempty"`
	// ControllerLabel is the label whose value names a pod's controller
	// (default DefaultControllerLabel). Without it, a pod belongs to its
	// controlling owner (a Job, a ReplicaSet...), or stands alone.
	ControllerLabel string `json:"controllerLabel,omitempty"`
	// SLOKey is the annotation, or else label, holding a pod's SLO, a
	// fraction in (0, 1] (default DefaultSLOKey).
	SLOKey string `json:"sloKey,omitempty"`
	// DefaultSLO is the SLO of pods that give none (default DefaultSLO).
	DefaultSLO *float64 `json:"defaultSLO,omitempty"`
	// SafetyMargin, if set, turns on the SLO classes of the authors'
	// prototype: when two pods' controllers both have a TTV below it, the
	// one with the higher SLO goes first whatever their TTVs. Unset: pods
	// are in TTV order only.
	SafetyMargin *metav1.Duration `json:"safetyMargin,omitempty"`
}

// config is Args resolved.
type config struct {
	debugAddress    string
	controllerLabel string
	sloKey          string
	defaultSLO      float64
	safetyMargin    float64 // seconds; used when hasMargin
	hasMargin       bool
}

// decodeArgs reads the plugin's arguments strictly (an unknown field is an
// error, not silently ignored) and applies the defaults.
func decodeArgs(obj runtime.Object) (config, error) {
	var args Args
	if obj != nil {
		u, ok := obj.(*runtime.Unknown)
		if !ok {
			return config{}, fmt.Errorf("%s: want args of type runtime.Unknown, got %T", Name, obj)
		}
		if len(u.Raw) > 0 {
			switch u.ContentType {
			case runtime.ContentTypeJSON, "":
				dec := json.NewDecoder(bytes.NewReader(u.Raw))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&args); err != nil {
					return config{}, fmt.Errorf("%s args: %w", Name, err)
				}
			case runtime.ContentTypeYAML:
				if err := yaml.UnmarshalStrict(u.Raw, &args); err != nil {
					return config{}, fmt.Errorf("%s args: %w", Name, err)
				}
			default:
				return config{}, fmt.Errorf("%s args: content type %q not supported", Name, u.ContentType)
			}
		}
	}
	cfg := config{debugAddress: args.DebugAddress, controllerLabel: args.ControllerLabel, sloKey: args.SLOKey, defaultSLO: DefaultSLO}
	if cfg.controllerLabel == "" {
		cfg.controllerLabel = DefaultControllerLabel
	}
	if cfg.sloKey == "" {
		cfg.sloKey = DefaultSLOKey
	}
	if args.DefaultSLO != nil {
		if !validSLO(*args.DefaultSLO) {
			return config{}, fmt.Errorf("%s args: defaultSLO %g: want a fraction in (0, 1]", Name, *args.DefaultSLO)
		}
		cfg.defaultSLO = *args.DefaultSLO
	}
	if args.SafetyMargin != nil {
		cfg.safetyMargin, cfg.hasMargin = args.SafetyMargin.Duration.Seconds(), true
	}
	return cfg, nil
}

func validSLO(s float64) bool { return s > 0 && s <= 1 && !math.IsNaN(s) }

// marginString describes the safety margin for the log.
func (c config) marginString() string {
	if !c.hasMargin {
		return "none"
	}
	return time.Duration(c.safetyMargin * float64(time.Second)).String()
}
