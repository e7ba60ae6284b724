# opctl — run `make help` for the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X opctl.dev/opctl/internal/version.version=$(VERSION) -X opctl.dev/opctl/internal/version.commit=$(COMMIT)

STATICCHECK_VERSION := v0.8.2
TOOLS_DIR := $(CURDIR)/bin/tools
STATICCHECK := $(TOOLS_DIR)/staticcheck-$(STATICCHECK_VERSION)

# Extra flags for go test, e.g. make test GOTESTFLAGS='-run Smoke -v'.
GOTESTFLAGS ?=

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/opctl.
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/opctl ./cmd/opctl

.PHONY: testbin
testbin: ## Build the test control plane binaries into bin/k8s/<version> (cached).
	@hack/testbin.sh

.PHONY: test
test: testbin ## Run all tests (unit, integration, e2e) on one shared test control plane.
	$(GO) run ./hack/testcluster -- $(GO) test -count=1 $(GOTESTFLAGS) ./...

.PHONY: test-unit
test-unit: ## Run the tests that need no control plane; cluster tests skip.
	OPCTL_SKIP_CLUSTER=1 $(GO) test -count=1 $(GOTESTFLAGS) ./...

.PHONY: cluster
cluster: testbin ## Start a test control plane for interactive use (Ctrl-C stops it).
	$(GO) run ./hack/testcluster

$(STATICCHECK):
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	@mv $(TOOLS_DIR)/staticcheck $(STATICCHECK)

.PHONY: lint
lint: $(STATICCHECK) ## Check formatting, go vet and staticcheck.
	@out="$$(gofmt -l $$(find . -name '*.go' -not -path './bin/*' -not -path './.git/*'))"; \
	  if [[ -n "$$out" ]]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	bash -n hack/testbin.sh

.PHONY: clean
clean: ## Remove bin/ except the cached test control plane.
	rm -rf bin/opctl bin/tools
