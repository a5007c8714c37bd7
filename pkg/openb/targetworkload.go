package openb

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// FGD, the last of the FGD paper's policies, measures a node's GPU
// fragmentation against a target workload: the kinds of pod expected to
// arrive and their popularity. The paper's simulator takes it from the
// trace it replays ("typical pods"): the pods counted by their demand
// (cpu, number of GPUs, thousandths of each, accepted models; memory
// plays no part), the most popular kinds kept until they account for 95 %
// of the pods, their popularities scaled to sum to one. TargetWorkload
// does the same with the pods that fit some node (those --arrivals draws
// from), whatever their times; the kube-scheduler plugin FGDScore reads
// the file WriteTargetWorkload writes.

// TargetWorkloadFile is where the converter writes the target workload.
const TargetWorkloadFile = "target-workload.csv"

// DefaultTargetCoverage is the paper's: the most popular pod types until
// they account for 95 % of the pods.
const DefaultTargetCoverage = 95

// PodType is a kind of pod of the target workload.
type PodType struct {
	CPUMilli int64
	GPU      GPURequest
	// Pods is the number of the trace's pods of the type; Popularity its
	// share among the types kept.
	Pods       int
	Popularity float64
}

// TargetWorkload returns the target workload of the pods: their types by
// decreasing number of pods (ties by decreasing cpu, GPU thousandths,
// number of GPUs, then models), cut once the types kept account for
// coverage % of the pods (0 < coverage <= 100). exclusive counts a share
// as a whole GPU (the cluster without sharing).
func TargetWorkload(nodes []Node, pods []Pod, coverage float64, exclusive bool) ([]PodType, error) {
	if !(coverage > 0 && coverage <= 100) {
		return nil, fmt.Errorf("openb: target workload: coverage %g %%: want above 0, at most 100", coverage)
	}
	byKey := map[string]*PodType{}
	total := 0
	for _, p := range pods {
		gpu, reason := gpuRequest(p, exclusive)
		if reason != reasonNone || !fitsSomeNode(p, gpu, nodes, !exclusive) {
			continue
		}
		key := strconv.FormatInt(p.CPUMilli, 10) + "/" + gpu.key()
		if byKey[key] == nil {
			byKey[key] = &PodType{CPUMilli: p.CPUMilli, GPU: gpu}
		}
		byKey[key].Pods++
		total++
	}
	if total == 0 {
		return nil, errors.New("openb: target workload: no pod fits a node")
	}
	types := make([]PodType, 0, len(byKey))
	for _, t := range byKey {
		types = append(types, *t)
	}
	slices.SortFunc(types, func(a, b PodType) int {
		return cmp.Or(cmp.Compare(b.Pods, a.Pods), cmp.Compare(b.CPUMilli, a.CPUMilli), cmp.Compare(b.GPU.milliEach(), a.GPU.milliEach()),
			cmp.Compare(b.GPU.Count, a.GPU.Count), strings.Compare(strings.Join(b.GPU.Models, "|"), strings.Join(a.GPU.Models, "|")))
	})
	kept := 0
	for i, t := range types {
		if float64(kept) >= coverage/100*float64(total) {
			types = types[:i]
			break
		}
		kept += t.Pods
	}
	for i := range types {
		types[i].Popularity = float64(types[i].Pods) / float64(kept)
	}
	return types, nil
}

// milliEach is the thousandths of each GPU: 1000 for whole GPUs, 0
// without GPU.
func (r GPURequest) milliEach() int64 {
	switch {
	case r.Count == 0:
		return 0
	case r.Milli > 0:
		return r.Milli
	default:
		return 1000
	}
}

// WriteTargetWorkload writes the target workload as CSV: cpu_milli,
// num_gpu, gpu_milli (of each GPU: 1000 for whole GPUs, 0 without GPU),
// gpu_spec (the accepted models joined by '|'), pods and popularity, a
// type a line.
func WriteTargetWorkload(w io.Writer, types []PodType) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"cpu_milli", "num_gpu", "gpu_milli", "gpu_spec", "pods", "popularity"})
	for _, t := range types {
		_ = cw.Write([]string{strconv.FormatInt(t.CPUMilli, 10), strconv.Itoa(t.GPU.Count), strconv.FormatInt(t.GPU.milliEach(), 10),
			strings.Join(t.GPU.Models, "|"), strconv.Itoa(t.Pods), strconv.FormatFloat(t.Popularity, 'g', -1, 64)})
	}
	cw.Flush()
	return cw.Error()
}
