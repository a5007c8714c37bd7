package openb

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func arrivalCluster() ([]Node, []Pod) {
	nodes := []Node{
		{Name: "n0", CPUMilli: 32000, MemMiB: 65536, GPUs: 2, Model: "T4"},
		{Name: "n1", CPUMilli: 32000, MemMiB: 65536, GPUs: 2, Model: "V100"},
	}
	pods := []Pod{
		{Name: "whole", CPUMilli: 1000, MemMiB: 1024, GPUs: 1, GPUMilli: 1000},
		{Name: "share", CPUMilli: 1000, MemMiB: 1024, GPUs: 1, GPUMilli: 500},
		{Name: "cpu", CPUMilli: 1000, MemMiB: 1024},
		{Name: "huge", CPUMilli: 64000, MemMiB: 1024, GPUs: 1, GPUMilli: 1000}, // fits no node
	}
	return nodes, pods
}

// TestArrivals: the trace's pods that fit, more drawn while their GPU
// requests fall short, shuffled and cut where they reach the target; one
// arrival an interval, all running until after the last; the same seed
// gives the same list, another seed another order.
func TestArrivals(t *testing.T) {
	nodes, pods := arrivalCluster()
	opts := ArrivalOptions{Percent: 130, Seed: 42, Interval: 2}
	a, err := Arrivals(nodes, pods, opts)
	if err != nil {
		t.Fatal(err)
	}
	var requested int64
	names := map[string]bool{}
	for i, x := range a {
		if names[x.Pod.Name] {
			t.Errorf("pod %s twice", x.Pod.Name)
		}
		names[x.Pod.Name] = true
		if strings.HasPrefix(x.Pod.Name, "huge") {
			t.Errorf("pod %s fits no node, yet arrives", x.Pod.Name)
		}
		if x.ArrivedAt != float64(2*i) || x.Pod.Created != x.ArrivedAt || *x.Pod.Scheduled != x.ArrivedAt || *x.Pod.Deleted != float64(2*len(a)) {
			t.Errorf("arrival %d (%s): at %g, created %g, scheduled %g, deleted %g", i, x.Pod.Name, x.ArrivedAt, x.Pod.Created, *x.Pod.Scheduled, *x.Pod.Deleted)
		}
		requested += x.GPUMilli
	}
	capacity := GPUCapacity(nodes)
	if target := 1.3 * float64(capacity); float64(requested) < target || float64(requested-a[len(a)-1].GPUMilli) >= target {
		t.Errorf("requests %d milli of %d: want the first prefix reaching 130 %%", requested, capacity)
	}
	b, _ := Arrivals(nodes, pods, opts)
	if !slices.EqualFunc(a, b, func(x, y Arrival) bool { return x.Pod.Name == y.Pod.Name }) {
		t.Error("the same seed gave two lists")
	}
	opts.Seed = 7
	c, _ := Arrivals(nodes, pods, opts)
	if slices.EqualFunc(a, c, func(x, y Arrival) bool { return x.Pod.Name == y.Pod.Name }) {
		t.Error("seeds 42 and 7 gave the same list")
	}
	if _, err := Arrivals(nodes[:0], pods, opts); err == nil {
		t.Error("no error on a cluster without GPUs")
	}
}

// TestAllocationCurve: at each step of arrived requests, the share of the
// GPUs the pods started by then hold, from the devices column; a pod
// still pending holds nothing.
func TestAllocationCurve(t *testing.T) {
	dir := t.TempDir()
	arrivals := "pod,arrived_at,gpu_milli,capacity_milli\n" +
		"a,0,1000,4000\n" + // 25 %
		"b,1,500,4000\n" + // 37.5 %
		"c,2,1000,4000\n" + // 62.5 %: waits
		"d,3,2000,4000\n" // 112.5 %
	pods := "job_id,started,devices\n" +
		"w!a,0,n0/gpu-0:milli=1k\n" +
		"w!b,1,n0/gpu-1:milli=500\n" +
		"w!c,,\n" +
		"w!d,3,n1/gpu-0;n1/gpu-1\n"
	for name, data := range map[string]string{"arrivals.csv": arrivals, "_pods.csv": pods} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	curve, err := AllocationCurve(filepath.Join(dir, "arrivals.csv"), dir, 25)
	if err != nil {
		t.Fatal(err)
	}
	want := []AllocationPoint{{0, 25, 1}, {25, 25, 1}, {50, 37.5, 3}, {75, 87.5, 4}, {100, 87.5, 4}}
	if !slices.Equal(curve, want) {
		t.Errorf("curve %v, want %v", curve, want)
	}
}
