#!/usr/bin/env bash
# Build Kyverno's admission controller (github.com/kyverno/kyverno/cmd/kyverno) from its Go
# module, pinned by lab/tools/kyverno (go.sum), into _output/bin/kyverno-<version>/kyverno.
# The folder is keyed by version: an existing binary is not rebuilt (FORCE=1 rebuilds).
# Cold build: about 9 CPU-minutes and 2.2 GB of memory (lab/tools/kyverno/README.md).
# Its CRDs (config/crds of the same module) go to _output/bin/kyverno-<version>/crds/, which
# the hermetic lab installs in every member with LAB_RESTORE=kyverno.
# Records KYVERNO_BIN in _output/bin/lab-binaries.env.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
# shellcheck source=hack/lib/tools.sh
source "${ROOT}/hack/lib/tools.sh"

dir="${ROOT}/lab/tools/kyverno"
version="$(tools::modversion "${dir}" github.com/kyverno/kyverno)"
out="${OUTPUT}/bin/kyverno-${version}"
tools::build "${dir}" "${out}" "-s -w -X github.com/kyverno/kyverno/pkg/version.BuildVersion=${version}" \
  github.com/kyverno/kyverno/cmd/kyverno
kyverno_dir="$(cd "${dir}" && go list -m -f '{{.Dir}}' github.com/kyverno/kyverno)"
mkdir -p "${out}/crds"
for f in "${kyverno_dir}"/config/crds/{kyverno,policies.kyverno.io,policyreport,reports}/*.yaml; do
  install -m 0644 "${f}" "${out}/crds/$(basename "${f}")"
done
crds=("${out}"/crds/*.yaml)
log::ok "kyverno ${version} (${#crds[@]} CRDs)"
tools::record "KYVERNO_BIN=${out}"
