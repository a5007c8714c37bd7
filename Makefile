# Batkube — common tasks. `make help` lists them.
SHELL := /bin/bash
.SECONDEXPANSION:
GO    ?= go
BIN   := $(CURDIR)/bin
# Packages of the main module without the generated router (vet on ~550k
# generated lines takes minutes and finds nothing that regenerating would not).
PKGS  := . ./cmd/... ./pkg/... ./docs ./examples/timed-scheduler ./examples/schedulers/... ./examples/internal/...
# A count, not a duration: with a duration, go1.26's fuzz coordinator can
# report its own deadline as a failure (golang/go#75804, fixed in go1.27).
FUZZTIME ?= 20000x

.PHONY: help check-zmq build run run-batsim compare compare-kueue check test test-e2e-quick test-slow test-slow-1 test-slow-2 fuzz-short test-unit vet fuzz bench figures bench-scale bench-million bench-contended bench-openb pictures generate check-generated serve clean

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | sort

# Batkube's own commands.
COMMANDS := kubernetes-server batkube-engine batkube-run batkube-report batkube-campaign batkube-swf batkube-openb
GO_SOURCES := $(shell find cmd pkg restapi -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod go.sum
# The packages the example commands share (examples/internal/...).
EXAMPLE_SHARED := $(shell find examples/internal -name '*.go' -not -name '*_test.go' 2>/dev/null)

# The example schedulers of the main module: one Go command per folder of
# examples/schedulers (those with their own go.mod are built by upstream.mk).
EXAMPLE_SCHEDULERS := $(sort $(filter-out $(patsubst examples/schedulers/%/go.mod,%,$(wildcard examples/schedulers/*/go.mod)),\
  $(patsubst examples/schedulers/%/main.go,%,$(wildcard examples/schedulers/*/main.go))))

build: $(addprefix $(BIN)/,$(COMMANDS)) $(BIN)/timed-scheduler $(addprefix $(BIN)/,$(EXAMPLE_SCHEDULERS)) ## build kubernetes-server, batkube-engine, batkube-run and the example schedulers (timed-scheduler, examples/schedulers/*) into bin/

$(addprefix $(BIN)/,$(COMMANDS)): $(BIN)/%: $(GO_SOURCES) | check-zmq
	$(GO) build -o $@ ./cmd/$*

# The server and the engine link ZeroMQ (cgo): say what to install before
# a build fails in pkg-config.
check-zmq:
	@command -v pkg-config >/dev/null && pkg-config --exists libzmq || { \
	  echo "Batkube needs ZeroMQ's C library and pkg-config to build: apt-get install -y libzmq3-dev pkg-config (Debian/Ubuntu), dnf install zeromq-devel pkgconf (Fedora), brew install zeromq pkg-config (macOS)" >&2; exit 1; }

$(BIN)/timed-scheduler: examples/timed-scheduler/main.go $(GO_SOURCES) $(EXAMPLE_SHARED)
	$(GO) build -o $@ ./examples/timed-scheduler

$(addprefix $(BIN)/,$(EXAMPLE_SCHEDULERS)): $(BIN)/%: $(GO_SOURCES) $(EXAMPLE_SHARED) $$(wildcard examples/schedulers/%/*.go)
	$(GO) build -o $@ ./examples/schedulers/$*

# The example of `make run`; override on the command line, e.g.
# make run PLATFORM=examples/platforms/platform_4.xml WORKLOADS="examples/workloads/delay_10.json examples/workloads/parallel.json"
PLATFORM  ?= examples/platforms/platform_16.xml
WORKLOADS ?= examples/workloads/delay_30.json
OUT       ?= out/run
RUN_FLAGS ?=
RUN_ARGS   = -p $(PLATFORM) $(addprefix -w ,$(WORKLOADS)) -o $(OUT) $(RUN_FLAGS)

run: build $(BIN)/kube-scheduler ## a whole simulation: embedded engine + Batkube + kube-scheduler 1.37 (PLATFORM=, WORKLOADS=, OUT=, RUN_FLAGS=)
	$(BIN)/batkube-run --batsim embedded $(RUN_ARGS)

run-batsim: build $(BIN)/kube-scheduler ## the same with a real batsim 4.x from PATH (BATSIM=path to override)
	$(BIN)/batkube-run --batsim $(or $(BATSIM),batsim) $(RUN_ARGS)

# The scheduler families side by side on one contended workload: a campaign
# (COMPARE= another campaign file; COMPARE_FLAGS=--rerun to run finished
# runs again, -j 2 to run two at once).
COMPARE       ?= examples/schedulers/compare.yaml
COMPARE_FLAGS ?=
compare: build upstream ## run the scheduler families of examples/schedulers/compare.yaml on one contended workload (a campaign) and print the table that compares them (out/compare, with report.html), then Kueue's settings (compare-kueue)
	$(BIN)/batkube-campaign -o out/compare $(COMPARE_FLAGS) $(COMPARE)
	$(BIN)/batkube-campaign -o out/compare-kueue $(COMPARE_FLAGS) examples/kueue/compare.yaml

compare-kueue: build upstream ## run Kueue's settings side by side (examples/kueue/compare.yaml: no Kueue, BestEffortFIFO, StrictFIFO, fair sharing) on one contended workload of two tenants' Jobs and print the table (out/compare-kueue, with report.html)
	$(BIN)/batkube-campaign -o out/compare-kueue $(COMPARE_FLAGS) examples/kueue/compare.yaml

-include examples/upstream.mk

# The end-to-end scenarios that take longest: make test leaves them out
# for a quick loop, make check (CI) runs them. Four have a quicker sibling
# in make test: TestBatsimInputsWithBatsimSemantics
# (TestBatsimNetworkThroughTheStack), TestDeterministicSchedulerGivesIdenticalOutputs
# (TestRandomSchedulerPlacementsFollowItsSeed), TestGPUPoliciesPlaceTheOpenBSampleArrivals
# (TestOpenBSampleReplayedThroughDRA) and TestCampaignCompletesResumesAndReports
# (TestCampaignShardsLikeAnIndexedJob). make test-slow runs the two groups
# side by side: the scenarios wait on their processes about half of the
# time (507 s one after the other, 0.95 of a core busy on average; 336 s in
# these two groups, 2026-11-30), and the groups are balanced by the tests'
# times. pkg/e2e's TestSlowScenariosAreTests checks that every name is one
# of its tests, in one group only.
SLOW_E2E_1 := TestHundredThousandJobsAtOneInstant|TestQoSDrivenExampleMeetsEverySLO|TestMixedGangsSettleExactly|TestCampaignCompletesResumesAndReports|TestBatsimEdgeCasesThroughTheStack
SLOW_E2E_2 := TestKubeScheduler118SettlesExactly|TestKueueBaselineScenario|TestKubeSchedulerSettlesExactly|TestKueueAdmitsWithinQuotas|TestReportInChromium|TestGPUPoliciesPlaceTheOpenBSampleArrivals|TestReadmeCommands|TestKueueStrictFIFOFromTheJobsCreation|TestDeterministicSchedulerGivesIdenticalOutputs|TestBatsimInputsWithBatsimSemantics
SLOW_E2E := $(SLOW_E2E_1)|$(SLOW_E2E_2)

check: test test-slow fuzz-short ## everything CI runs (.ci/run runs these three): make test, the slow end-to-end scenarios, every fuzz target for 5,000 inputs

fuzz-short: ## every fuzz target for 5,000 inputs (a count, not a duration)
	$(MAKE) fuzz FUZZTIME=5000x

test: build upstream vet ## the quick loop: vet, then every package's tests under the race detector (the end-to-end scenarios but the slow ones, make test-slow runs those), the Kueue, Karpenter, QoS and GPU policies modules' tests
	$(MAKE) --no-print-directory -j 2 --output-sync=target test-unit test-e2e-quick test-kueue test-karpenter test-qos test-gpupolicies

# make test's parts run two at a time: test-unit and test-e2e-quick first,
# side by side (the end-to-end scenarios wait on their processes much of
# the time), then the modules' tests as a slot frees (in CI, test-unit's
# ended 78 s before the end-to-end half, 2026-11-30). Each
# scenario runs once in CI (make check), under the race detector: the
# quick ones in make test, the slow ones in make test-slow.
test-e2e-quick: ## the end-to-end scenarios but the slow ones (SLOW_E2E), under the race detector
	BATKUBE_BIN=$(BIN) $(GO) test -race -count=1 -timeout 30m -skip '^($(SLOW_E2E))$$' ./pkg/e2e

test-slow: build upstream ## the slow end-to-end scenarios (SLOW_E2E) make test leaves out, under the race detector, in two groups side by side
	$(MAKE) --no-print-directory -j 2 --output-sync=target test-slow-1 test-slow-2

# make test-slow's two groups (SLOW_E2E_1, SLOW_E2E_2).
test-slow-1 test-slow-2: test-slow-%:
	BATKUBE_BIN=$(BIN) $(GO) test -race -count=1 -timeout 60m -run '^($(SLOW_E2E_$*))$$' ./pkg/e2e

test-unit: ## the tests that need no upstream binary (every package but pkg/e2e), under the race detector
	$(GO) test -race -count=1 -timeout 30m $$($(GO) list ./... | grep -v '/pkg/e2e$$')

vet: ## go vet and gofmt on the hand-written code (the modules built against upstream trees, examples/kueue, examples/karpenter and examples/schedulers/{qos,gpupolicies}, are vetted by make test-kueue, test-karpenter, test-qos and test-gpupolicies)
	$(GO) vet $(PKGS)
	@unformatted=$$(gofmt -l swagger.go cmd pkg docs examples/timed-scheduler examples/schedulers examples/internal examples/kueue examples/karpenter restapi/configure_kubernetes.go); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

fuzz: ## run every fuzz target for FUZZTIME each
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/func //'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg; \
	  done; \
	done

# make bench's output, from which it rewrites the table of docs/figures.md.
BENCH_OUT ?= out/bench.txt
bench: upstream ## the figures: the server's start-up, simulation speed and CPU per job beside kube-scheduler's (10-hour trace; contended; Jobs; Kueue; a day of Karpenter), memory (100,000 sequential jobs; 100,000 live pods), kube-scheduler binding throughput and the server's share of CPU, then the micro-benchmarks; the output in out/bench.txt, its table in docs/figures.md (about 16 min here before the day of Karpenter, which adds some 6)
	@mkdir -p $(dir $(BENCH_OUT)) && : > $(BENCH_OUT)
	set -o pipefail; $(GO) test -run='^$$' -bench='ServerStartup' -benchtime=20x -timeout=10m ./pkg/e2e | tee -a $(BENCH_OUT)
	set -o pipefail; $(GO) test -run='^$$' -bench='Simulation|KubeSchedulerThroughput|ServerMemoryPerPod' -benchtime=1x -timeout=60m ./pkg/e2e | tee -a $(BENCH_OUT)
	set -o pipefail; $(GO) test -run='^$$' -bench=. -benchmem $$($(GO) list ./pkg/... | grep -v /pkg/e2e) | tee -a $(BENCH_OUT)
	$(MAKE) figures

figures: ## rewrite the table of docs/figures.md from make bench's output (out/bench.txt)
	$(GO) run ./cmd/benchfigures --in $(BENCH_OUT) --doc docs/figures.md

PICTURES ?= out/pictures
pictures: build upstream ## regenerate the documentation's pictures from real runs: the campaign of examples/campaign/campaign.yaml (docs/campaign-report.png) and the report of three of its runs (docs/report.png), in a headless Chromium (about 6 min)
	$(BIN)/batkube-campaign -q -j 2 -o $(PICTURES) --screenshot docs/campaign-report.png examples/campaign/campaign.yaml
	$(BIN)/batkube-report -o $(PICTURES)/three.html --title 'Three schedulers, one contended workload' --screenshot docs/report.png \
	  $(PICTURES)/kube-scheduler-1.37--platform_16--contended_1500--1 \
	  $(PICTURES)/kube-scheduler-1.37-bin-packing--platform_16--contended_1500--1 \
	  $(PICTURES)/fifo-first-fit-client-go--platform_16--contended_1500--1

bench-scale: upstream ## the scale benchmark: 100,000 jobs on 5,000 nodes with kube-scheduler 1.37 (wall time, CPU and peak RSS of each process, every start checked; long)
	$(GO) test -run='^$$' -bench='Scale/5000-nodes' -benchtime=1x -timeout=180m ./pkg/e2e

bench-million: upstream ## 1,000,000 jobs on 10,000 nodes with kube-scheduler 1.37 (as bench-scale; hours)
	$(GO) test -run='^$$' -bench='Scale/10000-nodes' -benchtime=1x -timeout=360m ./pkg/e2e

bench-contended: upstream ## 100,000 jobs on 1,000 nodes asking 96 % of their cores in spikes, every start checked job by job (as bench-scale; long)
	$(GO) test -run='^$$' -bench='Scale/1000-nodes' -benchtime=1x -timeout=360m ./pkg/e2e

bench-openb: upstream ## the Alibaba GPU trace at full size: its 149-day replay, then the FGD paper's arrival-only experiment under each of its six policies (allocation at 100 and 130 % beside the paper's, wall time, CPU of each process, every step exact; some 2 hours here; ../shared/data/openb)
	$(GO) test -run='^$$' -bench='OpenB' -benchtime=1x -timeout=300m ./pkg/e2e

generate: ## regenerate swagger.json and the generated server
	./regenerate-api.sh

check-generated: ## regenerate and fail if the committed generated code differs
	./regenerate-api.sh
	git diff --exit-code --stat -- swagger.json restapi models pkg/openapi/v3
	@test -z "$$(git status --porcelain -- swagger.json restapi models pkg/openapi/v3)" || { git status --porcelain -- restapi models | head; echo "regenerate-api.sh left untracked files"; exit 1; }

serve: build ## run the API server on 127.0.0.1:8001
	$(BIN)/kubernetes-server --port 8001

clean: ## remove built binaries
	rm -rf $(BIN)
