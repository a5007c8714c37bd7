// Package translate maps Batsim's world onto Kubernetes objects and back:
// hosts to Nodes, jobs to Pods, bindings to allocations. It holds pure
// functions only: no sockets, no clocks, no store.
//
// # Conventions (hosts)
//
// A compute host becomes a Node named after the host. Its capacity comes from
// the host's properties: "cpu" or "core" (cores, may be fractional),
// "memory" (a quantity such as "16Gi"), "pods" (default 110), and every
// property whose key is a qualified resource name with a "/" (for example
// "nvidia.com/gpu" = "2") as an extended resource. A property
// "label:<key>" = "<value>" becomes a node label, and "taint:<key>" =
// "<value>:<Effect>" (or ":<Effect>") a taint. Zone properties become labels
// "batkube.io/zone-<key>". The Batsim resource id is kept in the label and
// annotation ResourceIDKey so bindings map back.
//
// # Conventions (jobs)
//
// A job "workload!id" becomes a Pod whose name is the DNS-1123 form of
// "workload-id" (a short hash is appended when the id had to be changed). Its
// requests come from the profile's "cpu" (cores) and "memory" fields, as in
// the 2020 Batkube prototype's workloads; "scheduler" sets the schedulerName.
// A "pod_template" field, in the job or in its profile (the job's wins), may
// hold a whole or partial Pod (metadata and spec) that is used as the base.
// A walltime becomes activeDeadlineSeconds. A job asking for res > 1 hosts
// becomes res pods that share the JobLabel and start together. With
// PodOptions.Gangs set to GangsPodGroup they also reference a
// scheduling.k8s.io/v1beta1 PodGroup named after the job (PodGroup) whose
// gang policy asks for all res pods at once, as kube-scheduler 1.37 with the
// GenericWorkload feature gate understands it.
package translate
