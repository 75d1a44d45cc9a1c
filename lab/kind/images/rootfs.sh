# shellcheck shell=bash
# Debian root file systems of the kind lab's images (debootstrap from Debian's
# packages), cached as tarballs in _output/kind/rootfs/ by suite, mirror and
# packages. Source it after hack/lib/init.sh; do not run it.
ROOTFS_MIRROR="${LAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
ROOTFS_SUITE=bookworm

# rootfs NAME PACKAGES: prints the tarball of a minbase root file system with
# PACKAGES (comma-separated), building it when it is not cached.
rootfs() {
  local name="$1" packages="$2" pkey tarball dir
  pkey="$(echo "${ROOTFS_SUITE} ${ROOTFS_MIRROR} ${packages}" | sha256sum | cut -c1-12)"
  tarball="${OUTPUT}/kind/rootfs/${name}-${ROOTFS_SUITE}-${pkey}.tar"
  mkdir -p "${OUTPUT}/kind/rootfs" "${OUTPUT}/logs"
  if [[ ! -s "${tarball}" ]]; then
    dir="$(mktemp -d "${OUTPUT}/kind/rootfs/.${name}.XXXXXX")"
    local log="${OUTPUT}/logs/debootstrap-${name}.log" start=${SECONDS}
    if ! debootstrap --variant=minbase --include="${packages}" "${ROOTFS_SUITE}" "${dir}" "${ROOTFS_MIRROR}" >"${log}" 2>&1; then
      tail -n 20 "${log}" >&2
      rm -rf "${dir}"
      die "debootstrap ${ROOTFS_SUITE} (${name}) failed; log: ${log#"${ROOT}"/}"
    fi
    rm -rf "${dir}"/var/cache/apt/archives/*.deb "${dir}"/var/lib/apt/lists/*
    tar -C "${dir}" --numeric-owner -cf "${tarball}.tmp" .
    rm -rf "${dir}"
    mv "${tarball}.tmp" "${tarball}"
    log::ok "Debian ${ROOTFS_SUITE} root file system ${name} ($((SECONDS - start))s)" >&2
  fi
  echo "${tarball}"
}
