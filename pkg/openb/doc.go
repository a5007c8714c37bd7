// Package openb converts the Alibaba GPU-sharing trace of the paper
// "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
// Fragmentation Gradient Descent" (USENIX ATC '23; the openb_* CSV files
// of alibaba/clusterdata, cluster-trace-gpu-v2023) into what a Batkube
// run takes: a SimGrid platform of its nodes, a Batsim workload of its
// pods, and the Kubernetes objects those pods name (ResourceClaimTemplates
// for their GPUs, PriorityClasses for their quality of service).
//
// It reads the lists by column name (ReadNodes, ReadPods: any column
// order, extra columns ignored, a clear error naming the line of a
// malformed one) and knows nothing of the broker: the GPUs become devices
// through the host properties of package translate (gpu, gpu_model,
// gpu_shared) and the claims through DRA (resource.k8s.io/v1), which
// kube-scheduler allocates. It has no global mutable state.
//
// # Nodes (WritePlatform)
//
// One host a node, named after its sn, after a master host
// (MasterHost). core is cpu_milli as a Kubernetes quantity, exact: whole
// cores as an integer, otherwise in thousandths ("32500m"), so no
// fraction is rounded away; memory is memory_mib in Mi; a node with GPUs
// has gpu (the count), gpu_model (the model column, when set) and
// gpu_shared="true", which publishes its GPUs as shareable devices with a
// consumable capacity of 1000 milli each (PlatformOptions.ExclusiveGPUs
// leaves the property out: the cluster without sharing).
//
// # Pods (Convert)
//
// One pod is one Batsim job of res 1 named after the pod, with a delay
// profile:
//
//   - Submission: creation_time, shifted so that the first kept pod
//     submits at 0 (Options.KeepAbsoluteTimes keeps the trace's times).
//     Jobs are sorted by creation time, then name.
//   - Run time: deletion_time - scheduled_time, the time the pod held its
//     node in the trace, whatever its phase (Running, Succeeded, Failed:
//     all of them ran). The trace's pods still running at its end carry
//     the end of the observation as deletion_time.
//   - Pods the trace never scheduled (no scheduled_time, phase Pending)
//     are dropped by default (PendingDrop): the trace gives no run time
//     for them. PendingKeep replays them for the time they existed,
//     deletion_time - creation_time. A pod without deletion_time, or whose
//     deletion is not after its start, is dropped.
//   - Requests: cpu_milli as cores (a decimal number, exact: 3152 is
//     3.152) and memory_mib in Mi; a zero request is left out.
//   - GPUs: a ResourceClaimTemplate per distinct (num_gpu, gpu_milli,
//     gpu_spec), named after it (gpu-2, gpu-460m, gpu-1-v100m16-v100m32),
//     named by the pod's pod_template (a claim "gpu" used by its
//     container). num_gpu whole GPUs (gpu_milli 1000) are a request of
//     exactly num_gpu devices of the DeviceClass gpu.batkube.io, stating
//     no capacity, so each consumes the whole of its device; a share
//     (num_gpu 1, gpu_milli below 1000) is a request of one device with
//     capacity {requests: {milli: gpu_milli}}, which only shared GPUs
//     have. gpu_spec ("V100M16|V100M32") becomes the CEL selector
//     device.attributes["gpu.batkube.io"].model in ["V100M16", "V100M32"].
//     Options.ExclusiveGPUs turns shares into whole GPUs.
//   - Quality of service: qos maps onto a PriorityClass (QoSClass: LS
//     4000, Guaranteed 3000, Burstable 2000, BE 1000, none of them
//     preempting), written with the claim templates; Options.NoPriority
//     leaves priorities out.
//
// What cannot be expressed is dropped, each counted in the Report under
// its Reason: num_gpu and gpu_milli that disagree (one of them 0, or
// gpu_milli above 1000), a share of several GPUs (num_gpu > 1 with
// gpu_milli < 1000: one DRA request consumes the same capacity of each of
// its devices, but the trace does not say the share is per GPU), and a pod
// bigger than every node (cpu, memory, enough GPUs of an accepted model,
// shared ones for a share), which would wait for ever. Then the window
// (Options.From, Options.To, on creation times) and Options.MaxPods cut a
// sample, in creation order.
package openb
