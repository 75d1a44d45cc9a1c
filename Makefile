# Karmada failover lab: a patch series against upstream Karmada (version pinned in
# go.mod), its API module, and the tooling to build, verify and run it.
# `make help` lists the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -o errexit -o nounset -o pipefail -c
.DEFAULT_GOAL := help

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
OUTPUT := $(ROOT)/_output
SERIES_DIR := $(OUTPUT)/series/karmada
GO_TEST_FLAGS ?= -count=1

##@ Main

.PHONY: lab-up
lab-up: build ## Main job. For now: build the patched Karmada binaries the hermetic lab runs (see README).
	@echo "The hermetic lab processes are not part of this version yet; the patched binaries are in _output/bin/patched/."
	@echo "Next: make test (verify the series and run the tests)."

.PHONY: test
test: verify-series test-go verify-apis lint ## Run the whole test suite: series checks, upstream unit tests of touched packages, our Go tests.

##@ Patch series

.PHONY: src
src: ## Materialise upstream Karmada (go.mod's version) into _output/src/karmada as a git repo (KARMADA_SRC=<clone> to use a local clone).
	@hack/src.sh

.PHONY: patch
patch: ## Apply patches/ with git am --3way onto the baseline, on branch failover-history of _output/src/karmada (idempotent; FORCE=1 discards local commits).
	@hack/patch.sh

.PHONY: extract
extract: ## Re-create patches/ from branch failover-history of _output/src/karmada (reproducible).
	@hack/extract.sh

.PHONY: generate
generate: patch ## Run upstream's update-codegen/crdgen/swagger-docs/command-line-flags scripts in _output/src/karmada.
	@hack/generate.sh

.PHONY: verify-series
verify-series: ## Apply the series to a pristine tree; check DCO, reproducible extraction, fresh generated code, gofmt/vet; run upstream unit tests of touched packages.
	@hack/verify-series.sh

.PHONY: verify-generated
verify-generated: verify-series ## Same as verify-series (generated code freshness is one of its checks).

.PHONY: verify-bisect
verify-bisect: ## Every commit of the series builds and passes the tests of the packages it touches, alone (slow; not in CI).
	@hack/verify-bisect.sh

.PHONY: upstream-series
upstream-series: ## Apply the series onto KARMADA_SRC=<clone>'s current branch and run that tree's verify scripts and touched unit tests.
	@hack/upstream-series.sh

##@ Build

.PHONY: build
build: ## Build patched binaries into _output/bin/patched/ (cached by version + series hash).
	@hack/build.sh patched

.PHONY: build-upstream
build-upstream: ## Build the same binaries from unpatched upstream into _output/bin/upstream/.
	@hack/build.sh upstream

##@ API module (apis/)

.PHONY: generate-apis
generate-apis: ## Regenerate deepcopy, clientset, listers, informers and CRDs of apis/.
	@hack/update-codegen.sh

.PHONY: verify-apis
verify-apis: ## Check the generated files of apis/ are fresh.
	@hack/verify-codegen.sh

##@ Our code

.PHONY: test-go
test-go: ## Go tests of this repository (apis/ drift test against the series tree included).
	@hack/series-tree.sh >/dev/null
	FAILOVER_LAB_REQUIRE_TREE=1 KARMADA_TREE=$(SERIES_DIR) go test $(GO_TEST_FLAGS) ./...

.PHONY: lint
lint: ## gofmt, go vet and bash -n on this repository's code.
	@test -z "$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go'))" || { gofmt -l $$(git ls-files -co --exclude-standard '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	go vet ./...
	@for f in $$(git ls-files -co --exclude-standard '*.sh') .ci/run; do bash -n "$$f" || exit 1; done
	@echo "lint: ok"

##@ Housekeeping

.PHONY: clean
clean: ## Remove build outputs and the series/upstream trees (keeps _output/src/karmada and its local commits).
	rm -rf $(OUTPUT)/bin $(OUTPUT)/series $(OUTPUT)/upstream $(OUTPUT)/logs

.PHONY: clean-src
clean-src: ## Remove _output/src/karmada too (local commits not extracted are lost).
	rm -rf $(OUTPUT)/src

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)
