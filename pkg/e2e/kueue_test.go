package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/apiserver"
)

// TestKueueAdmitsWithinQuotas runs Kueue's manager v0.17.0, unmodified
// (batkube-run --kueue: its CRDs, webhooks and certificate management as
// its release manifests install them), with kube-controller-manager and
// kube-scheduler 1.37, on the two tenants of examples/kueue/two-tenants.yaml:
// ClusterQueues of 8 CPUs each in one cohort, and ten Jobs of one 4-CPU,
// 60 s pod labelled with their namespace's LocalQueue, created at their
// simulated instants, on platform_4 (32 CPUs: the quotas, not the cluster,
// hold the Jobs back).
//
// Every Job is created suspended by Kueue's mutating webhook and runs only
// once Kueue admits its Workload; all complete. The Workloads holding
// quota never exceed the cohort's 16 CPUs, nor do the pods running.
// Exact, in Kueue's own time: Kueue requeues the Workloads it could not
// admit once per batch period (1 s after quota is freed), and the Job
// controller creates an unsuspended Job's pods after its batched sync (1 s):
// so whenever its cohort has room for n more Workloads (every Job asks the
// same), min(n, those waiting) of them get quota within 1 s, no pod starts more than 1 s after its Workload's admission, each
// tenant's Workloads are admitted in the order of their creation, and every
// step is proven exact. The instants come from _workloads.csv, which the
// test checks against the pods' own.
//
// Under StrictFIFO (the same objects, both ClusterQueues StrictFIFO), the
// head Workload of a full ClusterQueue stays at the head, and Kueue's
// scheduler pauses 1 to 10 ms between cycles that admit nothing: each pause
// ends early once the store moved (simclock.Pause), so the run takes no
// step per pause (it would otherwise take one every 10 simulated ms while
// the cohort is full: thousands) and the checks above still hold.
func TestKueueAdmitsWithinQuotas(t *testing.T) {
	for _, strategy := range []string{"BestEffortFIFO", "StrictFIFO"} {
		t.Run(strategy, func(t *testing.T) { testKueueAdmitsWithinQuotas(t, strategy) })
	}
}

