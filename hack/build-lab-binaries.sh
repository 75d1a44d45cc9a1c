#!/usr/bin/env bash
# Build the binaries the hermetic lab runs, from Go modules only (nothing prebuilt is
# downloaded), each from its own tools module under lab/tools/ whose go.sum pins it:
#   lab/tools/kubernetes: kube-apiserver, kube-controller-manager, kube-scheduler, kubectl
#   lab/tools/etcd:       etcd
#   lab/tools/kwok:       kwok, kwokctl
# Output: _output/bin/<module>-<version>/<binary>, e.g. _output/bin/kubernetes-v1.35.8/kube-apiserver.
# A binary that exists is not rebuilt (the folder is keyed by version); FORCE=1 rebuilds.
# Prints the folders, one per line, as NAME=DIR on stdout.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

TOOLS="${ROOT}/lab/tools"
mkdir -p "${OUTPUT}/logs"

# build MODULE_DIR OUT_DIR LDFLAGS PKG...
build() {
  local moddir="$1" out="$2" ldflags="$3"
  shift 3
  mkdir -p "${out}"
  local pkg name start log
  for pkg in "$@"; do
    name="$(basename "${pkg}")"
    [[ "${name}" == v3 ]] && name=etcd
    if [[ -x "${out}/${name}" && "${FORCE:-0}" != 1 ]]; then
      continue
    fi
    start=${SECONDS}
    log="${OUTPUT}/logs/build-${name}.log"
    if ! (cd "${moddir}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${out}/${name}.tmp" "${pkg}") >"${log}" 2>&1; then
      tail -n 20 "${log}" >&2
      die "building ${name} failed; log: ${log#"${ROOT}"/}"
    fi
    mv "${out}/${name}.tmp" "${out}/${name}"
    log::ok "${name} ($((SECONDS - start))s)"
  done
}

modversion() { (cd "$1" && go list -m -f '{{.Version}}' "$2"); }

k8s_version="$(modversion "${TOOLS}/kubernetes" k8s.io/kubernetes)"
k8s_minor="$(cut -d. -f2 <<<"${k8s_version}")"
k8s_out="${OUTPUT}/bin/kubernetes-${k8s_version}"
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X ${pkg}.gitVersion=${k8s_version} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${k8s_minor} -X ${pkg}.gitTreeState=clean"
done
build "${TOOLS}/kubernetes" "${k8s_out}" "${k8s_ldflags}" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl

etcd_version="$(modversion "${TOOLS}/etcd" go.etcd.io/etcd/server/v3)"
etcd_out="${OUTPUT}/bin/etcd-${etcd_version}"
build "${TOOLS}/etcd" "${etcd_out}" "-s -w" go.etcd.io/etcd/server/v3

kwok_version="$(modversion "${TOOLS}/kwok" sigs.k8s.io/kwok)"
kwok_out="${OUTPUT}/bin/kwok-${kwok_version}"
build "${TOOLS}/kwok" "${kwok_out}" "-s -w" \
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
# The lab finds the binaries through this file (lab/config/binaries.go). Lines other
# scripts own (SEAWEEDFS_BIN from hack/build-seaweedfs.sh) are kept.
env_file="${OUTPUT}/bin/lab-binaries.env"
touch "${env_file}"
{
  grep -vE '^(KUBERNETES_BIN|ETCD_BIN|KWOK_BIN)=' "${env_file}" || true
  echo "KUBERNETES_BIN=${k8s_out}"
  echo "ETCD_BIN=${etcd_out}"
  echo "KWOK_BIN=${kwok_out}"
} >"${env_file}.tmp"
mv "${env_file}.tmp" "${env_file}"
cat "${env_file}"
