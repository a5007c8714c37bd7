// Package replay plays the FGD paper's arrival-only experiment with the
// policies of package policy alone, without Kubernetes: pods arrive one
// after the other (arrivals.csv of batkube-openb --arrivals), each placed
// at once on the node its policy scores best (ties drawn at random) or
// never, and the GPUs' allocation is read as arrivals grow. It serves two
// ends:
//
//   - Measure what kube-scheduler cannot do: Run with FirstFitGPUs takes
//     the GPUs of a node as DRA's allocator does (the first with room), as
//     bin/gpu-scheduler does; with PaperGPUs, as the paper's simulator
//     does (each policy's own choice). The difference between the two
//     curves is what the first fit costs each policy.
//   - Check a kube-scheduler run (Check): each pod placed at its arrival
//     went to a node the policy scores best, on the GPUs first fit takes,
//     and each pod that waited had no node with room; RandomScore's draws
//     are replayed exactly.
//
// The cluster is the openb node list (cpu, memory, GPUs of one model);
// the pods, the openb pod list (cpu, memory, GPUs, accepted models), as
// batkube-openb converts them; a pod fits a node when its cpu, its memory
// and its GPUs (of an accepted model, each with room) do.
package replay
