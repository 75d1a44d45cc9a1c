#!/usr/bin/env bash
# Build Kyverno's admission controller (github.com/kyverno/kyverno/cmd/kyverno) and its init
# container (cmd/kyverno-init, the chart's kyvernopre, for the kind lab) from its Go
# module, pinned by lab/tools/kyverno (go.sum), into _output/bin/kyverno-<version>/kyverno.
# The folder is keyed by version: an existing binary is not rebuilt (FORCE=1 rebuilds).
# Cold build: about 9 CPU-minutes and 2.2 GB of memory (lab/tools/kyverno/README.md).
# Its CRDs (config/crds of the same module) go to _output/bin/kyverno-<version>/crds/, which
# the hermetic lab installs in every member with LAB_RESTORE=kyverno; its chart to
# _output/bin/kyverno-<version>/chart/.
# Records KYVERNO_BIN in _output/bin/lab-binaries.env.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
# shellcheck source=hack/lib/tools.sh
source "${ROOT}/hack/lib/tools.sh"

dir="${ROOT}/lab/tools/kyverno"
version="$(tools::modversion "${dir}" github.com/kyverno/kyverno)"
out="${OUTPUT}/bin/kyverno-${version}"
tools::build "${dir}" "${out}" "-s -w -X github.com/kyverno/kyverno/pkg/version.BuildVersion=${version}" \
  github.com/kyverno/kyverno/cmd/kyverno github.com/kyverno/kyverno/cmd/kyverno-init
kyverno_dir="$(cd "${dir}" && go list -m -f '{{.Dir}}' github.com/kyverno/kyverno)"
mkdir -p "${out}/crds"
for f in "${kyverno_dir}"/config/crds/{kyverno,policies.kyverno.io,policyreport,reports}/*.yaml; do
  install -m 0644 "${f}" "${out}/crds/$(basename "${f}")"
done
# Its Helm chart (charts/kyverno of the same module, the chart the kind lab's pulled path
# installs from Kyverno's repository) for the kind lab with built images, less the
# openreports dependency: off by default (openreports.installCrds), its chart comes
# only from its repository, and Helm refuses a chart whose listed dependency is missing.
rm -rf "${out}/chart"
cp -r "${kyverno_dir}/charts/kyverno" "${out}/chart"
chmod -R u+w "${out}/chart"
awk '/^  - name: openreports$/ {skip = 1; next} skip && /^  - name:|^[^ ]/ {skip = 0} !skip' \
  "${kyverno_dir}/charts/kyverno/Chart.yaml" >"${out}/chart/Chart.yaml"
grep -q 'name: openreports' "${out}/chart/Chart.yaml" && die "could not drop openreports from ${out#"${ROOT}"/}/chart/Chart.yaml"
crds=("${out}"/crds/*.yaml)
log::ok "kyverno ${version} (${#crds[@]} CRDs, its chart)"
tools::record "KYVERNO_BIN=${out}"
