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

# LAB_PROVIDER=kind: the kind lab (machines with Docker) - preflight first, so a
# machine without a Docker engine fails within seconds; no hermetic lab binaries.
KIND_LAB := $(filter kind,$(LAB_PROVIDER))
# LAB_KARMADA=upstream runs the unpatched build (its karmadactl joins the members).
KARMADA_BUILD := $(if $(filter upstream,$(LAB_KARMADA)),build-upstream,build)
# LAB_RESTORE=kyverno: the members restore with Kyverno, built from its module (the kind
# lab with pulled images installs its chart and images from Kyverno's registries instead).
KYVERNO_BUILD := $(if $(filter kyverno,$(LAB_RESTORE)),kyverno,)

.PHONY: lab-up
lab-up: $(if $(KIND_LAB),kind-preflight kind-tools,) $(KARMADA_BUILD) $(if $(KIND_LAB),,lab-binaries) $(KYVERNO_BUILD) lab-cli flink-job ## Main job: build everything from source, then start the hermetic lab (Karmada + LAB_MEMBERS kwok members on 127.0.0.1). Idempotent. LAB_PROVIDER=kind: the kind lab (needs Docker). LAB_RESTORE=kyverno: Kyverno restores (built first).
	@$(LAB) up

.PHONY: test
# The kind lab's smoke runs where Docker can be had: an engine's client or dockerd
# (hack/install-prereqs.sh --kind installs Debian's docker.io; CI does).
KIND_SMOKE ?= $(shell { command -v dockerd || command -v docker; } >/dev/null 2>&1 && echo 1)
TEST_STEPS := verify-series test-go test-flink verify-kwok-stages verify-apis lint verify-kind-lab e2e-smoke $(if $(KIND_SMOKE),e2e-kind-smoke,kind-smoke-skipped)
test: ## Run the whole test suite, one step after the other, with each step's time at the end: series checks, upstream unit tests of touched packages, our Go tests, the Flink job's Java tests, the lab's kwok stages, the kind lab's static checks, the lab smoke e2e, then the kind lab's smoke where Docker can be had.
	@MAKE="$(MAKE)" hack/test-steps.sh $(TEST_STEPS)

##@ Lab (LAB_MEMBERS=3, LAB_KARMADA=patched|upstream, LAB_RETAIN=1; see docs/LAB.md)

LAB := $(OUTPUT)/bin/lab

.PHONY: lab-cli
# Build the lab command (lab/cmd/lab), the link between Karmada and each member (lab/cmd/lab-link), the pod that runs Kyverno (lab/cmd/lab-pod), the FlinkDeployment runner (lab/cmd/flink-runner) and the restore webhook (restore/) into _output/bin/.
lab-cli:
	@go build -o $(LAB) ./lab/cmd/lab
	@go build -o $(OUTPUT)/bin/lab-link ./lab/cmd/lab-link
	@go build -o $(OUTPUT)/bin/lab-pod ./lab/cmd/lab-pod
	@go build -o $(OUTPUT)/bin/flink-runner ./lab/cmd/flink-runner
	@go build -o $(OUTPUT)/bin/flink-restore-webhook ./restore/cmd/flink-restore-webhook
	@CGO_ENABLED=0 go build -o $(OUTPUT)/bin/lab-oci-runtime ./lab/cmd/lab-oci-runtime

.PHONY: flink-job
# Build the Flink job jar (lab/flink, Maven; jars from Maven Central) into lab/flink/target/.
flink-job:
	@hack/build-flink-job.sh

.PHONY: test-flink
# Java tests of the Flink job (lab/flink: restore without loss on a MiniCluster, the s3:// file system), then its jar.
test-flink:
	@hack/build-flink-job.sh --test

.PHONY: lab-down
lab-down: lab-cli ## Stop every process of the lab by PID (data and logs stay in _output/lab).
	@$(LAB) down

.PHONY: lab-status
lab-status: lab-cli ## Table of the lab's components: PID, address, healthy.
	@$(LAB) status

.PHONY: lab-restore
lab-restore: $(if $(filter kyverno,$(MODE)),kyverno,) lab-cli ## Show, or switch with MODE=webhook|kyverno, how the lab's members restore (hermetic or kind) a failed-over FlinkDeployment (the restore webhook, or Kyverno calling its /locate).
	@$(LAB) restore $(MODE)

##@ kind lab (LAB_PROVIDER=kind: machines with Docker; see docs/KIND.md)

.PHONY: kyverno
kyverno: ## Build Kyverno's admission controller and init container from its Go module (lab/tools/kyverno) into _output/bin/kyverno-<version>/, with its CRDs and chart (cold: about 9 CPU-minutes; cached by version).
	@hack/build-kyverno.sh

.PHONY: kind-preflight
# Choose the kind lab's Docker engine and say why (LAB_DOCKER; the lab's own dockerd is started where the machine's cannot run kind), then check it and the host tools of the kind lab; fails within seconds without them.
kind-preflight: lab-cli
	@$(LAB) docker start
	@eval "$$($(LAB) docker env)" && lab/kind/preflight.sh

