package e2e

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/openb"
	"github.com/batkube/batkube/pkg/outputs"
	"github.com/batkube/batkube/pkg/translate"
)

// TestOpenBSampleReplayedThroughDRA: a hand-written sample in the format
// of the Alibaba GPU-sharing trace (testdata/openb_sample: four nodes, V100
// and T4 GPUs and a node without any; 21 pods asking for whole GPUs, shares
// of 250 to 700 thousandths, a model, or no GPU), converted by package
// openb (GPUs shared through DRA consumable capacity) and replayed with the
// real kube-scheduler 1.37 and kube-controller-manager. From the claims'
// allocations (client-go watch) and _pods.csv: every kept pod completes in
// exactly its trace run time; no GPU holds more than 1000 milli of running
// pods at any instant, and some GPU is shared; a whole-GPU pod never shares
// its GPU and consumes all of it, a share consumes its milli; devices are
// on the pod's node and of a model the pod accepts; no pod waits at an
// instant when a node has the cpu, the memory and the GPUs (of an accepted
// model, with the room) it asks for; every step is exact.
func TestOpenBSampleReplayedThroughDRA(t *testing.T) {
	sample := convertOpenBSample(t)
	runs, _ := replayOpenBSample(t, sample, nil)
	var instants []float64
	for _, r := range runs {
		instants = append(instants, r.created, r.finished)
	}
	sort.Float64s(instants)
	sharedInstants, waited := 0, 0
	for _, at := range instants {
		state := openBStateAt(runs, at)
		for dev, milli := range state.gpuMilli {
			if milli > 1000 {
				t.Errorf("t=%g: GPU %s holds %d milli of %q", at, dev, milli, state.holders[dev])
			}
			if len(state.holders[dev]) > 1 {
				sharedInstants++
				for _, name := range state.holders[dev] {
					if r := runs[name]; r.pod.GPUMilli == 1000 {
						t.Errorf("t=%g: whole-GPU pod %s shares GPU %s with %q", at, name, dev, state.holders[dev])
					}
				}
			}
		}
		for _, r := range runs {
			if r.created <= at && r.started > at {
				if node, ok := state.roomFor(r.pod, sample.nodes); ok {
					t.Errorf("t=%g: pod %s (cpu %dm, %d MiB, %d GPU x %d milli, models %q; started at %g) waited while node %s had room", at, r.pod.Name, r.pod.CPUMilli, r.pod.MemMiB, r.pod.GPUs, r.pod.GPUMilli, r.pod.GPUModels, r.started, node)
				}
			}
		}
	}
	for _, r := range runs {
		if r.started > r.created {
			waited++
		}
	}
	t.Logf("%d pods, %d waited; %d (instant, GPU) pairs with a shared GPU", len(runs), waited, sharedInstants)
	if waited == 0 {
		t.Error("no pod waited: the sample is meant to contend for the GPUs")
	}
	if sharedInstants == 0 {
		t.Error("no GPU was ever shared: the shares should have been packed")
	}
}

// openBSample is the converted sample: the paths of the run's inputs, the
// nodes and the pods the conversion kept, by name.
type openBSample struct {
	platform, workload, objects string
	nodes                       map[string]openb.Node // by Kubernetes node name (the devices' pool)
	pods                        map[string]openb.Pod
}

