#!/usr/bin/env bash
# Build the binaries the hermetic lab runs, from Go modules only (nothing prebuilt is
# downloaded), each from its own tools module under lab/tools/ whose go.sum pins it:
#   lab/tools/kubernetes: kube-apiserver, kube-controller-manager, kube-scheduler, kubectl
#   lab/tools/etcd:       etcd
#   lab/tools/kwok:       kwok, kwokctl
# Output: _output/bin/<module>-<version>/<binary>, e.g. _output/bin/kubernetes-v1.35.8/kube-apiserver.
# A binary that exists is not rebuilt (the folder is keyed by version); FORCE=1 rebuilds.
# Prints the folders, one per line, as NAME=DIR on stdout.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
# shellcheck source=hack/lib/tools.sh
source "${ROOT}/hack/lib/tools.sh"

TOOLS="${ROOT}/lab/tools"
k8s_version="$(tools::modversion "${TOOLS}/kubernetes" k8s.io/kubernetes)"
k8s_out="${OUTPUT}/bin/kubernetes-${k8s_version}"
k8s_ldflags="$(tools::k8s_ldflags "${k8s_version}")"
tools::build "${TOOLS}/kubernetes" "${k8s_out}" "${k8s_ldflags}" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl

etcd_version="$(tools::modversion "${TOOLS}/etcd" go.etcd.io/etcd/server/v3)"
etcd_out="${OUTPUT}/bin/etcd-${etcd_version}"
tools::build "${TOOLS}/etcd" "${etcd_out}" "-s -w" go.etcd.io/etcd/server/v3

kwok_version="$(tools::modversion "${TOOLS}/kwok" sigs.k8s.io/kwok)"
kwok_out="${OUTPUT}/bin/kwok-${kwok_version}"
tools::build "${TOOLS}/kwok" "${kwok_out}" "-s -w" \
  sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl

# kwokctl drops its default stages when a configuration file names any Stage, so the
# lab passes them back explicitly, copied from the same module version.
kwok_dir="$(cd "${TOOLS}/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
mkdir -p "${kwok_out}/stages"
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
  pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  install -m 0644 "${kwok_dir}/kustomize/stage/${f}" "${kwok_out}/stages/$(basename "${f}")"
done

log::ok "lab binaries: kubernetes ${k8s_version}, etcd ${etcd_version}, kwok ${kwok_version}"
tools::record "KUBERNETES_BIN=${k8s_out}" "ETCD_BIN=${etcd_out}" "KWOK_BIN=${kwok_out}"
cat "${OUTPUT}/bin/lab-binaries.env"