.PHONY: kind-tools
# Build kind, helm and kubectl from Go modules into _output/bin/ (hack/build-kind-tools.sh).
kind-tools:
	@hack/build-kind-tools.sh >/dev/null

.PHONY: kind-images
kind-images: lab-cli ## Build the kind lab's images on this machine, no registry needed (what LAB_IMAGES=build uses; root): the node image - Debian by debootstrap, kind's layout, Kubernetes and the images kubeadm asks for built from Go modules - cached by a key of its inputs.
	@$(LAB) docker start
	@eval "$$($(LAB) docker env)" && lab/kind/images/build-node-image.sh

.PHONY: verify-kind-lab
# Static checks of the kind lab (no Docker needed): kind configs through kind's code, karmadactl init config, manifests against their schemas, pinned images, fast failure without Docker.
verify-kind-lab:
	@hack/verify-kind-lab.sh

##@ Benchmarks

.PHONY: bench
bench: build build-upstream lab-binaries lab-cli ## Failover cost, upstream vs patched on one lab, alternating (BENCH_N=2000, BENCH_ROUNDS=2; BENCH_QUICK=1: 200; BENCH_RESUME=1 continues an interrupted result). Result: _output/bench/result.json, written after each round; last line JSON with drain_ratio.
	@$(LAB) status >/dev/null 2>&1 || $(LAB) up
	go run ./bench -n $(if $(BENCH_QUICK),200,$(or $(BENCH_N),2000)) --rounds $(or $(BENCH_ROUNDS),2) --out _output/bench/result.json $(if $(BENCH_RESUME),--resume)

.PHONY: bench-report
# The tables of docs/benchmarks.md from a benchmark result (BENCH_RESULT=_output/bench/result.json): medians with min–max, per-round ratios, the writes that differ.
bench-report:
	@go run ./bench report $(or $(BENCH_RESULT),_output/bench/result.json)

.PHONY: bench-admission
# On the running hermetic lab: what a member's API server pays to admit a FlinkDeployment on each restore path, the restore webhook against Kyverno, in one run (BENCH_ADMISSION_N=200 dry-run creates per path, object and round; 2 rounds); latency, the API server's webhook histogram, resident memory. Result: _output/bench/admission.json.
bench-admission: kyverno lab-cli
	@go run ./bench admission -n $(or $(BENCH_ADMISSION_N),200)

##@ End-to-end (E2E_LABELS, E2E_FOCUS; the suite brings the lab up when it is not up, and down again)

ifndef E2E_ARTIFACTS
E2E_ARTIFACTS := $(OUTPUT)/e2e/$(shell date -u +%Y%m%d-%H%M%S)
endif
.PHONY: e2e
e2e: $(KARMADA_BUILD) $(if $(KIND_LAB),kind-preflight kind-tools flink-job kyverno,lab-binaries kyverno) lab-cli ## All e2e scenarios (narrow with E2E_LABELS='fault && !slow' or E2E_FOCUS=regexp; E2E_RANDOMIZE=1 or E2E_SEED=N: every spec in a random order, the seed printed); JUnit and artifacts in _output/e2e/<time>/.
	@E2E_ARTIFACTS=$(E2E_ARTIFACTS) E2E_LABELS="$(E2E_LABELS)" E2E_FOCUS="$(E2E_FOCUS)" E2E_RANDOMIZE=$(E2E_RANDOMIZE) E2E_SEED=$(E2E_SEED) hack/e2e.sh

.PHONY: flink-demo
flink-demo: build lab-binaries $(KYVERNO_BUILD) lab-cli flink-job ## On the lab (started if needed, left running): a FlinkDeployment fails over when its member crashes and resumes from its latest checkpoint; prints the timeline and "restored from … (latest completed: chk-M) · missing=… · duplicated=… · reprocessed=… · rto=… · by webhook|kyverno" (LAB_RESTORE=kyverno: Kyverno restores; a running lab is switched). Fails unless nothing is missing or duplicated in the job's committed output.
	@E2E_ARTIFACTS=$(E2E_ARTIFACTS) hack/flink-demo.sh

FLINK_RTO_RUNS ?= 10
.PHONY: flink-rto
flink-rto: build lab-binaries lab-cli flink-job ## On the lab (started if needed, left running): FLINK_RTO_RUNS (10) Flink failovers by a member crash and as many application failovers; prints each run's RTO phases, p50/p90 and the committed output's missing/duplicated (go run ./bench flink-rto). Fails unless every run restored the latest completed checkpoint exactly once.
	@E2E_ARTIFACTS=$(E2E_ARTIFACTS) FLINK_RTO_RUNS=$(FLINK_RTO_RUNS) hack/flink-rto.sh

.PHONY: upstream-e2e
upstream-e2e: lab-cli ## Karmada's own e2e suite (test/e2e/suites/base of the patched tree _output/series/karmada: upstream's and the series' failover-history specs) against the running lab, with upstream's flags and contexts (FOCUS=regexp, default upstream's failover specs and the series'; LABELS=filter, e.g. failover-history; SKIP=regexp).
	@FOCUS="$(FOCUS)" LABELS="$(LABELS)" SKIP="$(SKIP)" hack/upstream-e2e.sh

