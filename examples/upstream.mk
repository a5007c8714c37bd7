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

.PHONY: upstream
upstream: $(BIN)/kube-scheduler $(BIN)/kubectl $(BIN)/kube-controller-manager $(BIN)/kube-scheduler-1.18 $(BIN)/qos-scheduler ## build kube-scheduler 1.37 and 1.18.19, kubectl 1.37, kube-controller-manager 1.37 and kube-scheduler 1.37 with the QoS-driven plugin into bin/

$(BIN)/kube-scheduler: $(KUBE_137_MOD) examples/kube-1.37/kube-scheduler/main.go
	$(call upstream_build,examples/kube-1.37) -o $@ ./kube-scheduler

$(BIN)/kubectl: $(KUBE_137_MOD) examples/kube-1.37/kubectl/main.go
	$(call upstream_build,examples/kube-1.37) -o $@ ./kubectl

$(BIN)/kube-controller-manager: $(KUBE_137_MOD) examples/kube-1.37/kube-controller-manager/main.go
	$(call upstream_build,examples/kube-1.37) -o $@ ./kube-controller-manager

$(BIN)/kube-scheduler-1.18: $(KUBE_118_MOD) examples/kube-1.18/kube-scheduler/main.go
	$(call upstream_build,examples/kube-1.18) -o $@ ./kube-scheduler

$(BIN)/qos-scheduler: $(QOS_MOD) $(QOS_SOURCES)
	$(call upstream_build,examples/schedulers/qos) -o $@ .

.PHONY: test-qos
test-qos: ## vet and unit-test the QoS-driven plugin's module (race detector on)
	$(GO) vet -C examples/schedulers/qos ./...
	$(GO) test -C examples/schedulers/qos -race -count=1 ./...
