# shellcheck shell=bash
# Running the lab's e2e suite (e2e/) from hack/ scripts, as make e2e does.
# Sourced after hack/lib/init.sh.

E2E_ARTIFACTS="${E2E_ARTIFACTS:-${OUTPUT}/e2e/$(date -u +%Y%m%d-%H%M%S)}"
mkdir -p "${E2E_ARTIFACTS}"

# e2e::run ARG...: go test of the e2e suite with the flags make e2e uses (JUnit and
# artifacts in E2E_ARTIFACTS), then ARG... (Ginkgo's and the suite's flags).
e2e::run() {
  (cd "${ROOT}" && go test -v -tags e2e ./e2e/ -count=1 -timeout 90m -args -ginkgo.v \
    -ginkgo.junit-report="${E2E_ARTIFACTS}/junit.xml" -e2e.artifacts-folder="${E2E_ARTIFACTS}" "$@")
}
