# opctl — run `make help` for the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X opctl.dev/opctl/internal/version.version=$(VERSION) -X opctl.dev/opctl/internal/version.commit=$(COMMIT)

STATICCHECK_VERSION := v0.8.2
CONTROLLER_TOOLS_VERSION := v0.21.0
TOOLS_DIR := $(CURDIR)/bin/tools
STATICCHECK := $(TOOLS_DIR)/staticcheck-$(STATICCHECK_VERSION)
CONTROLLER_GEN := $(TOOLS_DIR)/controller-gen-$(CONTROLLER_TOOLS_VERSION)

# Extra flags for go test, e.g. make test GOTESTFLAGS='-run Smoke -v'.
GOTESTFLAGS ?=

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/opctl, static (no cgo: its startup RSS is 55 MiB, not 88).
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/opctl ./cmd/opctl

.PHONY: testbin
testbin: ## Build the test control plane binaries into bin/k8s/<version> (cached).
	@hack/testbin.sh

.PHONY: test-deps
test-deps: ## Install the Debian packages the tests need (docker-registry, prometheus, redis-server, redis-tools, prometheus-redis-exporter).
	@hack/test-deps.sh

.PHONY: test
test: testbin test-deps ## Run all tests (unit, integration, e2e) on one shared test control plane.
	$(GO) run ./hack/testcluster -- $(GO) test -count=1 -timeout 75m $(GOTESTFLAGS) ./...

.PHONY: test-unit
test-unit: ## Run the tests that need no control plane and no bin/ (CI runs it on a fresh clone); cluster tests skip with the reason.
	OPCTL_SKIP_CLUSTER=1 $(GO) test -count=1 $(GOTESTFLAGS) ./...

.PHONY: bench-sample
bench-sample: testbin ## Benchmark the sample operator: 1,000 KVStores on a test control plane.
	$(GO) run ./hack/testcluster -- $(GO) test -run '^$$' -bench KVStore1000 -benchtime 3x -timeout 30m ./operators/sample/internal/controller/

.PHONY: fuzz
FUZZTIME ?= 10m
fuzz: ## Run every fuzz target for FUZZTIME each (make fuzz FUZZTIME=10m); not part of make test.
	FUZZTIME=$(FUZZTIME) hack/fuzz.sh

.PHONY: bench-tenancy
N ?= 100
bench-tenancy: testbin ## Benchmark the tenancy controller provisioning N tenants, then the same objects made with no controller, each on a fresh control plane (make bench-tenancy N=1000).
	$(GO) run ./hack/testcluster -- $(GO) test -run '^$$' -bench 'TenancyProvision$$' -benchtime 1x -timeout 60m ./pkg/tenancy/ -args -tenants=$(N)
	$(GO) run ./hack/testcluster -- $(GO) test -run '^$$' -bench 'TenancyDirect$$' -benchtime 1x -timeout 60m ./pkg/tenancy/ -args -tenants=$(N)

.PHONY: bench-shards
bench-shards: testbin ## Benchmark N tenants provisioned by 1 and then by 3 sharded controller replicas on one test control plane (make bench-shards N=1000).
	$(GO) run ./hack/testcluster -- $(GO) test -run '^$$' -bench 'TenancySharded$$' -benchtime 1x -timeout 90m ./pkg/tenancy/ -args -tenants=$(N)

.PHONY: bench-helm-apply
bench-helm-apply: testbin ## Benchmark one install of the sample chart with Helm 3 (create) and Helm 4 (server-side apply): kube-apiserver CPU and requests per install.
	$(GO) run ./hack/testcluster -- $(GO) test -run '^$$' -bench 'HelmApply$$' -benchtime 1x -timeout 30m ./pkg/tenancy/

.PHONY: bench-package
bench-package: build testbin ## Benchmark opctl package of 2.0 MB of CRDs beside the kustomize build of the same overlay; with CORPUS=<folder of local clones>, whole processes on three corpus projects: CPU against kubectl kustomize, failing above 1.3x.
	$(GO) test -run '^$$' -bench 'PackageLargeCRDs' -count 6 ./pkg/packaging/
	@if [ -n "$(CORPUS)" ]; then CORPUS="$(CORPUS)" $(GO) run ./hack/corpus -opctl bin/opctl -bench; else echo "bench-package: corpus ratios skipped: set CORPUS to a folder of local clones (see hack/corpus/main.go)"; fi

.PHONY: bench-publish
bench-publish: test-deps ## Benchmark opctl publish of the sample (bundle, catalog, chart) to a local registry.
	$(GO) test -run '^$$' -bench Publish -benchtime 20x -count 5 ./pkg/publish/

.PHONY: publish
publish: build ## Build opctl's controller image and the sample and memcached operators' images from source and push them with their charts, bundles and catalog (make publish REGISTRY=host[:port]/path [PUBLISH_FLAGS='--insecure']); no Docker.
	@test -n "$(REGISTRY)" || { echo "make publish needs REGISTRY=host[:port]/path, like REGISTRY=localhost:5000/opctl" >&2; exit 2; }
	bin/opctl publish . --out bin/publish/opctl --registry "$(REGISTRY)" --catalog bin/publish/catalog $(PUBLISH_FLAGS)
	bin/opctl publish operators/sample --out bin/publish/sample --registry "$(REGISTRY)" --catalog bin/publish/catalog $(PUBLISH_FLAGS)
	bin/opctl publish operators/memcached --out bin/publish/memcached --registry "$(REGISTRY)" --catalog bin/publish/catalog $(PUBLISH_FLAGS)

