#!/usr/bin/env bash
# Apply patches/ (in the order of patches/series) with `git am --3way` onto the
# upstream baseline tag, on branch failover-history of _output/src/karmada.
#
# Idempotent: when the branch already carries the current series, nothing is
# done. Local commits on the branch (edits not yet extracted with
# `make extract`) are never thrown away unless FORCE=1.
# shellcheck source=hack/lib/init.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

"${ROOT}/hack/src.sh"
VERSION="$(karmada::version)"
STATE="${SRC_DIR}/.git/failover-lab-series"
want="$(series::hash)"

if git::src rev-parse -q --verify "refs/heads/${PATCH_BRANCH}" >/dev/null && [[ "${FORCE:-0}" != 1 ]]; then
  head="$(git::src rev-parse "refs/heads/${PATCH_BRANCH}")"
  read -r have_hash have_head < "${STATE}" 2>/dev/null || { have_hash=""; have_head=""; }
  if [[ "${have_hash}" == "${want}" && "${have_head}" == "${head}" ]]; then
    log::ok "series ${want} already applied on ${PATCH_BRANCH} ($(series::list | wc -l) patches)"
    exit 0
  fi
  if [[ "${have_hash}" == "${want}" ]]; then
    n="$(git::src rev-list --count "${have_head}..${head}" 2>/dev/null || echo '?')"
    log::ok "series ${want} applied; ${PATCH_BRANCH} has local changes (${n} commits) - run 'make extract' to update patches/"
    exit 0
  fi
  if [[ "${have_head}" != "${head}" ]]; then
    die "${PATCH_BRANCH} has commits that are not in patches/ and patches/ changed too; run 'make extract' to keep them, or FORCE=1 to discard them"
  fi
fi

if [[ -n "$(git::src status --porcelain --untracked-files=no)" && "${FORCE:-0}" != 1 ]]; then
  die "uncommitted changes in ${SRC_DIR#"${ROOT}"/}; commit them (then make extract) or FORCE=1 to discard"
fi

git::src am --abort >/dev/null 2>&1 || true
git::src checkout --quiet --force -B "${PATCH_BRANCH}" "refs/tags/${VERSION}"
series::am "${SRC_DIR}" || die "patch ${SERIES_FAILED} does not apply onto ${VERSION}"
count="${SERIES_APPLIED}"
echo "${want} $(git::src rev-parse HEAD)" > "${STATE}"
log::ok "applied ${count} patches onto ${VERSION} on branch ${PATCH_BRANCH} (series ${want})"