func testKueueAdmitsWithinQuotas(t *testing.T, strategy string) {
	root := repoRoot()
	objects := abs(root, "examples/kueue/two-tenants.yaml")
	if strategy != "BestEffortFIFO" {
		data := readFile(t, objects)
		const field = "queueingStrategy: BestEffortFIFO"
		if strings.Count(string(data), field) != 2 {
			t.Fatalf("%s: want two ClusterQueues with %q", objects, field)
		}
		objects = filepath.Join(t.TempDir(), "two-tenants.yaml")
		writeFile(t, objects, []byte(strings.ReplaceAll(string(data), field, "queueingStrategy: "+strategy)))
	}
	created := kueueJobCreations(t, objects)
	workload := filepath.Join(t.TempDir(), "one.json")
	writeJSON(t, workload, map[string]any{"nb_res": 4,
		"jobs":     []map[string]any{{"id": "a", "subtime": 0, "res": 1, "profile": "d20"}},
		"profiles": map[string]any{"d20": map[string]any{"type": "delay", "delay": 20, "cpu": 1, "memory": "1Gi"}}})
	s := newSimulation(t, "examples/platforms/platform_4.xml", workload)
	s.cfg.Kueue = true
	s.cfg.Objects = []string{objects}
	sum := s.mustRunExact(5 * time.Minute)
	t.Logf("settling: %d steps, %+v", sum.Settle.Steps(), sum.Settle)
	// Ten Jobs: their creations, starts, ends and batched syncs make some
	// tens of steps; a step per pause of Kueue's scheduler, thousands.
	if steps := sum.Settle.Steps(); steps > 300 {
		t.Errorf("%d steps (%+v): Kueue's pauses taken as steps?", steps, sum.Settle)
	}
	if strategy == "StrictFIFO" && sum.Settle.PauseReleases == 0 {
		t.Errorf("settling: %+v, want Kueue's pauses released (its head Workloads wait for quota)", sum.Settle)
	}

	// The pods, by Job (namespace/name).
	type run struct{ start, finish float64 }
	pods := map[string]run{}
	for id, j := range s.jobs() {
		if !strings.HasPrefix(id, "dyn!") {
			continue
		}
		// dyn!NAMESPACE.JOB-xxxxx: a Job's pod, named after its Job.
		ns, pod, _ := strings.Cut(strings.TrimPrefix(id, "dyn!"), ".")
		job := ns + "/" + generatedFrom(pod)
		if _, ok := created[job]; !ok {
			t.Errorf("job %s: not a pod of the manifest's Jobs", id)
			continue
		}
		if j.state != "COMPLETED_SUCCESSFULLY" {
			t.Errorf("%s's pod ended %s, want COMPLETED_SUCCESSFULLY", job, j.state)
		}
		if _, dup := pods[job]; dup {
			t.Errorf("Job %s ran two pods", job)
		}
		pods[job] = run{j.start, j.finish}
	}
	if len(pods) != len(created) {
		t.Fatalf("%d Jobs' pods ran, want one for each of the %d Jobs", len(pods), len(created))
	}

	// The Workloads, as the server logged them.
	rows, err := readCSVFile(filepath.Join(s.cfg.OutDir, "_workloads.csv"))
	if err != nil {
		t.Fatal(err)
	}
	type wl struct {
		job, tenant                           string
		created, admitted, reserved, finished float64
	}
	var wls []wl
	for _, r := range rows {
		// Kueue names a Job's Workload job-NAME-HASH.
		name := strings.TrimPrefix(r["name"], "job-")
		job := r["namespace"] + "/" + generatedFrom(name)
		w := wl{job: job, tenant: r["namespace"], created: num(t, r["created"]), reserved: num(t, r["quota_reserved"]),
			admitted: num(t, r["admitted"]), finished: num(t, r["finished"])}
		if r["cluster_queue"] != r["namespace"] || r["queue"] != "queue" || r["final_state"] != "Finished" || r["reason"] != "Succeeded" {
			t.Errorf("Workload %s/%s: %v, want admitted by ClusterQueue %s from LocalQueue queue, Finished (Succeeded)", r["namespace"], r["name"], r, r["namespace"])
		}
		if at, ok := created[job]; !ok || w.created != at {
			t.Errorf("Workload of %s created at %g, want its Job's creation %g", job, w.created, at)
		}
		if p := pods[job]; p.start < w.admitted || p.start > w.admitted+1 || p.finish > w.finished {
			t.Errorf("%s's pod ran %g-%g, want from its Workload's admission (%g) within the Job controller's batched sync (1 s), done before its Workload finished (%g)", job, p.start, p.finish, w.admitted, w.finished)
		}
		wls = append(wls, w)
	}
	if len(wls) != len(created) {
		t.Fatalf("%d Workloads, want one for each of the %d Jobs", len(wls), len(created))
	}

	const quota, ask, batch = 16.0, 4.0, 1.0 // the cohort's CPUs; each Job's; Kueue's requeue batch period
	var instants []float64
	for _, w := range wls {
		instants = append(instants, w.created, w.reserved, w.finished)
	}
	for _, p := range pods {
		instants = append(instants, p.start, p.finish)
	}
	slices.Sort(instants)
	instants = slices.Compact(instants)
	for _, at := range instants {
		reserved, running := 0.0, 0.0
		for _, w := range wls {
			if w.reserved <= at && at < w.finished {
				reserved += ask
			}
		}
		for _, p := range pods {
			if p.start <= at && at < p.finish {
				running += ask
			}
		}
		if reserved > quota || running > quota {
			t.Errorf("t=%g: Workloads hold %g CPUs of quota and pods run %g, above the cohort's %g", at, reserved, running, quota)
		}
		// Room for slots more Workloads, pending of them waiting: within a
		// batch period, Kueue admits as many as it can.
		slots, pending, soon := int((quota-reserved)/ask), 0, 0
		var waiting []string
		for _, w := range wls {
			if w.created <= at && at < w.reserved {
				pending++
				waiting = append(waiting, w.job)
				if w.reserved <= at+batch {
					soon++
				}
			}
		}
		if soon < min(slots, pending) {
			t.Errorf("t=%g: the cohort holds %g of its %g CPUs, %v wait, and only %d got quota within %g s", at, reserved, quota, waiting, soon, batch)
		}
	}
	for _, tenant := range []string{"team-a", "team-b"} {
		var mine []wl
		for _, w := range wls {
			if w.tenant == tenant {
				mine = append(mine, w)
			}
		}
		slices.SortFunc(mine, func(a, b wl) int { return cmp.Compare(a.created, b.created) })
		for i := 1; i < len(mine); i++ {
			if mine[i].created > mine[i-1].created && mine[i].admitted < mine[i-1].admitted {
				t.Errorf("%s admitted at %g, before %s (created earlier, admitted %g)", mine[i].job, mine[i].admitted, mine[i-1].job, mine[i-1].admitted)
			}
		}
	}
}

// kueueJobCreations reads the Jobs of a manifest: namespace/name → the
// simulated instant of their creation (batkube.io/create-at).
func kueueJobCreations(t *testing.T, path string) map[string]float64 {
	t.Helper()
	data := readFile(t, path)
	docs, err := apiserver.ManifestDocuments(data)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, doc := range docs {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name, Namespace string
				Annotations     map[string]string
			} `json:"metadata"`
		}
		if err := json.Unmarshal(doc, &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Kind != "Job" {
			continue
		}
		var at float64
		if _, err := fmt.Sscan(obj.Metadata.Annotations["batkube.io/create-at"], &at); err != nil {
			t.Fatalf("Job %s: create-at: %v", obj.Metadata.Name, err)
		}
		out[obj.Metadata.Namespace+"/"+obj.Metadata.Name] = at
	}
	return out
}

// generatedFrom is the name a generated name was made from: all before its
// last "-" (the whole name when it has none, which then matches no Job).
func generatedFrom(name string) string {
	if i := strings.LastIndex(name, "-"); i >= 0 {
		return name[:i]
	}
	return name
}
