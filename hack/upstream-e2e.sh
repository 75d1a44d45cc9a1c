#!/usr/bin/env bash
# Run Karmada's own e2e suite (test/e2e/suites/base of the patched tree,
# _output/series/karmada: upstream v1.18.2's suite and the series' own specs) against
# the running lab, with upstream's flags and kubeconfig contexts (as hack/run-e2e.sh
# runs it after hack/local-up-karmada.sh).
#
#   FOCUS=<regexp>       ginkgo focus (default: upstream's failover specs and the
#                        series' own, 'failover testing|failover history testing';
#                        none when LABELS is set)
#   LABELS=<filter>      ginkgo label filter (the series' specs: failover-history)
#   SKIP=<regexp>        ginkgo skip
#   POLL_TIMEOUT=<dur>   upstream's --poll-timeout (default 300s)
#
# The suite's test binary is built once per tree commit into
# _output/bin/upstream-e2e-<commit>/base.test (FORCE=1 rebuilds); the JUnit
# report goes to _output/e2e/upstream-<time>/junit.xml. The lab must be up
# (make lab-up); the suite creates and removes its own namespace.
#
# LAB_PROVIDER=kind: the suite runs in a container on the kind network, where
# the members' API endpoints (their node containers' names, which Karmada's
# Cluster objects carry and upstream's framework dials) resolve, with a
# kubeconfig that reaches karmada-apiserver and the host cluster by their node
# containers' names. Where the lab built its images (no registry answers),
# upstream's workload image (nginx:1.19.0, test/helper/resource.go) cannot be
# pulled: the lab's workload image (lab/cmd/lab-workload, a process that runs
# like the pause container and serves nothing) is loaded into the members under
# that name as a stand-in, so that upstream's Deployments become Ready.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

labels="${LABELS:-}"
focus="${FOCUS:-}"
[[ -z "${focus}" && -z "${labels}" ]] && focus='failover testing|failover history testing'

skip="${SKIP:-}"
poll_timeout="${POLL_TIMEOUT:-300s}"
lab="${OUTPUT}/bin/lab"

[[ -x "${lab}" ]] || die "the lab command is missing: run make lab-up first"
"${lab}" status >/dev/null 2>&1 || die "the lab is not up (or not healthy): run make lab-up, then make lab-status"

# The patched tree the lab's binaries are built from: upstream's suite with the series' own
# specs (PR8).
"${ROOT}/hack/series-tree.sh" >/dev/null || die "could not prepare the series tree ${SERIES_DIR#"${ROOT}"/}"
tree="${SERIES_DIR}"
commit="$(git -C "${tree}" rev-parse --short=12 HEAD)"
# Static (CGO_ENABLED=0): the same binary runs on this host and in a container.
out="${OUTPUT}/bin/upstream-e2e-${commit}-static"
bin="${out}/base.test"
if [[ ! -x "${bin}" || "${FORCE:-0}" == 1 ]]; then
  mkdir -p "${out}" "${OUTPUT}/logs"
  log="${OUTPUT}/logs/build-upstream-e2e.log"
  log::step "building upstream's e2e suite (test/e2e/suites/base at ${commit})"
  start=${SECONDS}
  if ! (cd "${tree}" && CGO_ENABLED=0 go test -c -o "${bin}.tmp" ./test/e2e/suites/base) >"${log}" 2>&1; then
    tail -n 20 "${log}" >&2
    die "building upstream's e2e suite failed; log: ${log#"${ROOT}"/}"
  fi
  mv "${bin}.tmp" "${bin}"
  log::ok "upstream e2e suite ($((SECONDS - start))s)"
fi

# The lab's kubeconfigs follow upstream's conventions: KUBECONFIG holds the
# contexts karmada-apiserver and karmada-host, members are reached through
# their Cluster objects' secrets, as upstream's framework does.
eval "$("${lab}" env)"
# The kind lab, chosen by LAB_PROVIDER or the one that is up (the lab command says so).
provider="${LAB_PROVIDER:-}"
if [[ -z "${provider}" ]] && "${lab}" env 2>&1 >/dev/null | grep -q "LAB_PROVIDER=kind"; then
  provider=kind
fi

