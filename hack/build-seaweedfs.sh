#!/usr/bin/env bash
# Build SeaweedFS's weed, the lab's S3-compatible checkpoint store, from the Go module
# pinned by lab/tools/seaweedfs (go.mod/go.sum; nothing prebuilt is downloaded).
# Default build tags only: the embedded leveldb filer store, no cgo, none of the
# optional stores (elastic, gocdk, sqlite, ydb, tarantool, tikv, rclone).
# Output: _output/bin/seaweedfs-<version>/weed, <version> being the module version
# (a pseudo-version). A binary that exists is not rebuilt; FORCE=1 rebuilds.
# Adds or refreshes SEAWEEDFS_BIN=<dir> in _output/bin/lab-binaries.env, keeping the
# other lines, and prints SEAWEEDFS_BIN=<dir> on stdout.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

MODDIR="${ROOT}/lab/tools/seaweedfs"
MODULE="github.com/seaweedfs/seaweedfs"
PKG="${MODULE}/weed"
mkdir -p "${OUTPUT}/logs"

version="$(cd "${MODDIR}" && go list -m -f '{{.Version}}' "${MODULE}")"
[[ -n "${version}" ]] || die "cannot resolve the ${MODULE} version from ${MODDIR#"${ROOT}"/}/go.mod"
out="${OUTPUT}/bin/seaweedfs-${version}"
# weed -version prints "<size limit> <major.minor> <COMMIT>"; give it the pinned commit.
commit="${version##*-}"
ldflags="-s -w -X ${MODULE}/weed/util/version.COMMIT=${commit}"

mkdir -p "${out}"
if [[ -x "${out}/weed" && "${FORCE:-0}" != 1 ]]; then
  log::ok "weed ${version} already built"
else
  start=${SECONDS}
  log="${OUTPUT}/logs/build-weed.log"
  if ! (cd "${MODDIR}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${out}/weed.tmp" "${PKG}") >"${log}" 2>&1; then
    tail -n 20 "${log}" >&2
    die "building weed failed; log: ${log#"${ROOT}"/}"
  fi
  mv "${out}/weed.tmp" "${out}/weed"
  log::ok "weed ${version} ($((SECONDS - start))s)"
fi

# The lab finds the binaries through this file (lab/config/binaries.go);
# hack/build-lab-binaries.sh writes the other lines.
env_file="${OUTPUT}/bin/lab-binaries.env"
touch "${env_file}"
{
  grep -v '^SEAWEEDFS_BIN=' "${env_file}" || true
  echo "SEAWEEDFS_BIN=${out}"
} >"${env_file}.tmp"
mv "${env_file}.tmp" "${env_file}"
echo "SEAWEEDFS_BIN=${out}"
