# Upstream Kubernetes binaries, built unmodified from the Kubernetes Go modules.
# examples/kube-1.37 and examples/kube-1.18 are Go modules of their own, so the
# main module stays lean. Included by the top-level Makefile; needs only Go and
# the module proxy. A cold build of all three takes about 8 min on 2 busy
# cores (see examples/scheduler/README.md); later ones reuse the build cache.
GO  ?= go
BIN ?= $(CURDIR)/bin

# The k8s.io/kubernetes version a module pins, e.g. v1.37.1 (evaluated only
# when a recipe runs).
upstream_version = $(shell $(GO) list -C $(1) -m -f '{{.Version}}' k8s.io/kubernetes)

# $(call upstream_version_ldflags,v1.37.1): stamp the version as upstream's
# hack/lib/version.sh does (--version, the User-Agent header, kubectl's
# version skew check); otherwise the binaries say v0.0.0-master.
upstream_version_ldflags = $(foreach pkg,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
  -X $(pkg).gitVersion=$(1) -X $(pkg).gitMajor=$(word 1,$(subst ., ,$(subst v,,$(1)))) \
  -X $(pkg).gitMinor=$(word 2,$(subst ., ,$(1))) -X $(pkg).gitTreeState=clean)

# Usage: $(call upstream_build,<module dir>) -o <binary> <package>
# No cgo (pure-Go DNS and user lookup are fine here), no paths of this machine
# in the binaries, no symbol table or DWARF (smaller binaries, faster links).
# go build wants -C before any other flag.
upstream_build = CGO_ENABLED=0 $(GO) build -C $(1) -trimpath \
  -ldflags='-s -w $(call upstream_version_ldflags,$(call upstream_version,$(1)))'

# Rebuild when the pinned modules or these build rules change.
KUBE_137_MOD := examples/kube-1.37/go.mod examples/kube-1.37/go.sum examples/upstream.mk
KUBE_118_MOD := examples/kube-1.18/go.mod examples/kube-1.18/go.sum examples/upstream.mk
# The QoS-driven plugin's kube-scheduler: a module of its own that pins the
# versions of examples/kube-1.37, so that it reuses that build's cache.
QOS_MOD := examples/schedulers/qos/go.mod examples/schedulers/qos/go.sum examples/upstream.mk
QOS_SOURCES := $(shell find examples/schedulers/qos -name '*.go' -not -name '*_test.go' 2>/dev/null)
# The FGD paper's six GPU placement policies' kube-scheduler: a module of
# its own too, pinned in the same way.
GPUPOLICIES_MOD := examples/schedulers/gpupolicies/go.mod examples/schedulers/gpupolicies/go.sum examples/upstream.mk
GPUPOLICIES_SOURCES := $(shell find examples/schedulers/gpupolicies -name '*.go' -not -name '*_test.go' 2>/dev/null)

.PHONY: upstream
upstream: $(BIN)/kube-scheduler $(BIN)/kubectl $(BIN)/kube-controller-manager $(BIN)/kube-scheduler-1.18 $(BIN)/qos-scheduler $(BIN)/gpu-scheduler $(BIN)/gpu-policy-replay $(BIN)/kueue $(BIN)/kueue-manifests.yaml $(BIN)/karpenter $(BIN)/karpenter-manifests.yaml ## build kube-scheduler 1.37 and 1.18.19, kubectl 1.37, kube-controller-manager 1.37, kube-scheduler 1.37 with the QoS-driven plugin and with the FGD paper's GPU policies (and their replay without Kubernetes), Kueue's manager and its manifests, Karpenter's KWOK provider and its CRDs into bin/