.PHONY: verify-kwok-stages
# The lab's kwok stages (image pulls that fail, crashing containers, failing probes) driven through kwok's own stage code at the pinned version.
verify-kwok-stages:
	cd lab/tools/kwok && go test $(GO_TEST_FLAGS) ./stages/

.PHONY: kind-smoke-skipped
kind-smoke-skipped:
	@echo "make test: no docker and no dockerd on this machine: the kind lab's smoke is skipped (hack/install-prereqs.sh --kind installs Debian's docker.io)"

.PHONY: e2e-kind-smoke
e2e-kind-smoke: E2E_ARTIFACTS := $(OUTPUT)/e2e/kind-smoke-$(shell date -u +%Y%m%d-%H%M%S)
# The kind lab's smoke (make test runs it after the hermetic one): brings the kind lab up (LAB_IMAGES=auto: every image built where no registry answers), first placement, a taint failover, a member crash by docker kill, the S3 store scaled down and up, a Flink job's member killed (restored from its latest checkpoint, committed output verified); then takes it down.
e2e-kind-smoke: build lab-cli kind-preflight kind-tools flink-job
	@LAB_PROVIDER=kind E2E_DOWN_ON_FAILURE=1 E2E_ARTIFACTS=$(E2E_ARTIFACTS) \
	  E2E_LABELS='((smoke || ci || crash) && !flink) || (flink && ci && crash && !kyverno)' hack/e2e.sh

.PHONY: e2e-smoke
# The subset make test runs (labels smoke || ci): brings the lab up if needed, propagates a Deployment, fails a cluster over by a NoExecute taint (history and marker), crashes a Flink job's member (restore from the latest checkpoint, committed output verified), tears down.
e2e-smoke: build lab-binaries lab-cli flink-job
	@E2E_ARTIFACTS=$(E2E_ARTIFACTS) E2E_LABELS='smoke || ci' hack/e2e.sh

##@ Patch series

.PHONY: src
# Materialise upstream Karmada (go.mod's version) into _output/src/karmada as a git repo (KARMADA_SRC=<clone> to use a local clone).
src:
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
# Same as verify-series (generated code freshness is one of its checks).
verify-generated: verify-series

.PHONY: verify-bisect
verify-bisect: ## Every commit of the series builds, is gofmt-ed, passes the tests of the packages it touches and (when it changes flags or gates) upstream's verify-command-line-flags, alone (slow; not in CI; BISECT_FROM=N starts at commit N).
	@hack/verify-bisect.sh

.PHONY: upstream-series
upstream-series: ## Apply the series onto KARMADA_SRC=<clone>'s current branch and run that tree's verify scripts and touched unit tests.
	@hack/upstream-series.sh

##@ Build

.PHONY: build
build: ## Build patched binaries into _output/bin/patched/ (cached by version + series hash).
	@hack/build.sh patched

.PHONY: build-upstream
# Build the same binaries from unpatched upstream into _output/bin/upstream/.
build-upstream:
	@hack/build.sh upstream

.PHONY: lab-binaries
# Build kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd, kwok, kwokctl and SeaweedFS (weed) from Go modules (lab/tools/*).
lab-binaries:
	@hack/build-lab-binaries.sh >/dev/null
	@hack/build-seaweedfs.sh >/dev/null

# API module (apis/)

.PHONY: generate-apis
# Regenerate deepcopy, clientset, listers, informers and CRDs of apis/.
generate-apis:
	@hack/update-codegen.sh

.PHONY: verify-apis
# Check the generated files of apis/ are fresh.
verify-apis:
	@hack/verify-codegen.sh

##@ Our code

.PHONY: test-go
# Go tests of this repository (apis/ drift test against the series tree included).
test-go:
	@hack/series-tree.sh >/dev/null
	FAILOVER_LAB_REQUIRE_TREE=1 KARMADA_TREE=$(SERIES_DIR) go test $(GO_TEST_FLAGS) ./...

.PHONY: lint
lint: ## gofmt, go vet (and GOOS=darwin go vet of the process handling) and shellcheck on this repository's code.
	@test -z "$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go'))" || { gofmt -l $$(git ls-files -co --exclude-standard '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	go vet ./...
	go vet -tags e2e ./e2e/...
	GOOS=darwin go vet ./lab/internal/... ./lab/cmd/lab-pod
	@hack/shellcheck.sh
	@echo "lint: ok"

##@ Housekeeping

.PHONY: clean
clean: ## Remove build outputs and the series/upstream trees (keeps _output/src/karmada and its local commits).
	rm -rf $(OUTPUT)/bin $(OUTPUT)/series $(OUTPUT)/upstream $(OUTPUT)/logs

.PHONY: clean-src
# Remove _output/src/karmada too (local commits not extracted are lost).
clean-src:
	rm -rf $(OUTPUT)/src

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)
