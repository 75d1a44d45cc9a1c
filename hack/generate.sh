#!/usr/bin/env bash
# Regenerate code in a Karmada tree with upstream's own scripts:
# hack/update-codegen.sh (deepcopy, clientsets, applyconfigurations, openapi),
# hack/update-crdgen.sh (CRDs under charts/karmada/_crds) and
# hack/update-swagger-docs.sh (api/openapi-spec/swagger.json), and, when the
# tree has it, hack/update-command-line-flags.sh (docs/command-line-flags).
#
# Usage: hack/generate.sh [TREE]   (default: _output/src/karmada)
# Logs go to _output/logs/generate-*.log.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

tree="${1:-${SRC_DIR}}"
[[ -d "${tree}/hack" ]] || die "${tree} is not a Karmada tree"
logs="${OUTPUT}/logs"
mkdir -p "${logs}"
# The upstream scripts install their generators with `go install` into GOBIN;
# keep them out of the user's GOPATH/bin and cached across runs.
GOMODCACHE="$(go env GOMODCACHE)"
GOCACHE="$(go env GOCACHE)"
export GOMODCACHE GOCACHE
export GOBIN="${OUTPUT}/tools/bin"
export PATH="${GOBIN}:${PATH}"
mkdir -p "${GOBIN}"

scripts=(update-codegen.sh update-crdgen.sh update-swagger-docs.sh)
[[ -x "${tree}/hack/update-command-line-flags.sh" ]] && scripts+=(update-command-line-flags.sh)
for s in "${scripts[@]}"; do
  start=${SECONDS}
  log="${logs}/generate-${s%.sh}.log"
  if ! (cd "${tree}" && "hack/${s}") > "${log}" 2>&1; then
    tail -n 30 "${log}" >&2
    die "hack/${s} failed (log: ${log#"${ROOT}"/})"
  fi
  log::ok "hack/${s} ($((SECONDS - start))s)"
done
