package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/outputs"
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
	rows, err := outputs.ReadCSV(filepath.Join(s.cfg.OutDir, "_workloads.csv"))
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

// kueueJob is a Job of a manifest: its instant of creation, the CPUs its
// one pod asks for.
type kueueJob struct {
	created, cpu float64
}

// kueueJobs reads the Jobs of a manifest: namespace/name → its creation
// instant (batkube.io/create-at) and its pod's cpu request.
func kueueJobs(t *testing.T, path string) map[string]kueueJob {
	t.Helper()
	docs, err := apiserver.ManifestDocuments(readFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]kueueJob{}
	for _, doc := range docs {
		var job batchv1.Job
		if err := json.Unmarshal(doc, &job); err != nil {
			t.Fatal(err)
		}
		if job.Kind != "Job" {
			continue
		}
		var j kueueJob
		if _, err := fmt.Sscan(job.Annotations["batkube.io/create-at"], &j.created); err != nil {
			t.Fatalf("Job %s: create-at: %v", job.Name, err)
		}
		j.cpu = job.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().AsApproximateFloat64()
		out[job.Namespace+"/"+job.Name] = j
	}
	return out
}

// TestKueueStrictFIFOFromTheJobsCreation runs Kueue from the first instant
// on pkg/e2e/testdata/kueue-strict-fifo.yaml: three StrictFIFO
// ClusterQueues of 4 CPUs (two in a cohort, one alone), created at 2 s,
// and Jobs created before them (0-1.7 s, their Workloads waiting for a
// queue), at the first admissions (2 s) and after, at instants that are
// not whole seconds. Exactness is measured from what the user did, each
// Job's creation:
//
//   - every Job's Workload is created at the Job's own instant (Kueue
//     runs before simulated time starts: its controllers answered their
//     probes, so no Workload waits for a later event);
//   - each ClusterQueue admits in the order of its Jobs' creation
//     (StrictFIFO; Jobs created within one second may tie, as creation
//     timestamps have a resolution of one second);
//   - whenever a ClusterQueue's head fits in its own quota and in what its
//     cohort leaves unused, a Workload of the cohort gets quota within
//     Kueue's requeue batch period (1 s), and each pod starts within the
//     Job controller's 1 s of its Workload's admission;
//   - the pods running (from _pods.csv) never exceed a queue's quota: 4
//     CPUs for team-c, 8 for the cohort;
//   - every step is exact.
func TestKueueStrictFIFOFromTheJobsCreation(t *testing.T) {
	manifest := abs(repoRoot(), "pkg/e2e/testdata/kueue-strict-fifo.yaml")
	jobs := kueueJobs(t, manifest)
	workload := filepath.Join(t.TempDir(), "none.json")
	writeJSON(t, workload, map[string]any{"nb_res": 4, "jobs": []any{}, "profiles": map[string]any{}})
	s := newSimulation(t, "examples/platforms/platform_4.xml", workload)
	s.cfg.Kueue = true
	s.cfg.Objects = []string{manifest}
	sum := s.mustRunExact(5 * time.Minute)
	t.Logf("settling: %d steps, %+v", sum.Settle.Steps(), sum.Settle)

	const quota, batch, queuesAt = 4.0, 1.0, 2.0

	// The Workloads: one per Job, created at the Job's instant.
	rows, err := outputs.ReadCSV(filepath.Join(s.cfg.OutDir, "_workloads.csv"))
	if err != nil {
		t.Fatal(err)
	}
	type wl struct {
		job, queue              string
		kueueJob                kueueJob
		reserved, admitted, end float64
	}
	var wls []wl
	for _, r := range rows {
		job := r["namespace"] + "/" + generatedFrom(strings.TrimPrefix(r["name"], "job-"))
		kj, ok := jobs[job]
		if !ok {
			t.Errorf("Workload %s/%s: not a Job of the manifest", r["namespace"], r["name"])
			continue
		}
		if created := num(t, r["created"]); created != kj.created {
			t.Errorf("the Workload of %s created at %g, want its Job's creation, %g", job, created, kj.created)
		}
		if r["final_state"] != "Finished" || r["cluster_queue"] != r["namespace"] {
			t.Errorf("Workload of %s: %v, want Finished in ClusterQueue %s", job, r, r["namespace"])
		}
		wls = append(wls, wl{job: job, queue: r["namespace"], kueueJob: kj,
			reserved: num(t, r["quota_reserved"]), admitted: num(t, r["admitted"]), end: num(t, r["finished"])})
	}
	if len(wls) != len(jobs) {
		t.Fatalf("%d Workloads, want one for each of the %d Jobs", len(wls), len(jobs))
	}

	// The pods, from _pods.csv: one per Job, started within 1 s of its
	// Workload's admission.
	pods, err := outputs.ReadCSV(filepath.Join(s.cfg.OutDir, "_pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	type run struct{ start, finish float64 }
	ran := map[string]run{}
	for _, p := range pods {
		job := p["namespace"] + "/" + generatedFrom(p["pod"])
		if _, ok := jobs[job]; !ok || p["phase"] != "Succeeded" {
			t.Errorf("pod %s/%s: %s, want a Succeeded pod of a manifest's Job", p["namespace"], p["pod"], p["phase"])
			continue
		}
		ran[job] = run{num(t, p["started"]), num(t, p["finished"])}
	}
	for _, w := range wls {
		if p, ok := ran[w.job]; !ok || p.start < w.admitted || p.start > w.admitted+batch || p.finish > w.end {
			t.Errorf("%s's pod ran %+v (found %v), want from its Workload's admission (%g) within 1 s, ended by its end (%g)", w.job, p, ok, w.admitted, w.end)
		}
	}

	// StrictFIFO, from the Jobs' creation: a Job created a second or more
	// before another of its queue is admitted no later.
	for _, a := range wls {
		for _, b := range wls {
			if a.queue == b.queue && math.Floor(a.kueueJob.created) < math.Floor(b.kueueJob.created) && a.admitted > b.admitted {
				t.Errorf("%s (created %g) admitted at %g, after %s (created %g, admitted %g)", a.job, a.kueueJob.created, a.admitted, b.job, b.kueueJob.created, b.admitted)
			}
		}
	}

	// Quotas, and no head left waiting while it fits.
	var instants []float64
	for _, w := range wls {
		instants = append(instants, w.kueueJob.created, w.reserved, w.end)
	}
	for _, p := range ran {
		instants = append(instants, p.start, p.finish)
	}
	slices.Sort(instants)
	instants = slices.Compact(instants)
	for _, at := range instants {
		holding, running := map[string]float64{}, map[string]float64{}
		for _, w := range wls {
			if w.reserved <= at && at < w.end {
				holding[w.queue] += w.kueueJob.cpu
			}
			if p := ran[w.job]; p.start <= at && at < p.finish {
				running[w.queue] += w.kueueJob.cpu
			}
		}
		for _, use := range []map[string]float64{holding, running} {
			if c := use["team-c"]; c > quota {
				t.Errorf("t=%g: team-c uses %g CPUs, above its %g", at, c, quota)
			}
			if ab := use["team-a"] + use["team-b"]; ab > 2*quota {
				t.Errorf("t=%g: the cohort uses %g CPUs, above its %g", at, ab, 2*quota)
			}
		}
		if at < queuesAt {
			continue // no ClusterQueue yet
		}
		// Per quota domain (the cohort, team-c): if some queue's head fits
		// in its own quota and in what the domain leaves free (the largest
		// of the Jobs created in the head's second, which may tie), some
		// pending Workload of the domain gets quota within the batch
		// period. (A head that would borrow may wait: Kueue keeps the
		// cohort's room for a head that fits its own quota first.)
		for _, domain := range [][]string{{"team-a", "team-b"}, {"team-c"}} {
			free := quota * float64(len(domain))
			for _, q := range domain {
				free -= holding[q]
			}
			fits, soon := "", false
			for _, q := range domain {
				first, largest := math.Inf(1), 0.0
				for _, w := range wls {
					if w.queue == q && w.kueueJob.created <= at && at < w.reserved {
						first = min(first, math.Floor(w.kueueJob.created))
					}
				}
				for _, w := range wls {
					if w.queue == q && w.kueueJob.created <= at && at < w.reserved {
						soon = soon || w.reserved <= at+batch
						if math.Floor(w.kueueJob.created) == first {
							largest = max(largest, w.kueueJob.cpu)
						}
					}
				}
				if !math.IsInf(first, 1) && largest <= free && holding[q]+largest <= quota {
					fits = q
				}
			}
			if fits != "" && !soon {
				t.Errorf("t=%g: %s's head fits in the %g CPUs %v leave free, but no Workload of %v got quota within %g s", at, fits, free, domain, domain, batch)
			}
		}
	}
}
