# provider-cloudflare-tunnel
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
LDFLAGS   := -s -w -X github.com/context-labs/provider-cloudflare-tunnel/internal/version.Version=$(VERSION)
BIN_DIR   := _output/bin
GOFLAGS_BUILD := -trimpath

export GOFLAGS ?= -modcacherw

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN{FS=":.*##"} /^[a-zA-Z_-]+:.*##/{printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: generate
CHART := cluster/charts/provider-cloudflare-tunnel

generate: ## Regenerate deepcopy, managed-resource methods, reference resolvers and CRDs (also the Helm chart's copy).
	$(GO) generate -tags generate ./apis/...
	$(GO) run ./hack/apidocs package/crds docs/api-reference.md
	rm -rf $(CHART)/crds && cp -r package/crds $(CHART)/crds
	$(GO) mod tidy

.PHONY: check-diff
check-diff: generate ## Fail when generated files are stale.
	@if [ -n "$$(git status --porcelain -- apis package docs $(CHART)/crds go.mod go.sum)" ]; then \
		echo "Generated files are out of date; run 'make generate' and commit:"; \
		git status --porcelain -- apis package docs $(CHART)/crds go.mod go.sum; git diff --stat -- apis package docs $(CHART)/crds go.mod go.sum; exit 1; fi
	@echo "generated files are up to date"

.PHONY: lint
lint: ## go vet, gofmt, example validation and helm lint of the chart.
	$(GO) vet ./...
	cd tools/promrules && GOWORK=off $(GO) vet ./...
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@bash hack/validate-examples.sh
	@helm="$$(bash hack/helm.sh)"; "$$helm" lint --strict $(CHART) && \
		"$$helm" lint --strict $(CHART) --set credentials.create=true,credentials.apiToken=x,providerConfig.create=true,replicas=2,metrics.serviceMonitor.enabled=true,metrics.prometheusRule.enabled=true,metrics.dashboard.enabled=true

.PHONY: helm
helm: ## Build helm (cached by version) and print its path.
	@bash hack/helm.sh

.PHONY: validate-examples
validate-examples: ## Validate examples/ against package/crds with the crossplane CLI.
	@bash hack/validate-examples.sh

.PHONY: crossplane-cli
crossplane-cli: ## Build the crossplane CLI (cached by version) and print its path.
	@bash hack/crossplane-cli.sh

.PHONY: envtest-assets
envtest-assets: ## Build kube-apiserver and etcd for tests (cached by version) and print their folder.
	@bash hack/envtest-bins.sh

.PHONY: test
test: ## Unit and integration tests (real kube-apiserver + etcd; the rest under the race detector), the Helm chart and the alerting rules.
	@assets="$$(bash hack/envtest-bins.sh)"; helm="$$(bash hack/helm.sh)"; \
	echo "control plane binaries: $$assets"; echo "helm: $$helm"; \
	KUBEBUILDER_ASSETS="$$assets" HELM="$$helm" GO="$(GO)" bash hack/test.sh
	cd tools/promrules && GOWORK=off $(GO) test -count=1 ./...

# Not part of `make test`: minutes of wall time against the real rate limit.
# N is the number of Ingresses, STEADY the steady-state window measured after
# convergence; BENCH_VARIANTS (default batching,single) and BENCH_ARGS_<NAME>
# choose the provider processes run side by side; results are described in
# docs/benchmarks.md.
.PHONY: bench
bench: ## Scale benchmark: 1 tunnel + N public Ingresses, the provider binary per variant (batching, single) side by side (N=100 STEADY=5m).
	KUBEBUILDER_ASSETS=$$(bash hack/envtest-bins.sh) BENCH_N=$${N:-100} BENCH_STEADY=$${STEADY:-5m} $(GO) test -run='^$$' -bench=Scale -benchtime=1x -timeout 180m ./internal/bench/

# The provider binary as its own process, with its ServiceAccount's RBAC, on
# the local KWOK cluster against the simulator: faults, restarts, hand edits,
# Pod Security, RBAC and secret hygiene (test/e2e, docs/reliability.md).
.PHONY: e2e
e2e: ## End-to-end suite on a local cluster: faults, restarts, hand edits, security, upgrade from the last release (~13 min).
	@bins="$$(bash hack/local-cluster-bins.sh)"; mkdir -p _output; \
	E2E_CLUSTER_BINS="$$bins" $(GO) test -count=1 -shuffle=on -v -timeout 40m ./test/e2e/ 2>&1 | tee _output/e2e.log

.PHONY: fuzz
fuzz: ## Run every Go fuzz target for FUZZTIME each (default 10s), one at a time, and print a summary table.
	@FUZZTIME=$${FUZZTIME:-10s} bash hack/fuzz.sh

.PHONY: e2e-crossplane
e2e-crossplane: ## Install the package into real Crossplane core on a local cluster, run it as installed, upgrade, uninstall.
	@bash hack/e2e-crossplane.sh

.PHONY: conformance
conformance: ## Gateway API's official conformance suite (test/conformance/go.mod's version) against the cloudflare GatewayClass on a local cluster, through the simulator's edge; report in _output/conformance/report.yaml.
	@bash hack/conformance.sh

.PHONY: build
build: ## Build the provider binary into _output/bin.
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -ldflags '$(LDFLAGS)' -o $(BIN_DIR)/provider ./cmd/provider

# The package build gets the same VERSION/LDFLAGS/GOFLAGS_BUILD as `build`, so
# the binary in the package is the one `make build` makes (and shares its cache).
.PHONY: xpkg
xpkg: ## Build the Crossplane package (no docker): _output/provider-cloudflare-tunnel-<version>.xpkg.
	@VERSION='$(VERSION)' LDFLAGS='$(LDFLAGS)' GOFLAGS_BUILD='$(GOFLAGS_BUILD)' bash hack/xpkg.sh

.PHONY: xpkg-verify
xpkg-verify: ## Check the last built .xpkg: metadata, all CRDs and examples, and the runtime binary runs (XPKG=path to pick one).
	@bash hack/xpkg-verify.sh $(XPKG)

.PHONY: run
run: ## Run the provider against the current kubeconfig (install package/crds first).
	$(GO) run ./cmd/provider --debug

.PHONY: reviewable
reviewable: generate lint test ## Everything a change needs before review.

.PHONY: demo
demo: ## Run the whole product locally: a local cluster, the Cloudflare simulator and the provider (Ctrl-C stops it).
	@bash hack/demo.sh

.PHONY: tour
tour: ## Play the product scene by scene against a running make demo (another terminal); ends with everything deleted.
	@bash hack/tour.sh
