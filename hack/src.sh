#!/usr/bin/env bash
# Materialise upstream Karmada into _output/src/karmada as a git repository.
#
# Default: the module zip of the version pinned in go.mod, from the Go module
# cache (downloaded through the module proxy and verified against go.sum).
# The zip lacks only vendor/ (not needed: the tree builds in module mode) and
# file modes, so the exec bits of *.sh are restored before the baseline commit.
#
# KARMADA_SRC=/path/to/clone: use a local clone instead; the pinned version's
# tag (or KARMADA_REF) is checked out into _output/src/karmada via git clone.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

VERSION="$(karmada::version)"

if [[ -d "${SRC_DIR}/.git" ]] && git::src rev-parse -q --verify "refs/tags/${VERSION}" >/dev/null; then
  log::ok "upstream ${VERSION} already materialised in ${SRC_DIR#"${ROOT}"/}"
  exit 0
fi
[[ -e "${SRC_DIR}" ]] && die "${SRC_DIR} exists but has no tag ${VERSION}; remove it (make clean-src) and retry"
mkdir -p "$(dirname "${SRC_DIR}")"

if [[ -n "${KARMADA_SRC:-}" ]]; then
  ref="${KARMADA_REF:-${VERSION}}"
  log::step "cloning ${KARMADA_SRC} at ${ref}"
  git clone --quiet --no-checkout "${KARMADA_SRC}" "${SRC_DIR}"
  git::src checkout --quiet -B base "${ref}"
  git::src tag -f "${VERSION}" HEAD >/dev/null
  log::ok "upstream ${ref} from ${KARMADA_SRC} in ${SRC_DIR#"${ROOT}"/}"
  exit 0
fi

log::step "downloading ${KARMADA_MODULE}@${VERSION} through the Go module proxy"
info="$(cd "${ROOT}" && go mod download -json "${KARMADA_MODULE}@${VERSION}")"
moddir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"${info}")"
modtime="$(sed -n 's/^[[:space:]]*"Time": "\(.*\)",*$/\1/p' <<<"${info}" | head -1)"
origin="$(sed -n 's/^[[:space:]]*"Hash": "\(.*\)",*$/\1/p' <<<"${info}" | head -1)"
[[ -d "${moddir}" ]] || die "go mod download gave no directory for ${KARMADA_MODULE}@${VERSION}"
if [[ -z "${modtime}" ]]; then
  modtime="$(go mod download -json "${KARMADA_MODULE}@${VERSION}" >/dev/null; sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$(go env GOMODCACHE)/cache/download/${KARMADA_MODULE}/@v/${VERSION}.info")"
fi

tmp="${SRC_DIR}.tmp.$$"
rm -rf "${tmp}"
cp -r "${moddir}" "${tmp}"
chmod -R u+w "${tmp}"
# The module zip stores every file as 0644; restore the scripts' exec bits.
find "${tmp}" -name '*.sh' -exec chmod +x {} +

(
  cd "${tmp}" || exit 1
  git init --quiet --initial-branch=base
  git config core.autocrlf false
  git add --all
  # shellcheck disable=SC2153 # GIT_COMMITTER_NAME and _EMAIL are exported by lib/init.sh
  export GIT_AUTHOR_NAME="${GIT_COMMITTER_NAME}" GIT_AUTHOR_EMAIL="${GIT_COMMITTER_EMAIL}"
  export GIT_AUTHOR_DATE="${modtime:-2000-01-01T00:00:00Z}" GIT_COMMITTER_DATE="${modtime:-2000-01-01T00:00:00Z}"
  git commit --quiet -m "Karmada ${VERSION} from the Go module zip" \
    -m "Source: ${KARMADA_MODULE}@${VERSION} (upstream commit ${origin:-unknown})." \
    -m "The module zip carries no vendor/ directory and no file modes; exec bits were restored on *.sh."
  git tag "${VERSION}"
)
mv "${tmp}" "${SRC_DIR}"
log::ok "upstream ${VERSION} materialised in ${SRC_DIR#"${ROOT}"/} ($(git::src rev-parse --short HEAD))"
