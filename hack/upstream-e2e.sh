#!/usr/bin/env bash
# Run Karmada's own e2e suite (test/e2e/suites/base of the pinned upstream tree,
# _output/src/karmada) against the running lab, with upstream's flags and
# kubeconfig contexts (as hack/run-e2e.sh runs it after hack/local-up-karmada.sh).
#
#   FOCUS=<regexp>       ginkgo focus (default: 'failover testing')
#   SKIP=<regexp>        ginkgo skip
#   POLL_TIMEOUT=<dur>   upstream's --poll-timeout (default 300s)
#
# The suite's test binary is built once per tree commit into
# _output/bin/upstream-e2e-<commit>/base.test (FORCE=1 rebuilds); the JUnit
# report goes to _output/e2e/upstream-<time>/junit.xml. The lab must be up
# (make lab-up); the suite creates and removes its own namespace.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

focus="${FOCUS:-failover testing}"
skip="${SKIP:-}"
poll_timeout="${POLL_TIMEOUT:-300s}"
lab="${OUTPUT}/bin/lab"

[[ -x "${lab}" ]] || die "the lab command is missing: run make lab-up first"
"${lab}" status >/dev/null 2>&1 || die "the lab is not up (or not healthy): run make lab-up, then make lab-status"

[[ -d "${SRC_DIR}/test/e2e/suites/base" ]] || "${ROOT}/hack/src.sh"
commit="$(git -C "${SRC_DIR}" rev-parse --short=12 HEAD)"
out="${OUTPUT}/bin/upstream-e2e-${commit}"
bin="${out}/base.test"
if [[ ! -x "${bin}" || "${FORCE:-0}" == 1 ]]; then
  mkdir -p "${out}" "${OUTPUT}/logs"
  log="${OUTPUT}/logs/build-upstream-e2e.log"
  log::step "building upstream's e2e suite (test/e2e/suites/base at ${commit})"
  start=${SECONDS}
  if ! (cd "${SRC_DIR}" && go test -c -o "${bin}.tmp" ./test/e2e/suites/base) >"${log}" 2>&1; then
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
artifacts="${OUTPUT}/e2e/upstream-$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "${artifacts}"
what="focus '${focus}'"
[[ -n "${skip}" ]] && what+=", skip '${skip}'"
log::step "upstream e2e: ${what}; artifacts in ${artifacts#"${ROOT}"/}"
start=${SECONDS}
args=(-test.v -test.timeout 90m -ginkgo.v -ginkgo.no-color -ginkgo.focus "${focus}" -ginkgo.junit-report "${artifacts}/junit.xml")
[[ -n "${skip}" ]] && args+=(-ginkgo.skip "${skip}")
# Upstream's specs read fixtures relative to their package, so run from there.
cd "${SRC_DIR}/test/e2e/suites/base"
set +o errexit
"${bin}" "${args[@]}" --karmada-context=karmada-apiserver --host-context=karmada-host \
  --poll-timeout="${poll_timeout}" 2>&1 | tee "${artifacts}/upstream-e2e.log"
rc=${PIPESTATUS[0]}
set -o errexit
summary="$(grep -E '^(Ran [0-9]+ of [0-9]+ Specs|(SUCCESS|FAIL)! -- )' "${artifacts}/upstream-e2e.log" | tr '\n' ' ' || true)"
if [[ ${rc} -eq 0 ]]; then
  log::ok "upstream e2e passed in $((SECONDS - start))s: ${summary}"
else
  log::err "upstream e2e failed in $((SECONDS - start))s: ${summary}(log: ${artifacts#"${ROOT}"/}/upstream-e2e.log)"
fi
exit "${rc}"