.PHONY: corpus
CORPUS ?=
INSTALL ?=
corpus: build testbin ## Run opctl package and its checks on the public projects of hack/corpus/projects.txt (make corpus CORPUS=<folder of local clones> [INSTALL=1]); not part of make test.
	CORPUS="$(CORPUS)" INSTALL="$(INSTALL)" $(GO) run ./hack/corpus -opctl bin/opctl

.PHONY: cluster
cluster: testbin ## Start a test control plane for interactive use (Ctrl-C stops it).
	$(GO) run ./hack/testcluster

$(STATICCHECK):
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	@mv $(TOOLS_DIR)/staticcheck $(STATICCHECK)

$(CONTROLLER_GEN):
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)
	@mv $(TOOLS_DIR)/controller-gen $(CONTROLLER_GEN)

SAMPLE := operators/sample
KIT_TESTAPI := pkg/operatorkit/internal/testapi

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code, CRDs and RBAC from the markers, and charts/ and bundle/ with opctl package.
	$(CONTROLLER_GEN) object paths=./$(SAMPLE)/api/... paths=./$(KIT_TESTAPI)/...
	$(CONTROLLER_GEN) crd paths=./$(SAMPLE)/api/... output:crd:artifacts:config=$(SAMPLE)/config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./$(SAMPLE)/internal/controller/... output:rbac:artifacts:config=$(SAMPLE)/config/rbac
	$(CONTROLLER_GEN) crd paths=./$(KIT_TESTAPI)/... output:crd:artifacts:config=$(KIT_TESTAPI)/testdata/crd
	$(CONTROLLER_GEN) object paths=./pkg/tenancy/api/...
	$(CONTROLLER_GEN) crd paths=./pkg/tenancy/api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./pkg/tenancy/... output:rbac:artifacts:config=config/rbac
	$(GO) run ./cmd/opctl kit generate --dir operators/memcached >/dev/null
	$(GO) run ./cmd/opctl package $(SAMPLE) --out . >/dev/null
	$(GO) run ./cmd/opctl package . --out . >/dev/null
	$(GO) run ./hack/checksdoc

.PHONY: generate-adminrole
generate-adminrole: testbin ## Regenerate the built-in admin ClusterRole's rules (offline tenancy check) from a test control plane; TestClusterTenancyCheckOwnerRole fails when they are stale.
	$(GO) run ./hack/testcluster -- $(GO) run ./hack/adminrole

.PHONY: verify-generated verify-generate
verify-generated: $(CONTROLLER_GEN) ## Fail when generated files (code, CRDs, RBAC, charts, bundles) do not match their sources.
	@hack/verify-generate.sh $(MAKE)

verify-generate: verify-generated

.PHONY: lint
lint: $(STATICCHECK) verify-generated ## Check formatting, go vet, staticcheck and generated files.
	@out="$$(gofmt -l $$(find . -name '*.go' -not -path './bin/*' -not -path './.git/*'))"; \
	  if [[ -n "$$out" ]]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	bash -n hack/testbin.sh hack/verify-generate.sh hack/test-deps.sh hack/fuzz.sh .ci/run

.PHONY: clean
clean: ## Remove bin/ except the cached test control plane.
	rm -rf bin/opctl bin/tools

.PHONY: bench-startup
bench-startup: ## Print the median CPU (user+sys) of `opctl --help` beside a Go hello-world built the same way; not part of make test.
	@mkdir -p bin/bench/hellosrc
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/bench/opctl ./cmd/opctl
	printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' > bin/bench/hellosrc/main.go
	cd bin/bench/hellosrc && CGO_ENABLED=0 GO111MODULE=off $(GO) build -trimpath -o ../hello main.go
	$(GO) run ./hack/cpumedian -n 21 bin/bench/opctl --help :: bin/bench/hello
	@echo "the floor of the libraries opctl links (hack/startfloor: Helm SDK, client-go, controller-runtime, kustomize, operator-framework validators; empty main, collector as set by GOGC):"
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/bench/startfloor ./hack/startfloor
	$(GO) run ./hack/cpumedian -n 21 bin/bench/opctl --help :: bin/bench/startfloor

.PHONY: bench-validate
bench-validate: ## Print the median CPU of `opctl validate --suite all` on the sample bundle beside hack/validateref (the operator-framework validators alone), start-up apart; not part of make test.
	@mkdir -p bin/bench
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/bench/opctl ./cmd/opctl
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/bench/validateref ./hack/validateref
	$(GO) run ./hack/cpumedian -n 9 bin/bench/opctl validate --suite all bundle/sample-operator :: bin/bench/validateref bundle/sample-operator
	@echo "start-up (opctl --help, validateref with no arguments):"
	$(GO) run ./hack/cpumedian -n 9 bin/bench/opctl --help :: bin/bench/validateref
