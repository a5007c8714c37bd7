// Package gpuscore makes the six GPU placement policies of the FGD paper
// (package policy) kube-scheduler Score plugins: RandomScore,
// DotProductScore, GpuClusteringScore, GpuPackingScore, BestFitScore and
// FGDScore (the names of the paper's simulator). Register them all with
//
//	app.NewSchedulerCommand(gpuscore.Options()...)
//
// and enable one at preScore and score of a profile, the other scoring
// plugins disabled, as the paper compares them (see the configurations
// of examples/schedulers/gpupolicies/config).
//
// # What a policy sees
//
// A pod's demand is its cpu request (as kube-scheduler sums it) and its
// GPUs, read from its ResourceClaims: each request of exactly Count
// devices of the DeviceClass Args.DeviceClass asks for Count whole GPUs,
// or, if it requests an amount of the consumable capacity Args.Capacity
// ("milli", of 1000 a GPU), that share of each. A node's GPUs are the
// devices of driver Args.Driver in its ResourceSlices, in their order,
// each with the thousandths left: its capacity less what allocated claims
// consume (a whole-GPU claim consumes all of it; an exclusive device is
// free or not). Both come from the scheduler's own DRA state
// (fwk.Handle.SharedDRAManager), the one DynamicResources allocates from:
// it includes the claims allocated in earlier scheduling cycles whose
// binding is still in flight or whose update the informer has not
// delivered yet, which the informers' listers would miss (two pods
// scheduled back to back would then both see a GPU as free). The cpu left
// is the node's allocatable less its pods' requests, assumed pods
// included (fwk.NodeInfo).
//
// PreScore reads the pod's demand and the feasible nodes' GPUs once per
// scheduling cycle into the cycle state; Score computes the policy for one
// node (in parallel, from that state only). A policy that has no
// preference for the pod (GpuClustering and GpuPacking for a pod without
// GPU) skips scoring.
//
// # The GPUs within a node
//
// The paper's simulator also picks the GPU(s) of the chosen node (best
// fit; random for Random; the least fragmenting one for FGD). With the
// real kube-scheduler a plugin cannot: DynamicResources allocates a claim
// to the first devices with room, in the ResourceSlice's order
// (policy.FirstFit). Scores that depend on the GPUs used (GpuPacking, FGD)
// are therefore computed for the GPUs the allocator will take, so that a
// node is scored by what will actually happen there. The other scores do
// not depend on the GPUs used; the difference remains in the state the
// next pods find.
package gpuscore
