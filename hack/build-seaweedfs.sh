#!/usr/bin/env bash
# Build SeaweedFS's weed, the lab's S3-compatible checkpoint store, from the Go module
# pinned by lab/tools/seaweedfs (go.mod/go.sum; nothing prebuilt is downloaded).
# Default build tags only: the embedded leveldb filer store, no cgo, none of the
# optional stores (elastic, gocdk, sqlite, ydb, tarantool, tikv, rclone).
# Output: _output/bin/seaweedfs-<version>/weed, <version> being the module version
# (a pseudo-version). A binary that exists is not rebuilt; FORCE=1 rebuilds.
# Adds or refreshes SEAWEEDFS_BIN=<dir> in _output/bin/lab-binaries.env, keeping the
# other lines, and prints SEAWEEDFS_BIN=<dir> on stdout.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
# shellcheck source=hack/lib/tools.sh
source "${ROOT}/hack/lib/tools.sh"

MODDIR="${ROOT}/lab/tools/seaweedfs"
MODULE="github.com/seaweedfs/seaweedfs"
PKG="${MODULE}/weed"
version="$(tools::modversion "${MODDIR}" "${MODULE}")"
[[ -n "${version}" ]] || die "cannot resolve the ${MODULE} version from ${MODDIR#"${ROOT}"/}/go.mod"
out="${OUTPUT}/bin/seaweedfs-${version}"
# weed -version prints "<size limit> <major.minor> <COMMIT>"; give it the pinned commit.
commit="${version##*-}"
if [[ -x "${out}/weed" && "${FORCE:-0}" != 1 ]]; then
  log::ok "weed ${version} already built"
fi
tools::build "${MODDIR}" "${out}" "-s -w -X ${MODULE}/weed/util/version.COMMIT=${commit}" "${PKG}"
tools::record "SEAWEEDFS_BIN=${out}"
echo "SEAWEEDFS_BIN=${out}"
