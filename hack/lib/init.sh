#!/usr/bin/env bash
# Common settings for the hack/ scripts. Source it; do not run it.
#
# The base Karmada version is set in exactly one place: the root go.mod
# (require github.com/karmada-io/karmada <version>). Everything else derives from it.

set -o errexit
set -o nounset
set -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
OUTPUT="${ROOT}/_output"
KARMADA_MODULE="github.com/karmada-io/karmada"
# The materialised upstream tree (a git repository) that the series is applied to.
SRC_DIR="${SRC_DIR:-${OUTPUT}/src/karmada}"
# The branch of SRC_DIR that carries the series.
PATCH_BRANCH="${PATCH_BRANCH:-failover-history}"
PATCHES_DIR="${PATCHES_DIR:-${ROOT}/patches}"
SERIES_FILE="${SERIES_FILE:-${PATCHES_DIR}/series}"

# Identity used for commits the pipeline creates itself (the baseline commit and
# git am's committer). Author identity of the series comes from the patches.
export GIT_COMMITTER_NAME="${GIT_COMMITTER_NAME:-Karmada Failover Lab}"
export GIT_COMMITTER_EMAIL="${GIT_COMMITTER_EMAIL:-failover-lab@karmada.invalid}"

log::step() { printf ' • %s\n' "$*" >&2; }
log::ok() { printf ' ✓ %s\n' "$*" >&2; }
log::err() { printf ' ✗ %s\n' "$*" >&2; }
die() { log::err "$*"; exit 1; }

# karmada::version prints the Karmada version pinned by the root go.mod.
karmada::version() {
  (cd "${ROOT}" && go list -m -f '{{.Version}}' "${KARMADA_MODULE}")
}

# series::packages RANGE prints the Go packages the commits of RANGE touch, as ./dir.
# series::unit_packages and series::e2e_packages read them on standard input and
# print those of unit tests, and those of Karmada's e2e suites (test/e2e/...),
# which need a running Karmada: the scripts compile and vet those, not run them.
series::packages() {
  git diff --name-only "$1" -- '*.go' | xargs -r -n1 dirname | sort -u | sed 's|^|./|'
}
series::unit_packages() { grep -v -e '^\./test/e2e\(/\|$\)' || true; }
series::e2e_packages() { grep -e '^\./test/e2e\(/\|$\)' || true; }

# series::list prints the patch files of the series, in order.
series::list() {
  [[ -f "${SERIES_FILE}" ]] || return 0
  grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "${SERIES_FILE}"
}

# sha256 prints the SHA-256 of standard input: GNU sha256sum, or macOS's shasum.
sha256() {
  if command -v sha256sum >/dev/null; then sha256sum; else shasum -a 256; fi
}

# series::hash prints a short hash over the series file and every patch in it.
# It keys build caches and appears in the patched binaries' version string.
series::hash() {
  {
    cat "${SERIES_FILE}" 2>/dev/null || true
    local p
    for p in $(series::list); do cat "${PATCHES_DIR}/${p}"; done
  } | sha256 | cut -c1-10
}

# series::am DIR [EACH]: apply every patch of the series, in order, to the branch
# checked out in DIR with `git am --3way --keep-cr`, committed as the pipeline's
# identity; EACH, when given, is run with each patch's name once it applied. On
# the first patch that does not apply: the am is aborted, its output's last lines
# and the conflicting files are printed, SERIES_FAILED names the patch, and it
# returns 1. Prints nothing else; the number applied is in SERIES_APPLIED.
series::am() {
  local dir="$1" each="${2:-}" p out conflicts
  # shellcheck disable=SC2034 # read by the callers
  SERIES_FAILED="" SERIES_APPLIED=0
  git -C "${dir}" am --abort >/dev/null 2>&1 || true
  for p in $(series::list); do
    # shellcheck disable=SC2034 # read by the callers
    [[ -f "${PATCHES_DIR}/${p}" ]] || { SERIES_FAILED="${p}"; log::err "patches/series names ${p}, which does not exist"; return 1; }
    if ! out="$(git -C "${dir}" -c user.name="${GIT_COMMITTER_NAME}" -c user.email="${GIT_COMMITTER_EMAIL}" \
          am --3way --keep-cr --quiet "${PATCHES_DIR}/${p}" 2>&1)"; then
      conflicts="$(git -C "${dir}" diff --name-only --diff-filter=U 2>/dev/null | sed 's/^/    /')"
      git -C "${dir}" am --abort >/dev/null 2>&1 || true
      printf '%s\n' "${out}" | tail -n 15 >&2
      [[ -n "${conflicts}" ]] && printf '  conflicting files:\n%s\n' "${conflicts}" >&2
      # shellcheck disable=SC2034 # read by the callers
      SERIES_FAILED="${p}"
      return 1
    fi
    SERIES_APPLIED=$((SERIES_APPLIED + 1))
    [[ -n "${each}" ]] && "${each}" "${p}"
  done
  return 0
}

# series::require_signoff DIR RANGE: die naming the first commit of RANGE in DIR
# without a Signed-off-by line (the DCO upstream's CI checks).
series::require_signoff() {
  local dir="$1" range="$2" sha
  while read -r sha; do
    git -C "${dir}" log -1 --format=%B "${sha}" | grep -q '^Signed-off-by: ' ||
      die "commit $(git -C "${dir}" log -1 --format='%h %s' "${sha}") has no Signed-off-by line"
  done < <(git -C "${dir}" rev-list "${range}")
}

# git::src runs git in the materialised tree.
git::src() { git -C "${SRC_DIR}" "$@"; }

# The series tree: pristine upstream plus patches/ applied with git am, never edited
# by hand. Verification, the upstream unit tests and the patched build run there,
# so that they see exactly what patches/ holds, whatever is going on in SRC_DIR.
SERIES_DIR="${SERIES_DIR:-${OUTPUT}/series/karmada}"
# The upstream tree: the pristine baseline, for the side-by-side upstream build.
UPSTREAM_DIR="${UPSTREAM_DIR:-${OUTPUT}/upstream/karmada}"

# tree::checkout DIR REF: make DIR a clean clone of SRC_DIR checked out at REF.
tree::checkout() {
  local dir="$1" ref="$2"
  if [[ ! -d "${dir}/.git" ]]; then
    mkdir -p "$(dirname "${dir}")"
    git clone --quiet --no-checkout "${SRC_DIR}" "${dir}"
  fi
  git -C "${dir}" fetch --quiet --tags "${SRC_DIR}" >/dev/null 2>&1 || true
  git -C "${dir}" am --abort >/dev/null 2>&1 || true
  git -C "${dir}" checkout --quiet --force --detach "${ref}"
  git -C "${dir}" clean --quiet -fdx -e '/_output/'
}

# karmada::tree FLAVOUR: prepare the Karmada tree of a build and print its path:
# patched - the series tree (upstream + patches/), upstream - the pristine tag.
karmada::tree() {
  case "$1" in
    patched)
      "${ROOT}/hack/series-tree.sh" >/dev/null
      echo "${SERIES_DIR}"
      ;;
    upstream)
      "${ROOT}/hack/src.sh" >/dev/null
      local version
      version="$(karmada::version)"
      if [[ "$(git -C "${UPSTREAM_DIR}" rev-parse HEAD 2>/dev/null)" != "$(git::src rev-parse "refs/tags/${version}")" ]]; then
        tree::checkout "${UPSTREAM_DIR}" "refs/tags/${version}" >&2
      fi
      echo "${UPSTREAM_DIR}"
      ;;
    *) die "unknown Karmada build ${1:-}; want patched or upstream" ;;
  esac
}