# kube-controller-manager's clock is Batkube's: k8s.io/utils/clock, the seam
# through which every controller takes its time, is compiled from
# pkg/simtime/kubeclock (simulated time when the process is started with
# BATKUBE_CLOCK, real time otherwise); the controllers' code is upstream's.
# A copy of k8s.io/utils at the pinned version, made from the module cache,
# with clock/clock.go replaced, stands in for the module through a go.mod
# of the build's own (-modfile). The copy lives in .build/ and is never
# committed. kube-controller-manager's build file is the one every
# binary of the tree shares (below).
KUBECLOCK_SOURCES := $(filter-out %_test.go,$(wildcard pkg/simtime/kubeclock/*.go))
KUBE_137_BUILD := $(CURDIR)/.build/kube-1.37

# Every binary of the Kubernetes 1.37 tree (kube-scheduler, kubectl,
# kube-controller-manager, the QoS and GPU schedulers) is built in one configuration:
# against one copy of the pinned k8s.io/utils whose clock package is
# pkg/simtime/kubeclock (see kube-controller-manager below), so that the
# tree is compiled once and its packages shared by all of them. Without
# BATKUBE_CLOCK in its environment (batkube-run sets it for the
# controllers only) a binary's clock is the time package's, as upstream's.
$(BIN)/kube-scheduler: $(KUBE_137_BUILD)/go.mod examples/kube-1.37/kube-scheduler/main.go
	$(call upstream_build,examples/kube-1.37) -modfile=$(KUBE_137_BUILD)/go.mod -o $@ ./kube-scheduler

$(BIN)/kubectl: $(KUBE_137_BUILD)/go.mod examples/kube-1.37/kubectl/main.go
	$(call upstream_build,examples/kube-1.37) -modfile=$(KUBE_137_BUILD)/go.mod -o $@ ./kubectl


# $(call kubeclock_utils,<module dir>,<build dir>): the module's pinned
# k8s.io/utils, copied from the module cache into <build dir>/utils with
# clock/clock.go replaced by pkg/simtime/kubeclock, and <build dir>/go.mod,
# the module's go.mod replacing k8s.io/utils by that copy.
define kubeclock_utils
	rm -rf $(2) && mkdir -p $(2)
	utils=$$($(GO) mod download -C $(1) -json k8s.io/utils | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	  test -n "$$utils" && cp -R "$$utils" $(2)/utils
	chmod -R u+w $(2)/utils
	rm $(2)/utils/clock/clock.go
	cp $(KUBECLOCK_SOURCES) $(2)/utils/clock/
	cp $(1)/go.mod $(1)/go.sum $(2)/
	$(GO) mod edit -modfile=$(2)/go.mod -replace=k8s.io/utils=$(2)/utils
endef

$(KUBE_137_BUILD)/go.mod: $(KUBE_137_MOD) $(KUBECLOCK_SOURCES)
	$(call kubeclock_utils,examples/kube-1.37,$(KUBE_137_BUILD))

$(BIN)/kube-controller-manager: $(KUBE_137_BUILD)/go.mod examples/kube-1.37/kube-controller-manager/main.go
	$(call upstream_build,examples/kube-1.37) -modfile=$(KUBE_137_BUILD)/go.mod -o $@ ./kube-controller-manager

# Kueue's manager (sigs.k8s.io/kueue/cmd/kueue, a tool of examples/kueue),
# on Batkube's clock like kube-controller-manager. Its controllers'
# queues are controller-runtime's priority queue, which reads time.Now and
# time.Tick where the rest of controller-runtime reads k8s.io/utils/clock: the
# build rewrites those two fields of a copy of controller-runtime to the
# clock's Now and After (checked, so that a new version that moves them
# fails the build instead of running on the wall clock). Kueue's code is
# upstream's.
KUEUE_MOD := examples/kueue/go.mod examples/kueue/go.sum examples/upstream.mk
KUEUE_BUILD := $(CURDIR)/.build/kueue
kueue_version = $(shell $(GO) list -C examples/kueue -m -f '{{.Version}}' sigs.k8s.io/kueue)

# Kueue's installation manifests, as its releases publish them: kustomize's
# build of the module's config/default (examples/kueue/manifests).
$(BIN)/kueue-manifests.yaml: $(KUEUE_MOD) examples/kueue/manifests/main.go
	@mkdir -p $(dir $@)
	dir=$$($(GO) mod download -C examples/kueue -json sigs.k8s.io/kueue | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	  test -n "$$dir" && $(GO) run -C examples/kueue ./manifests "$$dir" > $@.tmp
	mv $@.tmp $@

# $(call priorityqueue_clock,<module dir>,<build dir>): a copy of the
# module's pinned controller-runtime in <build dir>/controller-runtime whose
# priority queue takes Now from k8s.io/utils/clock and its timers from
# clock.QueueAfter(name), which classes them by the queue's controller,
# instead of time.Now and time.Tick (the rewrite is checked: a version that
# moves those fields fails the build instead of running on the wall clock), and
# <build dir>/go.mod (written by kubeclock_utils first) replacing
# controller-runtime by that copy.
define priorityqueue_clock
	cr=$$($(GO) mod download -C $(1) -json sigs.k8s.io/controller-runtime | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	  test -n "$$cr" && cp -R "$$cr" $(2)/controller-runtime
	chmod -R u+w $(2)/controller-runtime
	sed -i -e 's/^\([[:space:]]*now:[[:space:]]*\)time\.Now,$$/\1clock.RealClock{}.Now,/' \
	  -e 's/^\([[:space:]]*tick:[[:space:]]*\)time\.Tick,$$/\1clock.QueueAfter(name),/' \
	  $(2)/controller-runtime/pkg/controller/priorityqueue/priorityqueue.go
	test $$(grep -cE '^[[:space:]]*(now:[[:space:]]*clock\.RealClock\{\}\.Now|tick:[[:space:]]*clock\.QueueAfter\(name\)),$$' \
	  $(2)/controller-runtime/pkg/controller/priorityqueue/priorityqueue.go) = 2
	grep -q '^func New\[T comparable\](name string, ' $(2)/controller-runtime/pkg/controller/priorityqueue/priorityqueue.go
	$(GO) mod edit -modfile=$(2)/go.mod -replace=sigs.k8s.io/controller-runtime=$(2)/controller-runtime
endef

$(BIN)/kueue: $(KUEUE_MOD) $(KUBECLOCK_SOURCES)
	$(call kubeclock_utils,examples/kueue,$(KUEUE_BUILD))
	$(call priorityqueue_clock,examples/kueue,$(KUEUE_BUILD))
	CGO_ENABLED=0 $(GO) build -C examples/kueue -trimpath -modfile=$(KUEUE_BUILD)/go.mod \
	  -ldflags='-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$(kueue_version)' -o $@ sigs.k8s.io/kueue/cmd/kueue

# Karpenter's KWOK provider (sigs.k8s.io/karpenter/kwok, a tool of
# examples/karpenter: Karpenter's controllers with the cloud provider for
# fake clouds, which creates a Node for each NodeClaim it launches), on
# Batkube's clock as Kueue is: k8s.io/utils/clock from pkg/simtime/kubeclock,
# controller-runtime's priority queue rewritten. Part of upstream; make
# karpenter builds it alone. sigs.k8s.io/karpenter v1.15.0 requires Go 1.26.9: its
# recipes let the go command fetch that toolchain (a module of the Go
# module proxy) when the local one is older. Karpenter's code is upstream's.
KARPENTER_MOD := examples/karpenter/go.mod examples/karpenter/go.sum examples/upstream.mk
KARPENTER_BUILD := $(CURDIR)/.build/karpenter
karpenter_version = $(shell $(GO) list -C examples/karpenter -m -f '{{.Version}}' sigs.k8s.io/karpenter)

.PHONY: karpenter
karpenter: $(BIN)/karpenter $(BIN)/karpenter-manifests.yaml ## build Karpenter's KWOK provider on Batkube's clock and its CRDs into bin/ (alone; make upstream builds it too)

$(BIN)/karpenter $(BIN)/karpenter-manifests.yaml: export GOTOOLCHAIN := auto

# Karpenter's CRDs as its KWOK chart installs them (kwok/charts/crds:
# NodePool, NodeClaim, NodeOverlay, CapacityBuffer) and the KWOKNodeClass
# CRD (kwok/apis/crds). No webhooks: v1.15.0 validates with CEL rules in its
# CRDs; the chart's RBAC and Deployment are not needed.
$(BIN)/karpenter-manifests.yaml: $(KARPENTER_MOD)
	@mkdir -p $(dir $@)
	dir=$$($(GO) mod download -C examples/karpenter -json sigs.k8s.io/karpenter | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	  test -n "$$dir" && for f in "$$dir"/kwok/charts/crds/*.yaml "$$dir"/kwok/apis/crds/*.yaml; do \
	    sed '/^---$$/d' "$$f"; echo ---; done > $@.tmp
	mv $@.tmp $@

# kubeclock tells the batch window's first timer (a wait for a trigger,
# passive) from its others (work) by its line in Batcher.Wait: the build
# checks that line, so that another version fails here rather than costing a
# step a second or creating NodeClaims late.
$(BIN)/karpenter: $(KARPENTER_MOD) $(KUBECLOCK_SOURCES)
	dir=$$($(GO) mod download -C examples/karpenter -json sigs.k8s.io/karpenter | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	  line=$$(sed -n 's/^[[:space:]]*karpenterBatcherTriggerLine = \([0-9]*\)$$/\1/p' pkg/simtime/kubeclock/simulated.go); \
	  test -n "$$dir" && test -n "$$line" && sed -n "$${line}p" "$$dir/pkg/controllers/provisioning/batcher.go" | \
	  grep -q 'timeout := b.clk.NewTimer(time.Second)' || { echo "Karpenter's Batcher.Wait has not its first timer at line $$line:" \
	  "update karpenterBatcherTriggerLine in pkg/simtime/kubeclock/simulated.go" >&2; exit 1; }
	$(call kubeclock_utils,examples/karpenter,$(KARPENTER_BUILD))
	$(call priorityqueue_clock,examples/karpenter,$(KARPENTER_BUILD))
	CGO_ENABLED=0 $(GO) build -C examples/karpenter -trimpath -modfile=$(KARPENTER_BUILD)/go.mod \
	  -ldflags='-s -w' -o $@ sigs.k8s.io/karpenter/kwok

$(BIN)/kube-scheduler-1.18: $(KUBE_118_MOD) examples/kube-1.18/kube-scheduler/main.go
	$(call upstream_build,examples/kube-1.18) -o $@ ./kube-scheduler

# The QoS scheduler's module pins examples/kube-1.37's versions; its build
# file replaces k8s.io/utils by the same copy, so that it compiles nothing
# of the tree again.
QOS_BUILD := $(CURDIR)/.build/qos
$(QOS_BUILD)/go.mod: $(QOS_MOD) $(KUBE_137_BUILD)/go.mod
	mkdir -p $(QOS_BUILD)
	cp examples/schedulers/qos/go.mod examples/schedulers/qos/go.sum $(QOS_BUILD)/
	$(GO) mod edit -modfile=$(QOS_BUILD)/go.mod -replace=k8s.io/utils=$(KUBE_137_BUILD)/utils

$(BIN)/qos-scheduler: $(QOS_BUILD)/go.mod $(QOS_SOURCES)
	$(call upstream_build,examples/schedulers/qos) -modfile=$(QOS_BUILD)/go.mod -o $@ .

.PHONY: test-qos
# vet, and test the plugin, with the flags of the module's build
# (upstream_build: no cgo, -trimpath): they compile every package the
# plugin imports, and with these flags find them in the build cache of
# bin/qos-scheduler instead of compiling kube-scheduler's tree once more
# (several minutes cold; with the race detector, nine). The race detector
# runs on the module's own shared state (internal/ledger, the accounts the
# plugin's goroutines share, and internal/simtime, its clock), whose
# imports are client-go's and small.
test-qos: $(QOS_BUILD)/go.mod ## vet and unit-test the QoS-driven plugin's module (race detector on its shared state)
	CGO_ENABLED=0 $(GO) vet -C examples/schedulers/qos -trimpath -modfile=$(QOS_BUILD)/go.mod ./...
	CGO_ENABLED=0 $(GO) test -C examples/schedulers/qos -trimpath -count=1 -modfile=$(QOS_BUILD)/go.mod ./qosdriven
	$(GO) test -C examples/schedulers/qos -race -count=1 -modfile=$(QOS_BUILD)/go.mod ./internal/...

# The GPU policies' scheduler (examples/schedulers/gpupolicies): built as
# the QoS scheduler is, from the same copy of k8s.io/utils.
GPUPOLICIES_BUILD := $(CURDIR)/.build/gpupolicies
$(GPUPOLICIES_BUILD)/go.mod: $(GPUPOLICIES_MOD) $(KUBE_137_BUILD)/go.mod
	mkdir -p $(GPUPOLICIES_BUILD)
	cp examples/schedulers/gpupolicies/go.mod examples/schedulers/gpupolicies/go.sum $(GPUPOLICIES_BUILD)/
	$(GO) mod edit -modfile=$(GPUPOLICIES_BUILD)/go.mod -replace=k8s.io/utils=$(KUBE_137_BUILD)/utils

$(BIN)/gpu-scheduler: $(GPUPOLICIES_BUILD)/go.mod $(GPUPOLICIES_SOURCES)
	$(call upstream_build,examples/schedulers/gpupolicies) -modfile=$(GPUPOLICIES_BUILD)/go.mod -o $@ .

# The policies replayed without Kubernetes (plain Go: seconds to build),
# which pkg/e2e's TestGPUPoliciesPlaceTheOpenBSampleArrivals checks runs with.
$(BIN)/gpu-policy-replay: $(GPUPOLICIES_BUILD)/go.mod $(GPUPOLICIES_SOURCES)
	$(call upstream_build,examples/schedulers/gpupolicies) -modfile=$(GPUPOLICIES_BUILD)/go.mod -o $@ ./cmd/gpu-policy-replay

.PHONY: test-gpupolicies
# vet, and test the module, with the flags of its build (as test-qos:
# the packages the plugins import come from bin/gpu-scheduler's build
# cache); the race detector on the policies and the replay (plain Go,
# no Kubernetes import).
test-gpupolicies: $(GPUPOLICIES_BUILD)/go.mod ## vet and unit-test the FGD paper's GPU policies' module (race detector on its plain-Go packages)
	CGO_ENABLED=0 $(GO) vet -C examples/schedulers/gpupolicies -trimpath -modfile=$(GPUPOLICIES_BUILD)/go.mod ./...
	CGO_ENABLED=0 $(GO) test -C examples/schedulers/gpupolicies -trimpath -count=1 -modfile=$(GPUPOLICIES_BUILD)/go.mod ./...
	$(GO) test -C examples/schedulers/gpupolicies -race -count=1 -modfile=$(GPUPOLICIES_BUILD)/go.mod ./policy ./replay ./cmd/...

.PHONY: test-kueue test-karpenter
# vet, and test the Kueue module's own commands (the baseline's generator,
# the manifests' kustomize build) with the flags and build file of
# bin/kueue, so that what they share with it (the standard library,
# k8s.io/api, apimachinery, Kueue's API) comes from its build cache
# instead of being compiled once more (as test-qos does).
test-kueue: $(BIN)/kueue ## vet and unit-test the Kueue module's commands (examples/kueue)
	CGO_ENABLED=0 $(GO) vet -C examples/kueue -trimpath -modfile=$(KUEUE_BUILD)/go.mod ./...
	CGO_ENABLED=0 $(GO) test -C examples/kueue -trimpath -count=1 -modfile=$(KUEUE_BUILD)/go.mod ./...

# The same for the Karpenter module's command (the daily workload's
# generator: the standard library alone, compiled by Karpenter's toolchain
# for bin/karpenter).
test-karpenter: export GOTOOLCHAIN := auto
test-karpenter: $(BIN)/karpenter ## vet and unit-test the Karpenter module's command (examples/karpenter)
	CGO_ENABLED=0 $(GO) vet -C examples/karpenter -trimpath -modfile=$(KARPENTER_BUILD)/go.mod ./...
	CGO_ENABLED=0 $(GO) test -C examples/karpenter -trimpath -count=1 -modfile=$(KARPENTER_BUILD)/go.mod ./...
