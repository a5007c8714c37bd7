package openb

import (
	"bytes"
	"strings"
	"testing"
)

// TestTargetWorkload: the pods that fit a node, by type, most popular
// first, cut at the coverage, popularities over the types kept.
func TestTargetWorkload(t *testing.T) {
	nodes := []Node{{Name: "n0", CPUMilli: 32000, MemMiB: 65536, GPUs: 2, Model: "T4"}}
	var pods []Pod
	add := func(n int, p Pod) {
		for range n {
			pods = append(pods, p)
		}
	}
	add(5, Pod{CPUMilli: 4000, GPUs: 1, GPUMilli: 460})
	add(3, Pod{CPUMilli: 8000, GPUs: 2, GPUMilli: 1000})
	add(1, Pod{CPUMilli: 2000, GPUs: 1, GPUMilli: 1000, GPUModels: []string{"T4", "V100M16"}})
	add(1, Pod{CPUMilli: 1000})
	add(4, Pod{CPUMilli: 64000})                        // fits no node
	add(2, Pod{CPUMilli: 1000, GPUs: 2, GPUMilli: 500}) // a share of two GPUs: not expressed
	types, err := TargetWorkload(nodes, pods, 100, false)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTargetWorkload(&b, types); err != nil {
		t.Fatal(err)
	}
	// 10 pods; the two types of one pod each tie: the larger cpu first.
	want := "cpu_milli,num_gpu,gpu_milli,gpu_spec,pods,popularity\n" +
		"4000,1,460,,5,0.5\n8000,2,1000,,3,0.3\n2000,1,1000,T4|V100M16,1,0.1\n1000,0,0,,1,0.1\n"
	if b.String() != want {
		t.Errorf("target workload:\n%s\nwant:\n%s", b.String(), want)
	}
	// 80 %: the first two types cover 8 of 10 pods.
	types, err = TargetWorkload(nodes, pods, 80, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(types) != 2 || types[0].Popularity != 5.0/8 || types[1].Popularity != 3.0/8 {
		t.Errorf("at 80 %%: %+v", types)
	}
	// without sharing, the share is a whole GPU.
	types, _ = TargetWorkload(nodes, pods, 50, true)
	if len(types) != 1 || types[0].GPU.milliEach() != 1000 || types[0].GPU.Count != 1 {
		t.Errorf("exclusive, at 50 %%: %+v", types)
	}
	for _, bad := range []float64{0, -1, 101} {
		if _, err := TargetWorkload(nodes, pods, bad, false); err == nil || !strings.Contains(err.Error(), "coverage") {
			t.Errorf("coverage %g: %v", bad, err)
		}
	}
	if _, err := TargetWorkload(nodes, []Pod{{CPUMilli: 64000}}, 95, false); err == nil {
		t.Error("no pod fits: no error")
	}
}
