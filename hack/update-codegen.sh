#!/usr/bin/env bash
# Copyright The Karmada Failover Lab Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# Regenerate everything derived from the hand-written types under apis/:
#   - apis/work/v1alpha2/zz_generated.deepcopy.go   (deepcopy-gen)
#   - apis/generated/{clientset,listers,informers}  (client-gen, lister-gen,
#     informer-gen; read-only clients, see apis/work/v1alpha2/doc.go)
#   - apis/crds/*.yaml                              (controller-gen; only used by
#     apis/work/v1alpha2/drift_test.go, never installed into a cluster)
#
# The generators come from k8s.io/code-generator at the version pinned by go.mod
# (the same release Karmada v1.18.2 uses), driven by its kube_codegen.sh, and from
# controller-gen v0.20.0 (the version upstream's
# hack/update-crdgen.sh uses). They are installed into _output/tools/bin, not
# into GOPATH/bin.
#
# Usage: hack/update-codegen.sh
# Environment:
#   TOOLS_BIN  where generators are installed (default: <repo>/_output/tools/bin)

set -o errexit
set -o nounset
set -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${ROOT}"

MODULE="$(go list -m)"
CONTROLLER_GEN_PKG="sigs.k8s.io/controller-tools/cmd/controller-gen"
CONTROLLER_GEN_VERSION="v0.20.0"
BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"

TOOLS_BIN="${TOOLS_BIN:-${ROOT}/_output/tools/bin}"
mkdir -p "${TOOLS_BIN}"
TOOLS_BIN="$(cd "${TOOLS_BIN}" && pwd -P)"
export GOBIN="${TOOLS_BIN}"
export PATH="${GOBIN}:${PATH}"

step() { printf ' • %s\n' "$*" >&2; }

# k8s.io/code-generator: the version go.mod pins (a tool directive keeps it there).
go mod download k8s.io/code-generator
CODEGEN_VERSION="$(go list -m -f '{{.Version}}' k8s.io/code-generator)"
CODEGEN_DIR="$(go list -m -f '{{.Dir}}' k8s.io/code-generator)"
[[ -f "${CODEGEN_DIR}/kube_codegen.sh" ]] || {
  echo "kube_codegen.sh not found in ${CODEGEN_DIR:-<empty module dir>}" >&2
  exit 1
}
step "code-generator ${CODEGEN_VERSION} (${CODEGEN_DIR})"
# shellcheck source=/dev/null
source "${CODEGEN_DIR}/kube_codegen.sh"

# kube_codegen.sh recomputes GOBIN from `go env GOBIN`, which is our export.
[[ "${GOBIN}" == "${TOOLS_BIN}" ]] || { echo "GOBIN is ${GOBIN}, want ${TOOLS_BIN}" >&2; exit 1; }

step "deepcopy"
kube::codegen::gen_helpers \
  --boilerplate "${BOILERPLATE}" \
  "${ROOT}/apis"

step "clientset, listers, informers"
kube::codegen::gen_client \
  --with-watch \
  --one-input-api work \
  --output-dir "${ROOT}/apis/generated" \
  --output-pkg "${MODULE}/apis/generated" \
  --boilerplate "${BOILERPLATE}" \
  "${ROOT}/apis"

step "CRDs (controller-gen ${CONTROLLER_GEN_VERSION})"
if [[ "$("${GOBIN}/controller-gen" --version 2>/dev/null || true)" != "Version: ${CONTROLLER_GEN_VERSION}" ]]; then
  GO111MODULE=on go install "${CONTROLLER_GEN_PKG}@${CONTROLLER_GEN_VERSION}"
fi
rm -f "${ROOT}"/apis/crds/*.yaml
"${GOBIN}/controller-gen" crd paths=./apis/work/... output:crd:dir=./apis/crds
