package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/outputs"
)

// baselineManifest is examples/kueue/baseline.yaml cut down to the first
// queues ClusterQueues of its first cohort (all of them if queues is 0)
// and scale × each class's Jobs (at least one): the same shape, fewer
// objects. It returns the manifest's
// path and the Jobs: namespace/name → instant of creation, class.
func baselineManifest(t testing.TB, queues int, scale float64) (path string, jobs map[string]baselineJob) {
	t.Helper()
	docs, err := apiserver.ManifestDocuments(readFile(t, filepath.Join(repoRoot(), "examples/kueue/baseline.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	keep := func(queue string) bool { return strings.HasPrefix(queue, "cq-") }
	if queues > 0 {
		kept := map[string]bool{}
		for q := range queues {
			kept[fmt.Sprintf("cq-0-%d-cohort-0", q)] = true
		}
		keep = func(queue string) bool { return kept[queue] }
	}
	jobs = map[string]baselineJob{}
	var out []byte
	for _, doc := range docs {
		var obj map[string]any
		if err := json.Unmarshal(doc, &obj); err != nil {
			t.Fatal(err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		ns, _ := meta["namespace"].(string)
		switch obj["kind"] {
		case "Namespace", "ClusterQueue":
			if !keep(name) {
				continue
			}
		case "LocalQueue":
			if !keep(ns) {
				continue
			}
		case "Job":
			if !keep(ns) {
				continue
			}
			a, _ := meta["annotations"].(map[string]any)
			n, _ := strconv.Atoi(a["batkube.io/repeat"].(string))
			n = max(1, int(math.Round(float64(n)*scale)))
			a["batkube.io/repeat"] = strconv.Itoa(n)
			first, _ := strconv.ParseFloat(a["batkube.io/create-at"].(string), 64)
			every, _ := strconv.ParseFloat(a["batkube.io/repeat-every"].(string), 64)
			for i := range n {
				jobs[ns+"/"+name+"-"+strconv.Itoa(i)] = baselineJob{created: first + float64(i)*every, class: name}
			}
		}
		y, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, "---\n"...), y...)
	}
	path = filepath.Join(t.TempDir(), "baseline.yaml")
	writeFile(t, path, out)
	return path, jobs
}

// baselineJob is a Job of the baseline scenario.
type baselineJob struct {
	created float64
	class   string
}

// classOf is a baseline Workload's class, from its Job's name (CLASS-i).
func classOf(w outputs.Workload) string {
	name := strings.TrimPrefix(w.Owner, "Job/")
	if i := strings.LastIndex(name, "-"); i >= 0 {
		return name[:i]
	}
	return name
}

// classWaits are a class's times to admission.
type classWaits struct {
	class string
	outputs.Waits
}

// baselineClasses are the Workloads' times to admission by class (small,
// medium, large: the harness's order).
func baselineClasses(ws []outputs.Workload) []classWaits {
	by := map[string][]float64{}
	for _, w := range ws {
		by[classOf(w)] = append(by[classOf(w)], w.TimeToAdmission())
	}
	var out []classWaits
	for _, c := range []string{"small", "medium", "large"} {
		if waits, ok := by[c]; ok {
			out = append(out, classWaits{c, outputs.NewWaits(waits)})
		}
	}
	return out
}
