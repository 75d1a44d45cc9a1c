#!/usr/bin/env bash
# Build the command-line tools the kind lab (LAB_PROVIDER=kind) drives, from Go
# modules only (nothing prebuilt is downloaded):
#   kind    sigs.k8s.io/kind, pinned by the project's go.mod (its default node image
#           is the lab's kindest/node image, see lab/kind/clusters.go)
#   helm    helm.sh/helm/v4, pinned by lab/tools/helm
#   kubectl k8s.io/kubernetes, pinned by lab/tools/kubernetes (the hermetic lab's)
# Output: _output/bin/<module>-<version>/<binary>; an existing binary is kept unless
# FORCE=1. Records KIND_BIN, HELM_BIN and KUBERNETES_BIN in _output/bin/lab-binaries.env
# and prints them as NAME=DIR lines.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
# shellcheck source=hack/lib/tools.sh
source "${ROOT}/hack/lib/tools.sh"

kind_version="$(tools::modversion "${ROOT}" sigs.k8s.io/kind)"
kind_out="${OUTPUT}/bin/kind-${kind_version}"
tools::build "${ROOT}" "${kind_out}" "-s -w" sigs.k8s.io/kind

helm_version="$(tools::modversion "${ROOT}/lab/tools/helm" helm.sh/helm/v4)"
helm_out="${OUTPUT}/bin/helm-${helm_version}"
tools::build "${ROOT}/lab/tools/helm" "${helm_out}" "-s -w -X helm.sh/helm/v4/internal/version.version=${helm_version}" helm.sh/helm/v4/cmd/helm

k8s_version="$(tools::modversion "${ROOT}/lab/tools/kubernetes" k8s.io/kubernetes)"
k8s_out="${OUTPUT}/bin/kubernetes-${k8s_version}"
tools::build "${ROOT}/lab/tools/kubernetes" "${k8s_out}" "$(tools::k8s_ldflags "${k8s_version}")" k8s.io/kubernetes/cmd/kubectl

tools::record "KIND_BIN=${kind_out}" "HELM_BIN=${helm_out}" "KUBERNETES_BIN=${k8s_out}"
printf '%s\n' "KIND_BIN=${kind_out}" "HELM_BIN=${helm_out}" "KUBERNETES_BIN=${k8s_out}"
