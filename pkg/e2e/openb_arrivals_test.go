package e2e

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/openb"
	"github.com/batkube/batkube/pkg/outputs"
)

// TestOpenBArrivalsEndAtTheLastArrival: the FGD paper's arrival-only
// experiment on the openb sample (arrivals until 130 % of its GPUs, one a
// second), run with kube-scheduler 1.37 and kube-controller-manager and
// --end-at one interval after the last arrival: the run ends there (no
// pod starts after the last arrival, the pods that never fitted are
// rejected rather than run once the others leave), every pod that started
// completes at the end instant, every step up to it is exact, and the
// allocation curve reads from the outputs.
func TestOpenBArrivalsEndAtTheLastArrival(t *testing.T) {
	nodes, pods := readOpenBSample(t)
	const interval = 1.0
	arrivals, err := openb.Arrivals(nodes, pods, openb.ArrivalOptions{Percent: 130, Seed: 7, Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := openb.Convert(nodes, openb.ArrivalPods(arrivals), openb.Options{NoPriority: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Jobs) != len(arrivals) {
		t.Fatalf("converted %d jobs of %d arrivals", len(w.Jobs), len(arrivals))
	}
	sample := writeOpenBInputs(t, nodes, openb.ArrivalPods(arrivals), w)
	last := arrivals[len(arrivals)-1].ArrivedAt
	end := last + interval

	s := newSimulation(t, sample.platform, sample.workload)
	s.cfg.ControllerManager = true
	s.cfg.Objects = []string{sample.objects}
	s.cfg.EndAt = time.Duration(end * float64(time.Second))
	sum := s.mustRun(5 * time.Minute)
	wantEveryStepExact(t, sum)
	if sum.Succeeded+sum.Rejected != len(arrivals) || sum.Rejected == 0 || sum.Succeeded == 0 {
		t.Fatalf("%d succeeded and %d rejected of %d arrivals: want every pod to have either run to the end or been rejected at it, some of each (130 %% of the GPUs arrived)",
			sum.Succeeded, sum.Rejected, len(arrivals))
	}

	rows, err := outputs.ReadCSV(filepath.Join(s.cfg.OutDir, "_pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	started := 0
	for _, r := range rows {
		if r["started"] == "" {
			continue
		}
		started++
		if at := num(t, r["started"]); at > last {
			t.Errorf("pod %s started at %g, after the last arrival (%g): the run should have ended at %g", r["job_id"], at, last, end)
		}
		if fin := num(t, r["finished"]); math.Abs(fin-end) > 1e-6 {
			t.Errorf("pod %s finished at %g, want the end instant %g", r["job_id"], fin, end)
		}
	}
	if started != sum.Succeeded {
		t.Errorf("%d pods started in _pods.csv, %d jobs succeeded", started, sum.Succeeded)
	}
	if sum.Makespan > end+1e-6 {
		t.Errorf("makespan %g: the simulation went past its end %g", sum.Makespan, end)
	}

	var b bytes.Buffer
	if err := openb.WriteArrivals(&b, arrivals, openb.GPUCapacity(nodes)); err != nil {
		t.Fatal(err)
	}
	arrivalsCSV := filepath.Join(t.TempDir(), openb.ArrivalsFile)
	if err := os.WriteFile(arrivalsCSV, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	curve, err := openb.AllocationCurve(arrivalsCSV, s.cfg.OutDir, 10)
	if err != nil {
		t.Fatal(err)
	}
	top := curve[len(curve)-1]
	if !(top.AllocatedPercent > 0) || top.AllocatedPercent > 100 || top.Arrivals > len(arrivals) {
		t.Errorf("allocation curve ends at %+v: want a share of the GPUs in (0, 100] %%", top)
	}
	t.Logf("%d arrivals, %d ran, %d rejected at %s s; allocation at %g %% arrived: %g %%",
		len(arrivals), sum.Succeeded, sum.Rejected, strconv.FormatFloat(end, 'g', -1, 64), top.ArrivedPercent, top.AllocatedPercent)
}
