#!/usr/bin/env bash
# Build Karmada binaries with upstream's own hack/build.sh.
#
#   hack/build.sh patched    -> _output/bin/patched/   from the series tree (upstream + patches/)
#   hack/build.sh upstream   -> _output/bin/upstream/  from the pristine upstream tag
#
# The version string tells them apart: the patched build reports
# <base>-failoverhistory.<series hash>, the upstream build the base tag.
# A build is skipped when the binaries exist and were built for the same version
# and series (stamp file in the output folder). FORCE=1 rebuilds.
# BINARIES overrides the list of binaries.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

flavour="${1:-patched}"
VERSION="$(karmada::version)"
BINARIES="${BINARIES:-karmada-controller-manager karmada-scheduler karmada-webhook karmada-aggregated-apiserver karmadactl}"
platform="$(go env GOOS)/$(go env GOARCH)"

case "${flavour}" in
  patched) key="${VERSION}-failoverhistory.$(series::hash)" ;;
  upstream) key="${VERSION}" ;;
  *) die "usage: hack/build.sh patched|upstream" ;;
esac
tree="$(karmada::tree "${flavour}")"

out="${OUTPUT}/bin/${flavour}"
stamp="${out}/.build-stamp"
mkdir -p "${out}"
want="${key} ${BINARIES}"
missing=0
for b in ${BINARIES}; do [[ -x "${out}/${b}" ]] || missing=1; done
if [[ "${FORCE:-0}" != 1 && ${missing} == 0 && -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]]; then
  log::ok "${flavour} binaries ${key} are up to date in ${out#"${ROOT}"/}"
  exit 0
fi

mkdir -p "${OUTPUT}/logs"
for b in ${BINARIES}; do
  start=${SECONDS}
  log="${OUTPUT}/logs/build-${flavour}-${b}.log"
  # Upstream's build adds version ldflags from git; the -X given last wins.
  if ! (cd "${tree}" && BUILD_PLATFORMS="${platform}" \
        LDFLAGS="-X github.com/karmada-io/karmada/pkg/version.gitVersion=${key}" \
        hack/build.sh "${b}") >"${log}" 2>&1; then
    tail -n 20 "${log}" >&2
    die "building ${b} (${flavour}) failed; log: ${log#"${ROOT}"/}"
  fi
  # Copy, then rename: a running lab keeps the binary it started with.
  cp "${tree}/_output/bin/${platform}/${b}" "${out}/${b}.new"
  mv -f "${out}/${b}.new" "${out}/${b}"
  log::ok "${b} ${key} ($((SECONDS - start))s)"
done
echo "${want}" > "${stamp}"
log::ok "${flavour} binaries in ${out#"${ROOT}"/}"
