#!/usr/bin/env bash
# The lab's e2e suite (e2e/) as make e2e, e2e-smoke and e2e-kind-smoke run it.
#   E2E_LABELS=<filter>      a Ginkgo label filter ('fault && !slow')
#   E2E_FOCUS=<regexp>       only the specs whose text matches
#   E2E_RANDOMIZE=1 | E2E_SEED=N   every spec in a random order (the seed is printed)
#   E2E_ARTIFACTS=<folder>   JUnit and the run's artifacts (default _output/e2e/<time>)
#   E2E_DOWN_ON_FAILURE=1    take the lab down when the suite fails (make test's kind smoke)
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
# shellcheck source=hack/lib/e2e.sh
source "${ROOT}/hack/lib/e2e.sh"

args=()
[[ -z "${E2E_LABELS:-}" ]] || args+=(-ginkgo.label-filter="${E2E_LABELS}")
[[ -z "${E2E_FOCUS:-}" ]] || args+=(-ginkgo.focus="${E2E_FOCUS}")
[[ -z "${E2E_RANDOMIZE:-}${E2E_SEED:-}" ]] || args+=(-ginkgo.randomize-all)
[[ -z "${E2E_SEED:-}" ]] || args+=(-ginkgo.seed="${E2E_SEED}")

rc=0
e2e::run "${args[@]}" || rc=$?
echo "e2e artifacts: ${E2E_ARTIFACTS}"
if [[ ${rc} -ne 0 && "${E2E_DOWN_ON_FAILURE:-}" == 1 ]]; then
  "${OUTPUT}/bin/lab" down >/dev/null 2>&1 || true
fi
exit "${rc}"