# kind::kubeconfig OUT: KUBECONFIG's contexts karmada-apiserver and karmada-host,
# with servers reached on the kind network by their node containers' names
# (karmada-apiserver's NodePort on the host cluster's node, the host cluster's
# API server on 6443); the names the servers' certificates were issued for are
# kept as tls-server-name.
kind::kubeconfig() {
  local out="$1" ctx cluster server host port
  kubectl config view --flatten --raw >"${out}"
  for ctx in karmada-apiserver karmada-host; do
    cluster="$(KUBECONFIG="${out}" kubectl config view -o jsonpath="{.contexts[?(@.name==\"${ctx}\")].context.cluster}")"
    server="$(KUBECONFIG="${out}" kubectl config view -o jsonpath="{.clusters[?(@.name==\"${cluster}\")].cluster.server}")"
    [[ -n "${server}" ]] || die "${KUBECONFIG} has no server for context ${ctx}"
    host="${server#https://}" && host="${host%%:*}"
    port=6443
    [[ "${ctx}" == karmada-apiserver ]] && port="${server##*:}"
    KUBECONFIG="${out}" kubectl config set-cluster "${cluster}" --server="https://${kind_host_node}:${port}" \
      --tls-server-name="${host}" >/dev/null
  done
}

# kind::run_suite: the suite in a container on the kind network (see the top).
kind::run_suite() {
  # The suite's BeforeSuite runs `go env GOPATH` (for karmadactl's path): this
  # host's Go, read-only, is on the container's PATH.
  local goroot
  goroot="$(go env GOROOT)"
  local run=(docker run --rm --name karmada-upstream-e2e --network kind --tmpfs /tmp -e HOME=/tmp
    -e GOTOOLCHAIN=local -e PATH="${goroot}/bin:/usr/local/bin:/usr/bin:/bin" -v "${goroot}:${goroot}:ro"
    -e KUBECONFIG="${artifacts}/in-network.config" -v "${tree}:${tree}:ro" -v "${out}:${out}:ro"
    -v "${artifacts}:${artifacts}" -w "${tree}/test/e2e/suites/base" --entrypoint "${bin}" "${workload_image}")
  docker rm -f karmada-upstream-e2e >/dev/null 2>&1 || true
  trap 'docker rm -f karmada-upstream-e2e >/dev/null 2>&1 || true' EXIT
  "${run[@]}" "${args[@]}"
}

artifacts="${OUTPUT}/e2e/upstream-$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "${artifacts}"
if [[ "${provider}" == kind ]]; then
  # The test binary and this host's Go run in a Linux container.
  [[ "$(uname -s)" == Linux ]] || die "make upstream-e2e on the kind lab runs the suite in a container with this host's binaries: it needs a Linux host"
  eval "$("${lab}" docker env)"
  kind_host_node=karmada-host-control-plane
  workload_image=failover-lab/workload:lab
  upstream_image=nginx:1.19.0
  docker image inspect "${workload_image}" >/dev/null 2>&1 || die "the lab's workload image ${workload_image} is missing: run LAB_PROVIDER=kind make lab-up"
  grep -q "Image: *\"${upstream_image}\"" "${tree}/test/helper/resource.go" ||
    die "upstream's test/helper/resource.go no longer runs ${upstream_image}: update hack/upstream-e2e.sh"
  images="$(sed -n 's/.*"images": *"\([a-z]*\)".*/\1/p' "${LAB_DIR:-${OUTPUT}/lab-kind}/lab.json" 2>/dev/null || true)"
  if [[ "${images}" == build ]]; then
    log::step "no registry: ${upstream_image} on the members is the lab's workload image (a stand-in that runs and serves nothing)"
    docker tag "${workload_image}" "${upstream_image}"
    mapfile -t members < <(KUBECONFIG="${MEMBERS_CONFIG}" kubectl config get-contexts -o name)
    for m in "${members[@]}"; do
      kind load docker-image --name "${m}" "${upstream_image}" >/dev/null || die "kind load of ${upstream_image} into ${m} failed"
    done
  fi
  kind::kubeconfig "${artifacts}/in-network.config"
fi
what=""
[[ -n "${focus}" ]] && what+="focus '${focus}' "
[[ -n "${labels}" ]] && what+="labels '${labels}' "
[[ -n "${skip}" ]] && what+="skip '${skip}'"
log::step "upstream e2e: ${what% }; artifacts in ${artifacts#"${ROOT}"/}"
start=${SECONDS}
args=(-test.v -test.timeout 90m -ginkgo.v -ginkgo.no-color -ginkgo.junit-report "${artifacts}/junit.xml")
[[ -n "${focus}" ]] && args+=(-ginkgo.focus "${focus}")
[[ -n "${labels}" ]] && args+=(-ginkgo.label-filter "${labels}")
[[ -n "${skip}" ]] && args+=(-ginkgo.skip "${skip}")
args+=(--karmada-context=karmada-apiserver --host-context=karmada-host --poll-timeout="${poll_timeout}")
set +o errexit
if [[ "${provider}" == kind ]]; then
  kind::run_suite 2>&1 | tee "${artifacts}/upstream-e2e.log"
else
  # Upstream's specs read fixtures relative to their package, so run from there.
  (cd "${tree}/test/e2e/suites/base" && "${bin}" "${args[@]}") 2>&1 | tee "${artifacts}/upstream-e2e.log"
fi
rc=${PIPESTATUS[0]}
set -o errexit
summary="$(grep -E '^(Ran [0-9]+ of [0-9]+ Specs|(SUCCESS|FAIL)! -- )' "${artifacts}/upstream-e2e.log" | tr '\n' ' ' || true)"
if [[ ${rc} -eq 0 ]]; then
  log::ok "upstream e2e passed in $((SECONDS - start))s: ${summary}"
else
  log::err "upstream e2e failed in $((SECONDS - start))s: ${summary}(log: ${artifacts#"${ROOT}"/}/upstream-e2e.log)"
fi
exit "${rc}"