// convertOpenBSample converts testdata/openb_sample with package openb's
// defaults (shared GPUs, pods never scheduled dropped).
func convertOpenBSample(t *testing.T) openBSample {
	t.Helper()
	nodes, pods := readOpenBSample(t)
	w, rep, err := openb.Convert(nodes, pods, openb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dropped[openb.ReasonNeverScheduled] != 1 || rep.DroppedTotal() != 1 {
		t.Fatalf("conversion dropped %v, want the one pod never scheduled", rep.Dropped)
	}
	return writeOpenBInputs(t, nodes, pods, w)
}

// readOpenBSample reads the nodes and pods of testdata/openb_sample.
func readOpenBSample(t *testing.T) ([]openb.Node, []openb.Pod) {
	t.Helper()
	dir := filepath.Join(repoRoot(), "pkg/e2e/testdata/openb_sample")
	nodes, err := openb.ReadNodesFile(filepath.Join(dir, "nodes.csv"))
	if err != nil {
		t.Fatal(err)
	}
	pods, err := openb.ReadPodsFile(filepath.Join(dir, "pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return nodes, pods
}

// writeOpenBInputs writes a converted workload's run inputs into a
// temporary folder.
func writeOpenBInputs(t *testing.T, nodes []openb.Node, pods []openb.Pod, w openb.Workload) openBSample {
	t.Helper()
	out := t.TempDir()
	sample := openBSample{
		platform: filepath.Join(out, "platform.xml"), workload: filepath.Join(out, "workload.json"), objects: filepath.Join(out, "objects.yaml"),
		nodes: map[string]openb.Node{}, pods: map[string]openb.Pod{},
	}
	var platform, workload, objects bytes.Buffer
	if err := openb.WritePlatform(&platform, nodes, openb.PlatformOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteJSON(&workload); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteObjects(&objects, ""); err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string][]byte{sample.platform: platform.Bytes(), sample.workload: workload.Bytes(), sample.objects: objects.Bytes()} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range nodes {
		sample.nodes[translate.NodeName(n.Name)] = n
	}
	for _, j := range w.Jobs {
		for _, p := range pods {
			if p.Name == j.ID {
				sample.pods[p.Name] = p
			}
		}
	}
	return sample
}

// openBRun is a pod of the sample as it ran: its times from _pods.csv, its
// node, and the milli it holds of each of its GPUs (pool/device).
type openBRun struct {
	pod                        openb.Pod
	node                       string
	created, started, finished float64
	gpus                       map[string]int64
}

// replayOpenBSample runs the sample with kube-controller-manager (and
// what configure sets, if not nil), requires every pod to succeed, every
// step to be exact and every allocation to be right
// (checkOpenBAllocations), and returns the runs and the output folder.
func replayOpenBSample(t *testing.T, sample openBSample, configure func(*simulation)) (map[string]openBRun, string) {
	t.Helper()
	s := newSimulation(t, sample.platform, sample.workload)
	s.cfg.ControllerManager = true
	s.cfg.Objects = []string{sample.objects}
	if configure != nil {
		configure(s)
	}
	claims := &claimAllocations{}
	s.onReady = claims.watch
	sum := s.mustRun(5 * time.Minute)
	if sum.Succeeded != len(sample.pods) {
		t.Fatalf("%d of %d jobs succeeded", sum.Succeeded, len(sample.pods))
	}
	wantEveryStepExact(t, sum)
	runs := readOpenBRuns(t, filepath.Join(s.cfg.OutDir, "_pods.csv"), sample, claims.consumedByPod())
	checkOpenBAllocations(t, runs, sample)
	return runs, s.cfg.OutDir
}

// readOpenBRuns joins _pods.csv, the trace's pods and the claims'
// allocations; each pod must have completed in exactly its trace run time.
func readOpenBRuns(t *testing.T, podsCSV string, sample openBSample, consumed map[string]map[string]int64) map[string]openBRun {
	t.Helper()
	rows, err := outputs.ReadCSV(podsCSV)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]openBRun{}
	for _, row := range rows {
		name := row["job_id"][strings.LastIndex(row["job_id"], "!")+1:]
		p, ok := sample.pods[name]
		if !ok {
			t.Fatalf("_pods.csv: job %s is not in the sample", row["job_id"])
		}
		r := openBRun{pod: p, node: row["node"], created: num(t, row["created"]), started: num(t, row["started"]), finished: num(t, row["finished"]), gpus: map[string]int64{}}
		if want := *p.Deleted - *p.Scheduled; r.finished-r.started != want {
			t.Errorf("pod %s ran %g s, want its trace's %g", name, r.finished-r.started, want)
		}
		if r.created != p.Created {
			t.Errorf("pod %s created at %g, want %g", name, r.created, p.Created)
		}
		for dev, milli := range consumed[row["pod"]] {
			r.gpus[dev] = milli
		}
		if logged := devicesCell(t, row["devices"]); !maps.Equal(logged, r.gpus) {
			t.Errorf("pod %s: _pods.csv's devices %q, its claims' allocations %v", name, row["devices"], r.gpus)
		}
		runs[name] = r
	}
	if len(runs) != len(sample.pods) {
		t.Fatalf("_pods.csv has %d pods, want %d", len(runs), len(sample.pods))
	}
	return runs
}

// devicesCell reads _pods.csv's devices cell: the milli each GPU
// ("pool/device") holds (outputs.DeviceUse.Milli).
func devicesCell(t *testing.T, cell string) map[string]int64 {
	t.Helper()
	devices, err := outputs.ParseDevices(cell)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, d := range devices {
		out[d.Device] = d.Milli()
	}
	return out
}

// checkOpenBAllocations checks each pod's devices against what it asked:
// as many GPUs as num_gpu, on its node, of a model it accepts, consuming
// all of each for whole GPUs and gpu_milli of one for a share.
func checkOpenBAllocations(t *testing.T, runs map[string]openBRun, sample openBSample) {
	t.Helper()
	for name, r := range runs {
		if len(r.gpus) != r.pod.GPUs {
			t.Errorf("pod %s: %d GPUs allocated (%v), want %d", name, len(r.gpus), r.gpus, r.pod.GPUs)
			continue
		}
		for dev, milli := range r.gpus {
			pool, _, _ := strings.Cut(dev, "/")
			if pool != r.node {
				t.Errorf("pod %s on node %s: GPU %s of another node", name, r.node, dev)
			}
			if models := r.pod.GPUModels; len(models) > 0 && !slices.Contains(models, sample.nodes[pool].Model) {
				t.Errorf("pod %s accepts %q: GPU %s is a %s", name, models, dev, sample.nodes[pool].Model)
			}
			if milli != r.pod.GPUMilli {
				t.Errorf("pod %s: consumes %d milli of GPU %s, want %d", name, milli, dev, r.pod.GPUMilli)
			}
		}
	}
}

// openBState is what the running pods hold at an instant.
type openBState struct {
	cpuMilli, memMiB map[string]int64    // by node
	gpuMilli         map[string]int64    // by pool/device
	holders          map[string][]string // pods by pool/device
}

func openBStateAt(runs map[string]openBRun, at float64) openBState {
	s := openBState{cpuMilli: map[string]int64{}, memMiB: map[string]int64{}, gpuMilli: map[string]int64{}, holders: map[string][]string{}}
	names := make([]string, 0, len(runs))
	for name := range runs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r := runs[name]
		if r.started > at || r.finished <= at {
			continue
		}
		s.cpuMilli[r.node] += r.pod.CPUMilli
		s.memMiB[r.node] += r.pod.MemMiB
		for dev := range r.gpus {
			s.gpuMilli[dev] += r.pod.GPUMilli
			s.holders[dev] = append(s.holders[dev], name)
		}
	}
	return s
}

// roomFor returns a node with room for the pod in this state, if any.
func (s openBState) roomFor(p openb.Pod, nodes map[string]openb.Node) (string, bool) {
	for name, n := range nodes {
		if n.CPUMilli-s.cpuMilli[name] < p.CPUMilli || n.MemMiB-s.memMiB[name] < p.MemMiB {
			continue
		}
		if p.GPUs == 0 {
			return name, true
		}
		if len(p.GPUModels) > 0 && !slices.Contains(p.GPUModels, n.Model) {
			continue
		}
		fit := 0
		for i := range n.GPUs {
			if 1000-s.gpuMilli[fmt.Sprintf("%s/gpu-%d", name, i)] >= p.GPUMilli {
				fit++
			}
		}
		if fit >= p.GPUs {
			return name, true
		}
	}
	return "", false
}

// TestOpenBBenchmarkReadsItsInputs checks what BenchmarkOpenB reads before
// its hours of runs: the converter's arrivals of the whole trace (seed 42:
// 10,883 arrivals, so the run ends at 10,883 s, as docs/gpu.md says) and
// the paper's means of each policy.
func TestOpenBBenchmarkReadsItsInputs(t *testing.T) {
	in := convertWithOpenB(t, "--no-priority --arrivals 130 --seed 42",
		sharedData(t, "openb/openb_node_list_all_node.csv"), sharedData(t, "openb/openb_pod_list_default.csv"))
	if at := lastArrival(t, filepath.Join(in, openb.ArrivalsFile)); at != 10882 {
		t.Errorf("last arrival at %g s, want 10882", at)
	}
	paper := sharedData(t, "openb/fgd-paper-allocation-default.csv")
	for name, want := range map[string]float64{"random": 86.30, "clustering": 91.65, "packing": 91.78, "fgd": 95.23} {
		if got := paperMeans(t, paper, name)[100]; got != want {
			t.Errorf("paper's %s at 100 %%: %g, want %g", name, got, want)
		}
	}
}

// convertWithOpenB runs bin/batkube-openb with the flags on the trace's
// lists into a temporary folder, and returns it.
func convertWithOpenB(tb testing.TB, flags, nodes, pods string) string {
	tb.Helper()
	out := tb.TempDir()
	args := append([]string{"-q", "-o", out}, strings.Fields(flags)...)
	cmd := exec.Command(filepath.Join(buildCommands(tb, false, "./cmd/batkube-openb"), "batkube-openb"), append(args, nodes, pods)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("batkube-openb %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return out
}

// lastArrival is the instant of the last arrival of arrivals.csv.
func lastArrival(tb testing.TB, path string) float64 {
	tb.Helper()
	rows, err := outputs.ReadCSV(path)
	if err != nil || len(rows) == 0 {
		tb.Fatalf("%s: no arrival (%v)", path, err)
	}
	at, err := strconv.ParseFloat(rows[len(rows)-1]["arrived_at"], 64)
	if err != nil {
		tb.Fatalf("%s: last arrival: %v", path, err)
	}
	return at
}

// paperMeans is the paper's mean allocation by arrived percent for the
// policy (gpuPolicies' name).
func paperMeans(tb testing.TB, path, name string) map[float64]float64 {
	tb.Helper()
	rows, err := openb.ReadPaperAllocation(path)
	if err != nil {
		tb.Fatal(err)
	}
	paperName := map[string]string{"random": "Random", "dotprod": "DotProd", "clustering": "GpuClustering",
		"packing": "GpuPacking", "bestfit": "BestFit", "fgd": "FGD"}[name]
	means := map[float64]float64{}
	for _, r := range rows {
		if _, policy, _ := strings.Cut(r.Policy, "-"); policy == paperName { // "06-FGD"
			means[r.ArrivedPercent] = r.Mean
		}
	}
	if len(means) == 0 {
		tb.Fatalf("%s: no row of %s", path, paperName)
	}
	return means
}
