// Package policy holds the six GPU placement policies compared by the FGD
// paper ("Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
// Fragmentation Gradient Descent", Weng et al., USENIX ATC '23, §6.1),
// as plain functions of what a node has left and what a pod asks for:
// no Kubernetes type, so that each is tested on hand-computed cases and
// replayed outside kube-scheduler (package replay).
//
// A Node is its cpu (capacity and what is left, in thousandths of a core),
// its GPU model and the thousandths left of each of its GPUs, in the order
// in which the DRA allocator visits them (the devices of its
// ResourceSlice). A Demand is a pod's cpu and its GPUs: a number of whole
// GPUs (Milli = MilliPerGPU each) or a share of one (Milli below it).
//
// The node scores, each an integer from 0 to MaxScore as a kube-scheduler
// Score plugin returns, higher preferred:
//
//   - Random: one feasible node, drawn uniformly, gets MaxScore, the others
//     0 (no function here: the plugin draws).
//   - DotProduct (Tetris): the node whose free resources are least
//     aligned with the demand: MaxScore·(1 − (free·demand)/2), the vectors
//     being (cpu, GPU thousandths), each divided by the largest node's
//     (Scale).
//   - Clustering: nodes already running pods of the same kind (a share,
//     or k whole GPUs) first, then idle nodes, then nodes running other
//     kinds; within a band, the fewer GPU thousandths left the better.
//   - Packing: a share that fits into a GPU already in use first, then
//     whole GPUs of a node already in use, then idle nodes.
//   - BestFit: the node with the least free cpu and GPU after the
//     placement (equal weights, each over Scale), normalised over the
//     feasible nodes (NormalizeMinMax).
//   - FGD: the placement that increases the node's GPU fragmentation the
//     least (Fragmentation, measured against a target workload of pod
//     types and their popularity): MaxScore·sigmoid((before − after)/1000).
//
// Where the paper's policies also choose the GPU(s) of the chosen node (a
// GPUChoice: best fit for most, random for Random, the least fragmenting
// for FGD), kube-scheduler does not: its DynamicResources plugin allocates
// a claim to the first devices with room, in the ResourceSlice's order
// (FirstFit). The scores that depend on the GPUs used (Packing, FGD) are
// therefore computed for the GPUs a given GPUChoice takes; the plugins
// pass FirstFit, what the allocator will do.
package policy
