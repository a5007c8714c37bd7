# Upstream Kubernetes binaries, built unmodified from the Kubernetes Go modules
# (examples/kube-1.37 and examples/kube-1.18 are their own Go modules, so the
# main module stays lean). Included by the top-level Makefile.
UPSTREAM_BUILD := CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w'

.PHONY: upstream
upstream: $(BIN)/kube-scheduler $(BIN)/kubectl $(BIN)/kube-scheduler-1.18 ## build kube-scheduler 1.37 and 1.18.19 and kubectl 1.37 into bin/

$(BIN)/kube-scheduler: examples/kube-1.37/go.mod examples/kube-1.37/go.sum examples/kube-1.37/kube-scheduler/main.go
	cd examples/kube-1.37 && $(UPSTREAM_BUILD) -o $@ ./kube-scheduler

$(BIN)/kubectl: examples/kube-1.37/go.mod examples/kube-1.37/go.sum examples/kube-1.37/kubectl/main.go
	cd examples/kube-1.37 && $(UPSTREAM_BUILD) -o $@ ./kubectl

$(BIN)/kube-scheduler-1.18: examples/kube-1.18/go.mod examples/kube-1.18/go.sum examples/kube-1.18/kube-scheduler/main.go
	cd examples/kube-1.18 && $(UPSTREAM_BUILD) -o $@ ./kube-scheduler
