// Package e2e runs Batkube with unmodified upstream binaries (kube-scheduler
// 1.37 and 1.18, kubectl 1.37, kube-controller-manager 1.37, Kueue's
// manager and the QoS-driven kube-scheduler), built by `make upstream` into
// bin/, or found in $BATKUBE_BIN. The tests fail, rather than skip, when an
// upstream binary is missing: `make test` builds them first. The slowest
// scenarios are named in the Makefile's SLOW_E2E, which make test skips
// and make test-slow runs, in two groups side by side (SLOW_E2E_1 and
// SLOW_E2E_2; TestSlowScenariosAreTests checks each name is a test of this
// package, in one group only); both run their scenarios under the race
// detector.
//
// # What runs how
//
// Most tests, and the simulation benchmarks, run whole simulations as
// batkube-run does (launch.Run, through newSimulation): separate processes
// over real ZeroMQ and HTTP, kubernetes-server, batkube-engine and the
// example schedulers built from this checkout for the tests (with the race
// detector when the tests have it, but for a few whose point is volume),
// beside the upstream binaries, with a client-go watch of the cluster in
// the test's process.
//
// The README's, the campaigns' and the report's tests run the batkube-run,
// batkube-swf, batkube-campaign and batkube-report commands themselves,
// built from this checkout; the start-up and memory benchmarks start a
// kubernetes-server process.
//
// The kubectl, kube-scheduler binding and metrics authorisation tests, the
// server-side dry run of a campaign's Job and the kube-scheduler throughput
// benchmark need no simulation: they run the upstream binaries against an
// in-process Batkube API server (servertest). The memory benchmark
// measures an in-process server (server.New) too, beside its process.
//
// # Files
//
// Tests, by subject:
//
//	simulation_test.go            a simulation's basics: every job, walltime, deleted pods, multi-host jobs, two workloads, kubectl's pods, a killed scheduler, pod templates, a time-virtualised scheduler
//	settle_test.go                exact settling with kube-scheduler 1.37 and 1.18, identical outputs, overcommit refused, 100,000 jobs at one instant
//	scheduler_test.go             kube-scheduler 1.37 and 1.18 bind every pod (in-process server)
//	kubectl_test.go               kubectl against the in-process server
//	kubectl_crd_test.go           kubectl and custom resources
//	metrics_auth_test.go          kube-scheduler's /metrics authorised by Batkube's reviews (in-process server)
//	batsim_inputs_test.go         Batsim's inputs and semantics, its network, through the stack
//	batsim_edge_cases_test.go     Batsim's edge cases through the stack
//	controllers_test.go           kube-controller-manager in simulated time, objects from the workload, Job pods lost with their machine
//	devices_test.go               devices (resource claims) allocated exactly
//	machine_failures_test.go      machine failures as lost nodes
//	families_*_test.go            one per scheduler family of examples/schedulers: binpack, extender, gang, preemption, qos, random, shell
//	gangs_mixed_test.go           mixed gangs settle exactly
//	kueue_test.go                 Kueue admits within quotas, strict FIFO from the Jobs' creation
//	kueue_baseline_test.go        Kueue's baseline scenario, cut down
//	karpenter_test.go             Karpenter launches nodes for pending pods onto pool hosts
//	openb_test.go                 the Alibaba trace's sample replayed through DRA; BenchmarkOpenB's inputs read
//	openb_arrivals_test.go        the FGD paper's arrival experiment ends at its last arrival
//	gpupolicies_test.go           the paper's six GPU policies in kube-scheduler on the sample
//	pods_csv_test.go              _pods.csv agrees with _jobs.csv and the clients
//	prometheus_metrics_test.go    metrics saved with a run and scraped during one
//	campaign_test.go              batkube-campaign: completes, resumes, reports, shards; its Job accepted by the API server
//	report_test.go                batkube-report's page checked in Chromium
//	readme_test.go                the README's commands
//	slow_scenarios_test.go        the Makefile's SLOW_E2E names tests of this package
//
// Benchmarks, in files *_bench_test.go that hold only benchmarks and their
// own helpers:
//
//	simulation_bench_test.go      BenchmarkSimulationTrace10h, Memory, Contended, MixedGangs
//	controllers_bench_test.go     BenchmarkSimulationJobs, BenchmarkSimulationKueue
//	kueue_baseline_bench_test.go  BenchmarkSimulationKueueBaseline
//	karpenter_bench_test.go       BenchmarkSimulationKarpenterDay (a day of load with Karpenter)
//	scale_bench_test.go           BenchmarkScale (5,000 and 10,000 nodes; contended)
//	throughput_bench_test.go      BenchmarkKubeSchedulerThroughput
//	memory_bench_test.go          BenchmarkServerMemoryPerPod
//	startup_bench_test.go         BenchmarkServerStartup
//	openb_bench_test.go           BenchmarkOpenB (the Alibaba trace at full size; make bench-openb)
//
// Helpers, shared by tests and benchmarks:
//
//	helpers_test.go               the in-process cluster (startCluster), contexts, logged commands, files, a minimal scheduler config
//	build_helpers_test.go         repoRoot, the upstream binaries (binary), this checkout's commands built once (buildCommands), TestMain
//	simulation_helpers_test.go    a simulation (newSimulation, run, jobs), its client-go observer, overcommit and node usage checks
//	exactness_helpers_test.go     contended workloads, checkExact, machine conditions (runUnder, cpuHog)
//	firstfit_helpers_test.go      firstFit, the client-go first-fit stand-in for kube-scheduler
//	kueue_baseline_helpers_test.go the baseline manifest cut down, times to admission by class
//	race_on_test.go, race_off_test.go  raceEnabled
package e2e
