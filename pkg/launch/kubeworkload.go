package launch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/batkube/batkube/pkg/translate"
)

// splitKubeWorkloads takes out of the run's workloads the jobs whose
// profile makes them Kubernetes objects (translate.SplitKubeWorkload: a
// kube_job is a batch/v1 Job, a kube_deployment a Deployment): Batsim
// gets the rest (written to the output folder), the objects become timed
// objects of the run (OutDir/wN.objects.yaml, created at their jobs'
// submission times), and kube-controller-manager runs to create their pods.
func (r *run) splitKubeWorkloads() error {
	for i, w := range r.cfg.Workloads {
		data, err := os.ReadFile(w)
		if err != nil {
			return fmt.Errorf("launch: %w", err)
		}
		if !bytes.Contains(data, []byte(translate.KubeJobField)) && !bytes.Contains(data, []byte(translate.KubeDeploymentField)) {
			continue
		}
		name := "w" + strconv.Itoa(i) // Batsim's name of the run's i-th workload
		split, err := translate.SplitKubeWorkload(name, data, translate.PodOptions{ExclusiveHosts: true})
		if err != nil {
			return fmt.Errorf("launch: %s: %w", w, err)
		}
		if len(split.Objects) == 0 {
			continue
		}
		base := strings.TrimSuffix(filepath.Base(w), filepath.Ext(w))
		objects := filepath.Join(r.cfg.OutDir, base+".objects.yaml")
		if err := writeYAMLDocs(objects, split.Objects); err != nil {
			return fmt.Errorf("launch: %s: %w", w, err)
		}
		workload := filepath.Join(r.cfg.OutDir, base+".batsim.json")
		if err := os.WriteFile(workload, split.Workload, 0o644); err != nil {
			return fmt.Errorf("launch: %w", err)
		}
		r.cfg.Workloads[i] = workload
		r.cfg.Objects = append(slices.Clip(r.cfg.Objects), objects)
		if !r.cfg.ControllerManager {
			r.cfg.ControllerManager = true
			if r.cfg.Logf != nil {
				r.cfg.Logf("%s has %d Kubernetes Jobs or Deployments: kube-controller-manager runs to create their pods", filepath.Base(w), len(split.Objects))
			}
		}
	}
	return nil
}
